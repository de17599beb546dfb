"""The whole install, against the embedded server as a real cluster runs it: RBAC enforced, no
in-process OpenKruise admission (``kruise_admission=False``), ``kubectl apply -k deploy/base``
of every generated object, then the manager pod's two containers as processes with the
ServiceAccount's tokens (``kubectl create token``) and their Deployment arguments:
``kubeloop controllers`` and ``kubeloop webhook``, the latter called through its webhook
configurations and Service.

* The webhook fills both configurations' ``caBundle``; a CloneSet is created (with the
  webhook's defaults), scaled up and down, has a pod deleted by ``podsToDelete``, is updated in
  place under a partition then fully, and is deleted; an invalid CloneSet is refused with the
  webhook's 422; a pod asking for ordered container launch gets the barrier env. Zero RBAC
  denials for either process (each has a token of its own, told apart by its credential id).
* Minimality: each rule of the manager ClusterRole and of the leader-election Role, taken out
  in turn, makes a request the controller needs fail; each rule of the webhook's ClusterRole and
  Role, a request the webhook needs.
* Re-applying the base (an upgrade) keeps the ``caBundle`` the webhook wrote.
* The CRDs ``kubeloop manifests --crds-only`` prints are the running server's built-in ones.

What is adapted to run without a cluster network (the generated objects are applied unchanged):
no pod of the Deployment runs in the embedded cluster; its containers run here as processes.
The Service ``kubeloop-webhook-service`` keeps its selector, and the test writes its Endpoints as
the endpoints controller would for a pod at this machine's address, with the port the webhook
process listens on (the server resolves a webhook Service through its Endpoints, see
docs/webhooks.md; loopback addresses are refused in Endpoints, as upstream, so the address is
the machine's own non-loopback one). The webhook's ``--port`` is a free port rather than 9876,
and its ``TMPDIR`` a test directory standing for the pod's ``/tmp`` emptyDir (the one writable
place under ``readOnlyRootFilesystem``): the test checks its certificate files land there.

The in-process cluster runs the kubelet and only the garbage collector (the cascade of a
deleted CloneSet, kube-controller-manager's part in a real cluster).
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from async_process import Kubeloop, run
from process_harness import free_port

from kubeloop.api import kruise
from kubeloop.client import PODS, SECRETS, ApiException, NotFound
from kubeloop.install import InstallOptions, install_manifests
from kubeloop.install.rbac import LEADER_ELECTION_ROLE, MANAGER_ROLE, SERVICE_ACCOUNT, WEBHOOK_ROLE
from kubeloop.install.render import from_yaml
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import Authorizer, Decision
from kubeloop.server.auth.serviceaccount_tokens import CREDENTIAL_ID_KEY
from kubeloop.server.auth.user import UserInfo
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config
from kubeloop.webhook.configuration import CERT_SECRET, CLONESET_VALIDATION, SERVICE_NAME
from kubeloop.webhook.provision import CONFIGURATIONS

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.e2e]

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
NAMESPACE = "kubeloop-system"
USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
CLONESETS = f"clonesets.{kruise.GROUP}"
BASE = Path(__file__).resolve().parents[3] / "deploy" / "base"
SERVING = "kubeloop webhook serving on port"
Obj = dict[str, Any]


def host_address() -> str:
    """This machine's own IPv4 address that Endpoints accept (not loopback nor link-local).

    The address the kernel would send from on the default route, else one the host name
    resolves to.
    """
    candidates = []
    with suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # UDP: nothing is sent, a source address is chosen
        candidates.append(probe.getsockname()[0])
    with suppress(OSError):
        candidates += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    for candidate in candidates:
        address = ip_address(candidate)
        if not (address.is_loopback or address.is_link_local or address.is_unspecified):
            return str(address)
    raise AssertionError(f"this machine has no non-loopback IPv4 address for the webhook's Endpoints: {candidates}")


def credential_of(token: str) -> str:
    """The ``credential-id`` the server gives a service-account token's requests (its ``jti``)."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return f"JTI={claims['jti']}"


