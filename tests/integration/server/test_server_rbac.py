"""RBAC through HTTP: a user in a group is denied, then allowed once bound; escalation checks;
access and rules reviews; ``kubectl auth can-i`` with kubectl 1.20 and 1.33.

One server for the module; the test user ``alice`` (group ``devs``) authenticates with a static
token registered on the server's authenticator.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import ServerThread, make_api_client, raw_request

from kubeloop.server.app import ServerConfig
from kubeloop.server.auth.authenticator import Authenticator
from kubeloop.server.auth.user import AUTHENTICATED, UserInfo

G = "rbac.authorization.k8s.io"
TOKEN = "alice-secret-token"
ALICE = UserInfo("alice", ("devs", AUTHENTICATED))
KUBECTLS = [path for path in ("/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
                              *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep))
            if path and Path(path).exists()]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    thread = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("rbac"), port=0, memory=True))
    try:
        state = thread.server.state
        assert state is not None

        def register() -> None:
            state.authenticator = Authenticator(thread.token, static_tokens={TOKEN: ALICE})

        thread.run(register)
        yield thread
    finally:
        thread.stop()


@pytest.fixture(scope="module")
def admin(server: ServerThread) -> Iterator[client.ApiClient]:
    api = make_api_client(server.server.kubeconfig_path)
    yield api
    api.close()


@pytest.fixture(scope="module")
def alice_kubeconfig(server: ServerThread, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = yaml.safe_load(server.server.kubeconfig_path.read_text())
    config["users"][0]["user"] = {"token": TOKEN}
    path = tmp_path_factory.mktemp("alice") / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _as_alice(server: ServerThread, method: str, path: str, body: Any = None,
              content_type: str = "application/json") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type}
    status, _, raw = raw_request(server, method, path, headers=headers,
                                 body=None if body is None else orjson.dumps(body))
    text = raw.decode().strip()
    return status, orjson.loads(text.splitlines()[0]) if text.startswith("{") else text


def _ns(admin: client.ApiClient, name: str) -> str:
    try:
        client.CoreV1Api(admin).create_namespace({"metadata": {"name": name}})
    except ApiException as error:
        if error.status != 409:
            raise
    return name


def _role(admin: client.ApiClient, namespace: str, name: str, rules: list[dict[str, Any]]) -> None:
    client.RbacAuthorizationV1Api(admin).create_namespaced_role(namespace, {"metadata": {"name": name},
                                                                            "rules": rules})


def _bind_devs(admin: client.ApiClient, namespace: str, name: str, kind: str, role: str) -> None:
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding(namespace, {
        "metadata": {"name": name}, "roleRef": {"apiGroup": G, "kind": kind, "name": role},
        "subjects": [{"kind": "Group", "apiGroup": G, "name": "devs"}]})


def _forbidden(message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "Forbidden", "details": details, "code": 403}


NS = "rbac-verbs"
CM = f"/api/v1/namespaces/{NS}/configmaps"
# verb -> (method, path, body, success status, the name the 403 names)
VERB_REQUESTS: dict[str, tuple[str, str, Any, int, str]] = {
    "get": ("GET", f"{CM}/cm", None, 200, "cm"),
    "list": ("GET", CM, None, 200, ""),
    "watch": ("GET", f"{CM}?watch=true&timeoutSeconds=1", None, 200, ""),
    "create": ("POST", CM, {"metadata": {"name": "made"}}, 201, ""),
    "update": ("PUT", f"{CM}/cm", {"metadata": {"name": "cm"}, "data": {"k": "v"}}, 200, "cm"),
    "patch": ("PATCH", f"{CM}/cm", {"data": {"k": "p"}}, 200, "cm"),
    "delete": ("DELETE", f"{CM}/doomed", None, 200, "doomed"),
    "deletecollection": ("DELETE", CM + "?labelSelector=doomed%3Dyes", None, 200, ""),
}


@pytest.mark.parametrize("verb", list(VERB_REQUESTS))
def test_each_verb_is_denied_then_allowed_by_a_role_binding_to_the_users_group(
        server: ServerThread, admin: client.ApiClient, verb: str) -> None:
    _ns(admin, NS)
    core = client.CoreV1Api(admin)
    for name in ("cm", "doomed"):
        try:
            core.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": {"doomed": "yes"}}})
        except ApiException as error:
            assert error.status == 409
    method, path, body, success, name = VERB_REQUESTS[verb]
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    status, answer = _as_alice(server, method, path, body, content_type)
    assert status == 403
    target = f'configmaps "{name}"' if name else "configmaps"
    details = {"name": name, "kind": "configmaps"} if name else {"kind": "configmaps"}
    assert answer == _forbidden(f'{target} is forbidden: User "alice" cannot {verb} resource "configmaps" in API '
                                f'group "" in the namespace "{NS}"', details)
    _role(admin, NS, f"only-{verb}", [{"verbs": [verb], "apiGroups": [""], "resources": ["configmaps"]}])
    _bind_devs(admin, NS, f"only-{verb}", "Role", f"only-{verb}")
    try:
        status, answer = _as_alice(server, method, path, body, content_type)
        assert status == success, answer
    finally:
        client.RbacAuthorizationV1Api(admin).delete_namespaced_role_binding(f"only-{verb}", NS)
    assert _as_alice(server, method, path, body, content_type)[0] == 403


SUBRESOURCES = [
    ("pods/status", "update", "PUT", "/api/v1/namespaces/rbac-sub/pods/p/status"),
    ("pods/log", "get", "GET", "/api/v1/namespaces/rbac-sub/pods/p/log"),
    ("deployments/scale", "get", "GET", "/apis/apps/v1/namespaces/rbac-sub/deployments/web/scale"),
    ("deployments/scale", "update", "PUT", "/apis/apps/v1/namespaces/rbac-sub/deployments/web/scale"),
]


@pytest.mark.parametrize(("resource", "verb", "method", "path"), SUBRESOURCES)
def test_subresources_need_rules_of_their_own(server: ServerThread, admin: client.ApiClient, resource: str,
                                              verb: str, method: str, path: str) -> None:
    _ns(admin, "rbac-sub")
    group = "apps" if resource.startswith("deployments") else ""
    body: Any = None
    if method == "PUT":
        body = orjson.loads(raw_request(server, "GET", path)[2])
    status, answer = _as_alice(server, method, path, body)
    assert status == 403 and f'cannot {verb} resource "{resource}" in API group "{group}"' in answer["message"]
    whole = resource.split("/")[0]
    name = f"sub-{whole}-{verb}"
    # The resource itself is not enough: the rule must name the subresource.
    _role(admin, "rbac-sub", name, [{"verbs": [verb], "apiGroups": [group], "resources": [whole]}])
    _bind_devs(admin, "rbac-sub", name, "Role", name)
    assert _as_alice(server, method, path, body)[0] == 403
    client.RbacAuthorizationV1Api(admin).patch_namespaced_role(name, "rbac-sub", {"rules": [
        {"verbs": [verb], "apiGroups": [group], "resources": [resource]}]})
    status, answer = _as_alice(server, method, path, body)
    assert status != 403, answer


@pytest.fixture(scope="module", autouse=True)
def _workloads(admin: client.ApiClient) -> None:
    _ns(admin, "rbac-sub")
    client.CoreV1Api(admin).create_namespaced_pod("rbac-sub", {
        "metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}})
    client.AppsV1Api(admin).create_namespaced_deployment("rbac-sub", {
        "metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                                              "template": {"metadata": {"labels": {"app": "web"}},
                                                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})


def test_the_official_client_sees_403_then_200_through_a_cluster_role_binding(
        server: ServerThread, admin: client.ApiClient) -> None:
    configuration = client.Configuration()
    configuration.host = server.url
    configuration.ssl_ca_cert = server.ca_file
    configuration.api_key = {"authorization": f"Bearer {TOKEN}"}
    with client.ApiClient(configuration) as api:
        with pytest.raises(ApiException) as denied:
            client.CoreV1Api(api).list_node()
        assert denied.value.status == 403
        assert orjson.loads(denied.value.body)["message"] == \
            'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope'
        rbac = client.RbacAuthorizationV1Api(admin)
        rbac.create_cluster_role({"metadata": {"name": "node-lister"},
                                  "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]}]})
        rbac.create_cluster_role_binding({"metadata": {"name": "devs-list-nodes"},
                                          "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "node-lister"},
                                          "subjects": [{"kind": "Group", "apiGroup": G, "name": "devs"}]})
        assert client.CoreV1Api(api).list_node().items is not None


def _review(server: ServerThread, path: str, body: dict[str, Any], as_alice: bool = False) -> tuple[int, Any]:
    if as_alice:
        return _as_alice(server, "POST", path, body)
    status, _, raw = raw_request(server, "POST", path, headers={"Content-Type": "application/json"},
                                 body=orjson.dumps(body))
    return status, orjson.loads(raw)


SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def test_subject_access_reviews_give_rbacs_decision_and_reason(server: ServerThread, admin: client.ApiClient) -> None:
    _ns(admin, "rbac-sar")
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "carol", "groups": ["qa"],
                     "resourceAttributes": {"namespace": "rbac-sar", "verb": "get", "resource": "secrets"}}}
    status, answer = _review(server, SAR, body)
    assert status == 201 and answer["status"] == {"allowed": False}
    _role(admin, "rbac-sar", "secret-reader", [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}])
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding("rbac-sar", {
        "metadata": {"name": "qa-secrets"}, "roleRef": {"apiGroup": G, "kind": "Role", "name": "secret-reader"},
        "subjects": [{"kind": "Group", "apiGroup": G, "name": "qa"}]})
    status, answer = _review(server, SAR, body)
    assert answer["status"] == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "qa-secrets/rbac-sar" of '
                                                           'Role "secret-reader" to Group "qa"'}
    local = {**body, "kind": "LocalSubjectAccessReview", "metadata": {"namespace": "rbac-sar"}}
    status, answer = _review(server, "/apis/authorization.k8s.io/v1/namespaces/rbac-sar/localsubjectaccessreviews",
                             local)
    assert status == 201 and answer["status"]["allowed"] is True
    masters = {**body, "spec": {**body["spec"], "groups": ["system:masters"], "user": "root"}}
    assert _review(server, SAR, masters)[1]["status"] == {"allowed": True}
    # A review's user is exactly the spec's: no implicit groups.
    non_resource = {**body, "spec": {"user": "carol", "nonResourceAttributes": {"path": "/apis", "verb": "get"}}}
    assert _review(server, SAR, non_resource)[1]["status"] == {"allowed": False}
    non_resource["spec"]["groups"] = ["system:authenticated"]
    assert _review(server, SAR, non_resource)[1]["status"] == {
        "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole '
                                   '"system:discovery" to Group "system:authenticated"'}


def test_an_invalid_subject_access_review_is_422(server: ServerThread) -> None:
    status, answer = _review(server, SAR, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                                           "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert status == 422
    assert answer["message"] == ('SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: '
                                 '"": at least one of user or group must be specified')


def test_self_reviews_answer_for_the_requesting_user(server: ServerThread, admin: client.ApiClient) -> None:
    _ns(admin, "rbac-self")
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"namespace": "rbac-self", "verb": "list", "resource": "services"}}}
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    assert _review(server, path, ssar, as_alice=True)[1]["status"] == {"allowed": False}
    _role(admin, "rbac-self", "svc", [{"verbs": ["list", "get"], "apiGroups": [""], "resources": ["services"],
                                      "resourceNames": []}])
    _bind_devs(admin, "rbac-self", "svc", "Role", "svc")
    _bind_devs(admin, "rbac-self", "broken", "Role", "no-such-role")
    assert _review(server, path, ssar, as_alice=True)[1]["status"]["allowed"] is True
    rules_review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                    "spec": {"namespace": "rbac-self"}}
    status, answer = _review(server, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", rules_review,
                             as_alice=True)
    assert status == 201
    rules = answer["status"]["resourceRules"]
    assert {"verbs": ["list", "get"], "apiGroups": [""], "resources": ["services"]} in rules
    assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in rules
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} in \
        answer["status"]["nonResourceRules"]
    assert answer["status"]["incomplete"] is False
    assert answer["status"]["evaluationError"] == 'role.rbac.authorization.k8s.io "no-such-role" not found'
    # A denial names the binding's missing role after the 403's text, as upstream appends the reason.
    status, answer = _as_alice(server, "GET", "/api/v1/namespaces/rbac-self/secrets")
    assert status == 403
    assert answer["message"] == ('secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" '
                                 'in the namespace "rbac-self": RBAC: role.rbac.authorization.k8s.io "no-such-role" '
                                 "not found")


def test_escalation_is_refused_unless_held_or_escalate_or_bind(server: ServerThread, admin: client.ApiClient) -> None:
    ns = _ns(admin, "rbac-esc")
    _role(admin, ns, "role-admin", [
        {"verbs": ["create", "update"], "apiGroups": [G], "resources": ["roles", "rolebindings"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])
    _bind_devs(admin, ns, "role-admin", "Role", "role-admin")
    roles = f"/apis/{G}/v1/namespaces/{ns}/roles"
    held = {"metadata": {"name": "held"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
    assert _as_alice(server, "POST", roles, held)[0] == 201
    more = {"metadata": {"name": "more"}, "rules": [
        {"verbs": ["get", "delete", "list"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s"]}]}
    status, answer = _as_alice(server, "POST", roles, more)
    assert status == 403
    assert answer == _forbidden(
        f'roles.{G} "more" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to '
        'grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "list"]}\n'
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["s"], Verbs:["get"]}',
        {"name": "more", "group": G, "kind": "roles"})
    bindings = f"/apis/{G}/v1/namespaces/{ns}/rolebindings"
    binding = {"metadata": {"name": "to-edit"}, "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "wide"},
               "subjects": [{"kind": "User", "apiGroup": G, "name": "bob"}]}
    status, answer = _as_alice(server, "POST", bindings, binding)
    assert status == 404 and answer["message"] == f'clusterroles.{G} "wide" not found'
    client.RbacAuthorizationV1Api(admin).create_cluster_role({"metadata": {"name": "wide"}, "rules": [
        {"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"]}]})
    status, answer = _as_alice(server, "POST", bindings, binding)
    assert status == 403 and "attempting to grant RBAC permissions not currently held" in answer["message"]
    # `bind` on that role, and `escalate` on roles, lift the checks.
    _role(admin, ns, "lifts", [{"verbs": ["bind"], "apiGroups": [G], "resources": ["clusterroles"],
                                "resourceNames": ["wide"]},
                               {"verbs": ["escalate"], "apiGroups": [G], "resources": ["roles"]}])
    _bind_devs(admin, ns, "lifts", "Role", "lifts")
    assert _as_alice(server, "POST", bindings, binding)[0] == 201
    assert _as_alice(server, "POST", roles, more)[0] == 201


def _can_i(binary: str, kubeconfig: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           "auth", "can-i", *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_auth_can_i(server: ServerThread, admin: client.ApiClient, alice_kubeconfig: Path, tmp_path: Path,
                            binary: str) -> None:
    ns = _ns(admin, f"rbac-can-i-{KUBECTLS.index(binary)}")
    denied = _can_i(binary, alice_kubeconfig, tmp_path, "delete", "jobs.batch", "-n", ns)
    assert (denied.returncode, denied.stdout.strip()) == (1, "no")
    _role(admin, ns, "jobs", [{"verbs": ["delete", "get"], "apiGroups": ["batch"], "resources": ["jobs"]}])
    _bind_devs(admin, ns, "jobs", "Role", "jobs")
    allowed = _can_i(binary, alice_kubeconfig, tmp_path, "delete", "jobs.batch", "-n", ns)
    assert (allowed.returncode, allowed.stdout.strip()) == (0, "yes")
    listing = _can_i(binary, alice_kubeconfig, tmp_path, "--list", "-n", ns)
    assert listing.returncode == 0, listing.stderr
    rows = [line.split() for line in listing.stdout.splitlines()]
    assert ["jobs.batch", "[]", "[]", "[delete", "get]"] in rows
    assert any(row[0] == "selfsubjectaccessreviews.authorization.k8s.io" for row in rows)


def test_always_allow_mode_lets_every_user_do_everything(tmp_path: Path) -> None:
    thread = ServerThread(ServerConfig(data_dir=tmp_path, port=0, memory=True, authorization_mode="AlwaysAllow"))
    try:
        state = thread.server.state
        assert state is not None

        def register() -> None:
            state.authenticator = Authenticator(thread.token, static_tokens={TOKEN: ALICE})

        thread.run(register)
        assert _as_alice(thread, "GET", "/api/v1/nodes")[0] == 200
        # No escalation check can fail: `escalate` is allowed too.
        role = {"metadata": {"name": "all"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}
        assert _as_alice(thread, "POST", f"/apis/{G}/v1/namespaces/default/roles", role)[0] == 201
        status, answer = _review(thread, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"}}, as_alice=True)
        assert status == 201
        assert answer["status"] == {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                                    "incomplete": False}
        # The bootstrap policy is there whatever the mode, as upstream's post-start hook.
        assert raw_request(thread, "GET", f"/apis/{G}/v1/clusterroles/cluster-admin")[0] == 200
    finally:
        thread.stop()


def test_an_aggregation_rule_needs_cluster_admin(server: ServerThread, admin: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(admin)
    rbac.create_cluster_role({"metadata": {"name": "clusterrole-writer"}, "rules": [
        {"verbs": ["create", "update", "get"], "apiGroups": [G], "resources": ["clusterroles"]}]})
    rbac.create_cluster_role_binding({"metadata": {"name": "devs-write-clusterroles"},
                                      "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "clusterrole-writer"},
                                      "subjects": [{"kind": "Group", "apiGroup": G, "name": "devs"}]})
    path = f"/apis/{G}/v1/clusterroles"
    aggregated = {"metadata": {"name": "gather"}, "aggregationRule": {
        "clusterRoleSelectors": [{"matchLabels": {"gather": "true"}}]}}
    status, answer = _as_alice(server, "POST", path, aggregated)
    assert status == 403
    assert answer["message"] == (f'clusterroles.{G} "gather" is forbidden: must have cluster-admin privileges to use '
                                 "the aggregationRule")
    # Rules the user holds are fine.
    held = {"metadata": {"name": "held-cluster"}, "rules": [{"verbs": ["get"], "apiGroups": [G],
                                                              "resources": ["clusterroles"]}]}
    assert _as_alice(server, "POST", path, held)[0] == 201
    # A role granting more than the user holds may still get owner references (the GC's fields) from
    # that user, but no other change.
    rbac.create_cluster_role({"metadata": {"name": "beyond"}, "rules": [
        {"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]})
    current = orjson.loads(raw_request(server, "GET", f"{path}/beyond")[2])
    current["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x",
                                               "uid": "6b9a7c1e-0000-4000-8000-000000000001"}]
    status, updated = _as_alice(server, "PUT", f"{path}/beyond", current)
    assert status == 200, updated
    updated["metadata"]["labels"] = {"changed": "yes"}
    status, answer = _as_alice(server, "PUT", f"{path}/beyond", updated)
    assert status == 403 and "attempting to grant RBAC permissions not currently held" in answer["message"]


def test_a_restart_reconciles_the_bootstrap_policy_unless_autoupdate_is_false(tmp_path: Path) -> None:
    basic = f"/apis/{G}/v1/clusterroles/system:basic-user"
    discovery = f"/apis/{G}/v1/clusterrolebindings/system:discovery"

    def start() -> ServerThread:
        return ServerThread(ServerConfig(data_dir=tmp_path, port=0))

    thread = start()
    try:
        role = orjson.loads(raw_request(thread, "GET", basic)[2])
        expected_rules = role["rules"]
        role["rules"] = role["rules"][:1]
        assert raw_request(thread, "PUT", basic, body=orjson.dumps(role))[0] == 200
        binding = orjson.loads(raw_request(thread, "GET", discovery)[2])
        binding["subjects"] = []
        binding["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        assert raw_request(thread, "PUT", discovery, body=orjson.dumps(binding))[0] == 200
    finally:
        thread.stop()
    thread = start()
    try:
        restored = orjson.loads(raw_request(thread, "GET", basic)[2])
        # The missing rules come back, broken down to one resource each (upstream's Covers).
        assert restored["rules"][0] == expected_rules[0]
        assert all(any(set(rule["resources"]) <= set(have["resources"]) for have in restored["rules"])
                   for rule in expected_rules)
        assert len(restored["rules"]) > 1
        assert orjson.loads(raw_request(thread, "GET", discovery)[2]).get("subjects") in (None, [])
    finally:
        thread.stop()


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_as_impersonates_only_when_allowed(server: ServerThread, admin: client.ApiClient,
                                                   alice_kubeconfig: Path, tmp_path: Path, binary: str) -> None:
    ns = _ns(admin, f"rbac-as-{KUBECTLS.index(binary)}")
    # The administrator may impersonate anyone: --as answers for the impersonated user.
    as_alice = _can_i(binary, server.server.kubeconfig_path, tmp_path, "create", "cronjobs.batch", "-n", ns,
                      "--as", "alice", "--as-group", "devs")
    assert (as_alice.returncode, as_alice.stdout.strip()) == (1, "no")
    # alice may not impersonate: 403 naming what she asked to be.
    refused = _can_i(binary, alice_kubeconfig, tmp_path, "get", "pods", "-n", ns, "--as", "bob")
    assert refused.returncode != 0
    if refused.stdout.strip() != "no":  # kubectl 1.20 reports a refused review as a plain "no"
        assert ('users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the '
                "cluster scope") in refused.stderr
    client.RbacAuthorizationV1Api(admin).create_cluster_role(
        {"metadata": {"name": f"impersonate-bob-{KUBECTLS.index(binary)}"},
         "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["bob"]}]})
    client.RbacAuthorizationV1Api(admin).create_cluster_role_binding(
        {"metadata": {"name": f"alice-as-bob-{KUBECTLS.index(binary)}"},
         "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": f"impersonate-bob-{KUBECTLS.index(binary)}"},
         "subjects": [{"kind": "User", "apiGroup": G, "name": "alice"}]})
    _role(admin, ns, "pod-reader", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding(ns, {
        "metadata": {"name": "bob-reads"}, "roleRef": {"apiGroup": G, "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "User", "apiGroup": G, "name": "bob"}]})
    as_bob = _can_i(binary, alice_kubeconfig, tmp_path, "get", "pods", "-n", ns, "--as", "bob")
    assert (as_bob.returncode, as_bob.stdout.strip()) == (0, "yes"), as_bob.stderr
