"""The part-B kinds over HTTP: stored defaults as kube-apiserver 1.33 stores them, immutable fields.

Each case creates a minimal object with a plain JSON POST and compares everything but
``metadata`` and ``status`` of the answer (and of a later GET) with what a 1.33 server returns
for the same body; each immutability rule is then hit once with a PUT of the stored object.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from server_harness import Cluster

JSON = {"Content-Type": "application/json"}
RBAC = "rbac.authorization.k8s.io/v1"
NET = "networking.k8s.io/v1"
STORAGE = "storage.k8s.io/v1"
ADM = "admissionregistration.k8s.io/v1"
FC = "flowcontrol.apiserver.k8s.io/v1"
RULE = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}
HOOK = {"name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "svc", "namespace": "default"}}, "rules": [RULE]}
HOOK_DEFAULTS = {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                 "timeoutSeconds": 10, "rules": [{**RULE, "scope": "*"}],
                 "clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 443}}}


def call(cluster: Cluster, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    data = None if body is None else orjson.dumps(body)
    code, _, raw = cluster.raw(method, path, headers=JSON, body=data)
    answer: dict[str, Any] = orjson.loads(raw)
    return code, answer


def collection(api_version: str, resource: str, namespace: str | None) -> str:
    prefix = f"/apis/{api_version}"
    return f"{prefix}/namespaces/{namespace}/{resource}" if namespace else f"{prefix}/{resource}"


def content(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


# (apiVersion, resource, namespace, body without apiVersion/metadata, what a 1.33 server stores)
CASES: list[tuple[str, str, str | None, str, dict[str, Any], dict[str, Any]]] = [
    (RBAC, "roles", "default", "Role", {"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]},
     {"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
    (RBAC, "clusterroles", None, "ClusterRole",
     {"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]}},
     {"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]}}),
    (RBAC, "rolebindings", "default", "RoleBinding",
     {"roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "alice"},
                                                           {"kind": "ServiceAccount", "name": "default"}]},
     {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
      "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                   {"kind": "ServiceAccount", "name": "default"}]}),
    (RBAC, "clusterrolebindings", None, "ClusterRoleBinding",
     {"roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "Group", "name": "devs"}]},
     {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
      "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}]}),
    ("scheduling.k8s.io/v1", "priorityclasses", None, "PriorityClass", {"value": 1000},
     {"value": 1000, "preemptionPolicy": "PreemptLowerPriority"}),
    ("node.k8s.io/v1", "runtimeclasses", None, "RuntimeClass", {"handler": "runsc"}, {"handler": "runsc"}),
    (STORAGE, "storageclasses", None, "StorageClass", {"provisioner": "ebs.csi.aws.com", "parameters": {"t": "gp3"}},
     {"provisioner": "ebs.csi.aws.com", "parameters": {"t": "gp3"}, "reclaimPolicy": "Delete",
      "volumeBindingMode": "Immediate"}),
    (STORAGE, "csidrivers", None, "CSIDriver", {"spec": {}},
     {"spec": {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
               "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
               "requiresRepublish": False, "seLinuxMount": False}}),
    (STORAGE, "csinodes", None, "CSINode", {"spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1"}]}},
     {"spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1"}]}}),
    (STORAGE, "csistoragecapacities", "default", "CSIStorageCapacity", {"storageClassName": "fast"},
     {"storageClassName": "fast"}),
    (STORAGE, "volumeattachments", None, "VolumeAttachment",
     {"spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}},
     {"spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}}),
    (NET, "ingresses", "default", "Ingress",
     {"spec": {"rules": [{"host": "example.com", "http": {"paths": [
         {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
     {"spec": {"rules": [{"host": "example.com", "http": {"paths": [
         {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
    (NET, "ingressclasses", None, "IngressClass",
     {"spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"kind": "Config", "name": "c"}}},
     {"spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"kind": "Config", "name": "c",
                                                                    "scope": "Cluster"}}}),
    (NET, "networkpolicies", "default", "NetworkPolicy",
     {"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}},
     {"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
               "policyTypes": ["Ingress", "Egress"]}}),
    (NET, "ipaddresses", None, "IPAddress",
     {"spec": {"parentRef": {"resource": "services", "name": "web", "namespace": "default"}}},
     {"spec": {"parentRef": {"resource": "services", "name": "web", "namespace": "default"}}}),
    (NET, "servicecidrs", None, "ServiceCIDR", {"spec": {"cidrs": ["10.100.0.0/16"]}},
     {"spec": {"cidrs": ["10.100.0.0/16"]}}),
    (ADM, "validatingwebhookconfigurations", None, "ValidatingWebhookConfiguration", {"webhooks": [HOOK]},
     {"webhooks": [{**HOOK, **HOOK_DEFAULTS}]}),
    (ADM, "mutatingwebhookconfigurations", None, "MutatingWebhookConfiguration", {"webhooks": [HOOK]},
     {"webhooks": [{**HOOK, **HOOK_DEFAULTS, "reinvocationPolicy": "Never"}]}),
    (ADM, "validatingadmissionpolicies", None, "ValidatingAdmissionPolicy",
     {"spec": {"matchConstraints": {"resourceRules": [RULE]}, "validations": [{"expression": "true"}]}},
     {"spec": {"failurePolicy": "Fail", "validations": [{"expression": "true"}],
               "matchConstraints": {"resourceRules": [{**RULE, "scope": "*"}], "matchPolicy": "Equivalent",
                                    "namespaceSelector": {}, "objectSelector": {}}}}),
    (ADM, "validatingadmissionpolicybindings", None, "ValidatingAdmissionPolicyBinding",
     {"spec": {"policyName": "p", "validationActions": ["Deny"], "matchResources": {}}},
     {"spec": {"policyName": "p", "validationActions": ["Deny"], "matchResources": {
         "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}}}}),
    (FC, "flowschemas", None, "FlowSchema", {"spec": {"priorityLevelConfiguration": {"name": "global-default"}}},
     {"spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 1000}}),
    (FC, "prioritylevelconfigurations", None, "PriorityLevelConfiguration",
     {"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}},
     {"spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
         "type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}}}),
]

NAMES = {"ipaddresses": "10.100.0.7"}


def create(cluster: Cluster, api_version: str, resource: str, namespace: str | None, kind: str,
           body: dict[str, Any]) -> dict[str, Any]:
    name = NAMES.get(resource, "minimal")
    sent = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **copy.deepcopy(body)}
    code, answer = call(cluster, "POST", collection(api_version, resource, namespace), sent)
    assert code == 201, answer
    return answer


@pytest.mark.parametrize(("api_version", "resource", "namespace", "kind", "body", "expected"), CASES,
                         ids=[case[1] for case in CASES])
def test_minimal_object_is_stored_with_upstream_defaults(
        cluster: Cluster, api_version: str, resource: str, namespace: str | None, kind: str, body: dict[str, Any],
        expected: dict[str, Any]) -> None:
    created = create(cluster, api_version, resource, namespace, kind, body)
    assert content(created) == {"apiVersion": api_version, "kind": kind, **expected}
    path = collection(api_version, resource, namespace) + "/" + created["metadata"]["name"]
    code, fetched = call(cluster, "GET", path)
    assert code == 200 and content(fetched) == content(created)


def _set(*keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        target = obj
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


# (case resource, change, the one cause upstream reports: field and message)
IMMUTABLE: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("rolebindings", _set("roleRef", "name", value="other"), "roleRef",
     'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"other"}: '
     "cannot change roleRef"),
    ("clusterrolebindings", _set("roleRef", "name", value="edit"), "roleRef",
     'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
     "cannot change roleRef"),
    ("priorityclasses", _set("value", value=7), "value", "Forbidden: may not be changed in an update."),
    ("priorityclasses", _set("preemptionPolicy", value="Never"), "preemptionPolicy",
     'Invalid value: "Never": field is immutable'),
    ("runtimeclasses", _set("handler", value="kata"), "handler", 'Invalid value: "kata": field is immutable'),
    ("storageclasses", _set("parameters", value={"t": "io2"}), "parameters",
     "Forbidden: updates to parameters are forbidden."),
    ("storageclasses", _set("provisioner", value="other.example.com"), "provisioner",
     "Forbidden: updates to provisioner are forbidden."),
    ("storageclasses", _set("reclaimPolicy", value="Retain"), "reclaimPolicy",
     "Forbidden: updates to reclaimPolicy are forbidden."),
    ("storageclasses", _set("volumeBindingMode", value="WaitForFirstConsumer"), "volumeBindingMode",
     'Invalid value: "WaitForFirstConsumer": field is immutable'),
    ("csidrivers", _set("spec", "attachRequired", value=False), "spec.attachedRequired",
     "Invalid value: false: field is immutable"),
    ("csidrivers", _set("spec", "volumeLifecycleModes", value=["Ephemeral"]), "spec.volumeLifecycleModes",
     'Invalid value: []string{"Ephemeral"}: field is immutable'),
    ("csistoragecapacities", _set("storageClassName", value="slow"), "storageClassName",
     'Invalid value: "slow": field is immutable'),
    ("ingressclasses", _set("spec", "controller", value="example.com/other"), "spec.controller",
     'Invalid value: "example.com/other": field is immutable'),
    ("servicecidrs", _set("spec", "cidrs", value=["10.101.0.0/16"]), "spec.cidrs",
     'Invalid value: []string{"10.101.0.0/16"}: field is immutable'),
]


@pytest.mark.parametrize(("resource", "change", "field", "message"), IMMUTABLE,
                         ids=[f"{case[0]}-{case[2]}" for case in IMMUTABLE])
def test_update_of_immutable_field_is_invalid(cluster: Cluster, resource: str, change: Callable[[dict[str, Any]], None],
                                              field: str, message: str) -> None:
    api_version, _, namespace, kind, body, _ = next(case for case in CASES if case[1] == resource)
    created = create(cluster, api_version, resource, namespace, kind, body)
    change(created)
    path = collection(api_version, resource, namespace) + "/" + created["metadata"]["name"]
    code, answer = call(cluster, "PUT", path, created)
    assert code == 422, answer
    assert answer["reason"] == "Invalid"
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [(field, message)]


@pytest.mark.parametrize("resource", ["csinodes", "volumeattachments", "ipaddresses"])
def test_spec_changes_of_immutable_kinds_are_invalid(cluster: Cluster, resource: str) -> None:
    api_version, _, namespace, kind, body, _ = next(case for case in CASES if case[1] == resource)
    created = create(cluster, api_version, resource, namespace, kind, body)
    changed = copy.deepcopy(created)
    if resource == "csinodes":
        changed["spec"]["drivers"][0]["nodeID"] = "i-2"
    elif resource == "volumeattachments":
        changed["spec"]["nodeName"] = "node-2"
    else:
        changed["spec"]["parentRef"]["name"] = "other"
    path = collection(api_version, resource, namespace) + "/" + created["metadata"]["name"]
    code, answer = call(cluster, "PUT", path, changed)
    assert code == 422, answer
    assert [c["message"].endswith("field is immutable") for c in answer["details"]["causes"]] == [True]


def test_system_priority_classes_and_mandatory_flow_control_exist_at_start(cluster: Cluster) -> None:
    code, classes = call(cluster, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
    assert code == 200
    assert {(c["metadata"]["name"], c["value"], c["preemptionPolicy"]) for c in classes["items"]} == {
        ("system-cluster-critical", 2000000000, "PreemptLowerPriority"),
        ("system-node-critical", 2000001000, "PreemptLowerPriority")}
    for resource in ("flowschemas", "prioritylevelconfigurations"):
        code, listed = call(cluster, "GET", f"/apis/{FC}/{resource}")
        assert code == 200 and {i["metadata"]["name"] for i in listed["items"]} >= {"exempt", "catch-all"}
    code, level = call(cluster, "GET", f"/apis/{FC}/prioritylevelconfigurations/catch-all")
    assert level["spec"] == {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                            "limitResponse": {"type": "Reject"}}}
    code, answer = call(cluster, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-mine"}, "value": 1})
    assert code == 422
    assert answer["details"]["causes"][0]["message"] == (
        "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "
        "system-mine is not a known system priority class")


def test_system_priority_class_cannot_be_deleted(cluster: Cluster) -> None:
    code, answer = call(cluster, "DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical")
    assert code == 403
    assert answer["message"] == ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a '
                                 "system priority class and cannot be deleted")
    create(cluster, "scheduling.k8s.io/v1", "priorityclasses", None, "PriorityClass", {"value": 5})
    code, _ = call(cluster, "DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/minimal")
    assert code == 200


def _pem_request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (x509.CertificateSigningRequestBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")]))
               .sign(key, hashes.SHA256()))
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def test_csr_takes_the_requester_and_is_approved_through_approval(cluster: Cluster) -> None:
    base = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    spec = {"request": _pem_request(), "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"],
            "username": "mallory"}
    code, created = call(cluster, "POST", base, {"apiVersion": "certificates.k8s.io/v1",
                                                 "kind": "CertificateSigningRequest", "metadata": {"name": "alice"},
                                                 "spec": spec})
    assert code == 201, created
    assert created["spec"]["username"] == "kubernetes-admin"
    assert created["spec"]["groups"] == ["system:masters", "system:authenticated"]
    edited = copy.deepcopy(created)
    edited["spec"]["usages"] = ["any"]
    edited["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    code, kept = call(cluster, "PUT", f"{base}/alice", edited)
    assert code == 200 and kept["spec"] == created["spec"] and not kept.get("status", {}).get("conditions")
    approval = copy.deepcopy(kept)
    approval["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove"}]}
    code, approved = call(cluster, "PUT", f"{base}/alice/approval", approval)
    assert code == 200, approved
    condition = approved["status"]["conditions"][0]
    assert (condition["type"], condition["reason"]) == ("Approved", "KubectlApprove")
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    code, fetched = call(cluster, "GET", f"{base}/alice")
    assert fetched["status"]["conditions"][0]["type"] == "Approved"
    removal = copy.deepcopy(fetched)
    removal["status"] = {}
    code, answer = call(cluster, "PUT", f"{base}/alice/status", removal)
    assert code == 422
    assert answer["details"]["causes"][0]["message"] == (
        'Forbidden: updates may not remove a condition of type "Approved"')


def test_a_new_ingress_shows_an_empty_load_balancer_status(cluster: Cluster) -> None:
    api_version, resource, namespace, kind, body, _ = next(case for case in CASES if case[1] == "ingresses")
    created = create(cluster, api_version, resource, namespace, kind, body)
    assert created["status"] == {"loadBalancer": {}}