@dataclass
class DenialLog:
    """Wraps the server's authorizer: every request denied to the ServiceAccount, in order,
    with the credential id of the token it came with."""

    inner: Authorizer
    denied: list[tuple[str, RequestAttributes]] = field(default_factory=list)

    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        decision = self.inner.authorize(user, attributes)
        if not decision.allowed and user.username == USER:
            self.denied.append(((user.extra.get(CREDENTIAL_ID_KEY) or [""])[0], attributes))
        return decision

    def of(self, identity: Identity) -> list[RequestAttributes]:
        return [attributes for credential, attributes in self.denied if credential == identity.credential]


@dataclass(frozen=True)
class Identity:
    """One container's token: the ServiceAccount's, from its own ``kubectl create token``."""

    kubeconfig: Path
    credential: str


@dataclass
class Install:
    cluster: EmbeddedCluster
    denials: DenialLog
    controllers: Identity
    webhook: Identity
    objects: list[Obj]
    workdir: Path
    port: int
    """Where the webhook listens, and what its Service's Endpoints say."""
    serving: Kubeloop | None = None
    """The running ``kubeloop webhook``."""


def container(install: Install, name: str) -> Obj:
    (deployment,) = [obj for obj in install.objects if obj["kind"] == "Deployment"]
    (found,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return dict(found)


def args_of(install: Install, name: str) -> list[str]:
    """The container's arguments as the kubelet expands them (``$(POD_NAMESPACE)``)."""
    return [arg.replace("$(POD_NAMESPACE)", NAMESPACE) for arg in container(install, name)["args"]]


async def identity(admin: str, server_kubeconfig: Path, path: Path) -> Identity:
    token = (await run(KUBECTL, "--kubeconfig", admin, "create", "token", SERVICE_ACCOUNT, "-n", NAMESPACE)).strip()
    kubeconfig = yaml.safe_load(await asyncio.to_thread(server_kubeconfig.read_text))
    kubeconfig["users"][0]["user"] = {"token": token}
    await asyncio.to_thread(path.write_text, yaml.safe_dump(kubeconfig))
    return Identity(path, credential_of(token))


async def start_webhook(install: Install, name: str) -> Kubeloop:
    """``kubeloop webhook`` with the webhook container's arguments, on the test's port."""
    args = args_of(install, "webhook")
    args[args.index("--port") + 1] = str(install.port)
    tmp = install.workdir / f"tmp-{name}"  # the pod's /tmp emptyDir
    tmp.mkdir(exist_ok=True)
    return await Kubeloop.start(install.workdir / f"{name}.log", *args, "--kubeconfig", str(install.webhook.kubeconfig),
                                env={"TMPDIR": str(tmp)})


async def serve_webhook(install: Install) -> None:
    install.serving = await start_webhook(install, "webhook")
    await install.serving.wait_for_output(SERVING)


async def start_controllers(install: Install, name: str, *extra: str) -> Kubeloop:
    """``kubeloop controllers`` with the manager container's arguments and its token."""
    args = args_of(install, "manager")
    args[args.index("--health-port") + 1] = "0"  # any free port: several tests may run at once
    return await Kubeloop.start(install.workdir / f"{name}.log", *args, *extra,
                                "--kubeconfig", str(install.controllers.kubeconfig))


def applied_names(kubectl_output: str) -> set[str]:
    return {line.split(" ")[0] for line in kubectl_output.splitlines()}


def expected_names() -> set[str]:
    return {f"{obj['kind'].lower()}.{obj['apiVersion'].split('/')[0]}/{obj['metadata']['name']}"
            if "/" in obj["apiVersion"] else f"{obj['kind'].lower()}/{obj['metadata']['name']}"
            for obj in install_manifests(InstallOptions())}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def install(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Install]:
    workdir = tmp_path_factory.mktemp("install")
    config = ClusterConfig(data_dir=workdir / "server", kubelet=quick_kubelet_config(nodes=1),
                           controllers=("garbagecollector",), kruise_admission=False)
    async with EmbeddedCluster(config) as cluster:
        await cluster.wait_ready()
        state = cluster.server.state
        assert state is not None
        denials = DenialLog(state.authorizer)
        state.authorizer = denials
        admin = str(cluster.kubeconfig_path)
        # deploy/base is the generator's default install (a drift test keeps them equal): its
        # namespace and image are the ones this test runs.
        out = await run(KUBECTL, "--kubeconfig", admin, "apply", "-k", str(BASE))
        assert applied_names(out) == expected_names()
        controllers = await identity(admin, cluster.kubeconfig_path, workdir / "controllers-kubeconfig")
        webhook = await identity(admin, cluster.kubeconfig_path, workdir / "webhook-kubeconfig")
        service = await cluster.client.get("services", SERVICE_NAME, namespace=NAMESPACE)
        (service_port,) = service["spec"]["ports"]
        port = free_port()
        # What the endpoints controller writes for a ready pod at this address, the port named
        # as the Service's.
        await cluster.client.create("endpoints", {
            "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE},
            "subsets": [{"addresses": [{"ip": host_address()}],
                         "ports": [{"name": service_port["name"], "port": port, "protocol": "TCP"}]}]},
            namespace=NAMESPACE)
        install = Install(cluster, denials, controllers, webhook, install_manifests(InstallOptions()), workdir, port)
        await serve_webhook(install)
        try:
            yield install
        finally:
            if install.serving is not None:
                await install.serving.stop()


async def until(check: Callable[[], Awaitable[bool] | bool], what: str, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if result if isinstance(result, bool) else await result:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def cloneset(name: str, replicas: int, image: str, **pod_spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": kruise.API_VERSION, "kind": "CloneSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "updateStrategy": {"type": "InPlaceIfPossible"},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": image}],
                                           "terminationGracePeriodSeconds": 0, **pod_spec}}}}


def settled(replicas: int, image: str, updated: int | None = None) -> Callable[[Obj], bool]:
    """The controller has seen the latest spec: ``replicas`` ready pods, ``updated`` of them
    (all unless given) at the template's revision, whose image is ``image``."""
    def check(obj: Obj) -> bool:
        status = obj.get("status") or {}
        return (obj["spec"]["template"]["spec"]["containers"][0]["image"] == image
                and status.get("observedGeneration") == obj["metadata"]["generation"]
                and status.get("replicas") == status.get("readyReplicas") == replicas
                and status.get("updatedReadyReplicas") == (replicas if updated is None else updated))
    return check


async def pods_of(install: Install, name: str) -> list[Obj]:
    listed = await install.cluster.client.list(PODS, namespace="default", label_selector=f"app={name}")
    items: list[Obj] = listed["items"]
    return items


async def delete_cloneset(install: Install, name: str) -> None:
    with suppress(NotFound):
        await install.cluster.client.delete(CLONESETS, name, namespace="default")
    await install.cluster.wait_deleted(CLONESETS, name, timeout=30)

    async def no_pods() -> bool:
        return not await pods_of(install, name)

    await until(no_pods, f"the pods of {name} to go")


async def ca_bundles(install: Install) -> list[str | None]:
    bundles: list[str | None] = []
    for resource, name in CONFIGURATIONS:
        configuration = await install.cluster.client.get(resource, name)
        bundles += [hook["clientConfig"].get("caBundle") for hook in configuration["webhooks"]]
    return bundles


def image_patch(image: str, partition: int | None = None) -> Obj:
    spec: Obj = {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}
    if partition is not None:
        spec["updateStrategy"] = {"partition": partition}
    return {"spec": spec}


async def test_a_cloneset_lives_and_dies_through_the_webhook_with_zero_denials(install: Install) -> None:
    client, cluster = install.cluster.client, install.cluster
    secret = await client.get(SECRETS, CERT_SECRET, namespace=NAMESPACE)
    assert set(await ca_bundles(install)) == {secret["data"]["ca-cert.pem"]}
    # The default --cert-dir is under TMPDIR: /tmp, the pod's one writable place.
    assert list((install.workdir / "tmp-webhook").glob("*/tls.crt"))
    install.denials.denied.clear()
    controllers = await start_controllers(install, "full")
    try:
        created = await client.create(CLONESETS, cloneset("web", 2, "nginx:1.26"), namespace="default")
        # OpenKruise's defaults, which only the webhook sets here.
        spec = created["spec"]
        assert spec["revisionHistoryLimit"] == 10
        assert spec["updateStrategy"] == {"type": "InPlaceIfPossible", "partition": 0, "maxUnavailable": "20%",
                                          "maxSurge": 0, "inPlaceUpdateStrategy": {}}
        app = spec["template"]["spec"]["containers"][0]
        assert (app["imagePullPolicy"], app["terminationMessagePath"]) == ("IfNotPresent", "/dev/termination-log")
        await cluster.wait_for(CLONESETS, "web", settled(2, "nginx:1.26"), timeout=60)

        for replicas in (3, 2):
            await client.patch(CLONESETS, "web", {"spec": {"replicas": replicas}}, patch_type="merge",
                               namespace="default")
            await cluster.wait_for(CLONESETS, "web", settled(replicas, "nginx:1.26"), timeout=60)

        # podsToDelete: that pod goes, another takes its place (the webhook reads the named pod).
        victim = (await pods_of(install, "web"))[0]["metadata"]["name"]
        await client.patch(CLONESETS, "web", {"spec": {"scaleStrategy": {"podsToDelete": [victim]}}},
                           patch_type="merge", namespace="default")

        async def replaced() -> bool:
            names = [pod["metadata"]["name"] for pod in await pods_of(install, "web")]
            return victim not in names and len(names) == 2

        await until(replaced, f"{victim} to be replaced")
        await cluster.wait_for(CLONESETS, "web", settled(2, "nginx:1.26"), timeout=60)

        # In place, one pod kept back by the partition, then all: the same pods throughout.
        before = {pod["metadata"]["uid"] for pod in await pods_of(install, "web")}
        await client.patch(CLONESETS, "web", image_patch("nginx:1.27", partition=1), patch_type="merge",
                           namespace="default")
        await cluster.wait_for(CLONESETS, "web", settled(2, "nginx:1.27", updated=1), timeout=60)
        pods = await pods_of(install, "web")
        assert sorted(pod["spec"]["containers"][0]["image"] for pod in pods) == ["nginx:1.26", "nginx:1.27"]
        await client.patch(CLONESETS, "web", {"spec": {"updateStrategy": {"partition": 0}}}, patch_type="merge",
                           namespace="default")
        await cluster.wait_for(CLONESETS, "web", settled(2, "nginx:1.27"), timeout=60)
        after = await pods_of(install, "web")
        assert {pod["metadata"]["uid"] for pod in after} == before
        assert {pod["spec"]["containers"][0]["image"] for pod in after} == {"nginx:1.27"}

        with pytest.raises(ApiException) as refused:
            await client.create(CLONESETS, cloneset("invalid", -1, "nginx:1.26"), namespace="default")
        assert refused.value.code == 422
        assert refused.value.message == (f'admission webhook "{CLONESET_VALIDATION.name}" denied the request: '
                                         "spec.replicas: Invalid value: -1: must be greater than or equal to 0")

        ordered = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "ordered", "annotations": {
                       kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: kruise.CONTAINER_LAUNCH_ORDERED}},
                   "spec": {"containers": [{"name": "first", "image": "busybox"}, {"name": "then", "image": "busybox"}],
                            "terminationGracePeriodSeconds": 0}}
        pod = await client.create(PODS, ordered, namespace="default")
        assert [c.get("env") for c in pod["spec"]["containers"]] == [
            [{"name": kruise.CONTAINER_BARRIER_ENV,
              "valueFrom": {"configMapKeyRef": {"name": "ordered-barrier", "key": f"p_{priority}"}}}]
            for priority in (0, -1)]
        await client.delete(PODS, "ordered", namespace="default")

        await delete_cloneset(install, "web")
        leases = await client.list("leases.coordination.k8s.io", namespace=NAMESPACE)
        assert [lease["metadata"]["name"] for lease in leases["items"]] == ["kubeloop-controller-manager-leader"]
    finally:
        await controllers.stop()
    assert install.denials.denied == []
    assert install.serving is not None
    for process in (controllers, install.serving):
        assert "forbidden" not in process.output().lower()


def covers(rule: Obj, denied: RequestAttributes) -> bool:
    resource = f"{denied.resource}/{denied.subresource}" if denied.subresource else denied.resource
    return (denied.resource_request and denied.group in rule["apiGroups"] and resource in rule["resources"]
            and denied.verb in rule["verbs"])


def role_cases(*roles: tuple[str, str]) -> list[tuple[str, int]]:
    """(kind/name, rule index) of every rule of ``roles``, as (kind, name)."""
    return [(f"{obj['kind']}/{obj['metadata']['name']}", index)
            for obj in install_manifests(InstallOptions())
            if (obj["kind"], obj["metadata"]["name"]) in roles
            for index in range(len(obj["rules"]))]


@asynccontextmanager
async def without_rule(install: Install, role: str, index: int) -> AsyncIterator[Obj]:
    """The role without its rule ``index`` (yielded), put back afterwards."""
    kind, name = role.split("/")
    resource = f"{'clusterroles' if kind == 'ClusterRole' else 'roles'}.rbac.authorization.k8s.io"
    namespace = None if kind == "ClusterRole" else NAMESPACE
    client = install.cluster.client
    original = await client.get(resource, name, namespace=namespace)
    removed: Obj = original["rules"][index]
    reduced = {**original, "rules": [r for i, r in enumerate(original["rules"]) if i != index]}
    await client.update(resource, reduced, namespace=namespace)
    install.denials.denied.clear()
    try:
        yield removed
    finally:
        latest = await client.get(resource, name, namespace=namespace)
        await client.update(resource, {**latest, "rules": original["rules"]}, namespace=namespace)


SPREAD = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchLabels": {"app": "probe"}}}]
"""Makes a scale-in rank its victims by node, so the controller reads Nodes."""
GATES = ("--feature-gates", "PreDownloadImageForInPlaceUpdate=true")
"""The gate under which the controller uses ImagePullJobs (it lists them once a CloneSet converges)."""


@pytest.mark.parametrize(("role", "index"), role_cases(("ClusterRole", MANAGER_ROLE), ("Role", LEADER_ELECTION_ROLE)))
async def test_each_controller_rule_is_needed(install: Install, role: str, index: int) -> None:
    client = install.cluster.client
    async with without_rule(install, role, index) as removed:
        def refused() -> bool:
            return any(covers(removed, denied) for denied in install.denials.of(install.controllers))

        async def step(replicas: int, image: str) -> None:
            async def refused_or_settled() -> bool:
                return refused() or settled(replicas, image)(await client.get(CLONESETS, "probe", namespace="default"))

            await until(refused_or_settled, f"a denial or {replicas} pods of {image}", timeout=30)

        controllers = await start_controllers(install, f"without-{role.replace('/', '-')}-{index}", *GATES)
        try:
            # Create, scale in, update in place: stop at the first denial the removed rule covers.
            await client.create(CLONESETS, cloneset("probe", 2, "nginx:1.26", topologySpreadConstraints=SPREAD),
                                namespace="default")
            await step(2, "nginx:1.26")
            if not refused():
                await client.patch(CLONESETS, "probe", {"spec": {"replicas": 1}}, patch_type="merge",
                                   namespace="default")
                await step(1, "nginx:1.26")
            if not refused():
                await client.patch(CLONESETS, "probe", image_patch("nginx:1.27"), patch_type="merge",
                                   namespace="default")
                await step(1, "nginx:1.27")
            assert refused(), (f"without {removed} the CloneSet still lived; denied: {install.denials.denied}\n"
                               + controllers.output())
        finally:
            await controllers.stop()
            await delete_cloneset(install, "probe")


@asynccontextmanager
async def manager_role_unbound(install: Install) -> AsyncIterator[None]:
    """The ServiceAccount without the manager ClusterRole (its binding deleted, then made again)."""
    resource = "clusterrolebindings.rbac.authorization.k8s.io"
    (binding,) = [obj for obj in install.objects
                  if obj["kind"] == "ClusterRoleBinding" and obj["roleRef"]["name"] == MANAGER_ROLE]
    await install.cluster.client.delete(resource, binding["metadata"]["name"])
    try:
        yield
    finally:
        await install.cluster.client.create(resource, binding)


@pytest.mark.parametrize(("role", "index"), role_cases(("ClusterRole", WEBHOOK_ROLE), ("Role", WEBHOOK_ROLE)))
async def test_each_webhook_rule_is_needed(install: Install, role: str, index: int) -> None:
    """Without the rule, a webhook started with no certificate Secret yet (a first install) is
    denied something: creating or reading the Secret, setting the caBundle, or reading the pods
    a CloneSet's ``podsToDelete`` names.

    Both containers share the ServiceAccount, and the CloneSet controller's rules grant ``get``
    on pods too: the manager ClusterRole is unbound meanwhile, so the webhook has only its own
    rules (and the leader-election Role's), as with a selection of controllers that reads no pods.
    """
    client = install.cluster.client
    assert install.serving is not None
    await install.serving.stop()  # the probe takes its place (and its port) meanwhile
    install.serving = None
    secret = await client.get(SECRETS, CERT_SECRET, namespace=NAMESPACE)
    await client.delete(SECRETS, CERT_SECRET, namespace=NAMESPACE)
    try:
        async with manager_role_unbound(install), without_rule(install, role, index) as removed:
            def refused() -> bool:
                return any(covers(removed, denied) for denied in install.denials.of(install.webhook))

            probe = await start_webhook(install, f"webhook-without-{role.replace('/', '-')}-{index}")
            try:
                def serving_or_gone() -> bool:
                    return SERVING in probe.output() or probe.process.returncode is not None

                await until(serving_or_gone, "the webhook to serve or exit")
                if not refused():
                    # Refused either way: 422 (no such pod) with the rule, 500 (could not look) without.
                    naming = cloneset("probe", 1, "nginx:1.26")
                    naming["spec"]["scaleStrategy"] = {"podsToDelete": ["nope"]}
                    with pytest.raises(ApiException):
                        await client.create(CLONESETS, naming, namespace="default")
                assert refused(), (f"without {removed} the webhook still did its work; denied: "
                                   f"{install.denials.denied}\n" + probe.output())
            finally:
                await probe.stop()
    finally:
        # The Secret as it was: the webhook started again serves its certificate and puts its CA
        # back into the configurations (the probe may have written its own).
        with suppress(NotFound):
            await client.delete(SECRETS, CERT_SECRET, namespace=NAMESPACE)
        kept = {key: secret["metadata"][key] for key in ("name", "namespace", "labels", "annotations")
                if key in secret["metadata"]}
        await client.create(SECRETS, {**secret, "metadata": kept}, namespace=NAMESPACE)
        await serve_webhook(install)
        assert set(await ca_bundles(install)) == {secret["data"]["ca-cert.pem"]}


async def test_reapplying_the_base_keeps_the_ca_bundle_the_webhook_wrote(install: Install) -> None:
    # An upgrade: the configurations are applied again without a caBundle. Client-side apply
    # only removes what the last applied configuration had, so the webhook's bundle stays.
    # Server-side apply removes only fields the applier owned, and the webhook's update owns it.
    before = await ca_bundles(install)
    assert None not in before
    for mode in ((), ("--server-side",)):
        await run(KUBECTL, "--kubeconfig", str(install.cluster.kubeconfig_path), "apply", *mode, "-k", str(BASE))
        assert await ca_bundles(install) == before, mode
    created = await install.cluster.client.create(CLONESETS, cloneset("upgraded", 0, "nginx:1.26"),
                                                  namespace="default")
    assert created["spec"]["revisionHistoryLimit"] == 10
    await delete_cloneset(install, "upgraded")


async def test_the_crds_printed_are_the_servers_built_in_ones(install: Install) -> None:
    printed = from_yaml(await run(sys.executable, "-m", "kubeloop.cli.main", "manifests", "--crds-only"))
    assert [crd["metadata"]["name"] for crd in printed] == ["clonesets.apps.kruise.io", "imagepulljobs.apps.kruise.io"]
    # A fresh server, not the one the install applied them to: its CRDs are its own built-ins.
    async with EmbeddedCluster(ClusterConfig(data_dir=install.workdir / "fresh", kubelet=None,
                                             controllers=())) as fresh:
        await fresh.wait_ready()
        for crd in printed:
            served = await fresh.client.get("customresourcedefinitions.apiextensions.k8s.io", crd["metadata"]["name"])
            assert served["spec"]["group"] == crd["spec"]["group"]
            assert served["spec"]["scope"] == crd["spec"]["scope"]
            assert served["spec"]["names"] == {**served["spec"]["names"], **crd["spec"]["names"]}
            assert len(served["spec"]["versions"]) == len(crd["spec"]["versions"])
            for mine, theirs in zip(crd["spec"]["versions"], served["spec"]["versions"], strict=True):
                assert theirs["schema"] == mine["schema"]
                assert theirs.get("subresources") == mine.get("subresources")
                assert theirs.get("additionalPrinterColumns") == mine.get("additionalPrinterColumns")
