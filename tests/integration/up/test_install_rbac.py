"""The install's RBAC, against the embedded server with RBAC enforced: ``kubectl apply`` of
``kubeloop manifests``, then ``kubeloop controllers`` as a process with the ServiceAccount's token
(``kubectl create token``), run as the Deployment runs it.

* With the generated roles a CloneSet is created, scaled, updated in place and deleted with
  zero RBAC denials for the ServiceAccount (read at the server's authorizer) and no
  ``forbidden`` in the controller's output.
* Minimality: each rule of the manager ClusterRole and of the leader-election Role, taken out
  in turn, makes a request the controller needs fail with a denial that rule would have allowed.
* The CRDs ``kubeloop manifests --crds-only`` prints are the running server's built-in ones.

The webhook configurations are left out of the apply here: ``kubeloop webhook`` is tested with
them on its own. The in-process cluster runs the kubelet and only the garbage collector (the
cascade of a deleted CloneSet, kube-controller-manager's part in a real cluster).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from async_process import Kubeloop, run

from kubeloop.api import kruise
from kubeloop.client import PODS
from kubeloop.install import InstallOptions, install_manifests
from kubeloop.install.rbac import LEADER_ELECTION_ROLE, MANAGER_ROLE, SERVICE_ACCOUNT
from kubeloop.install.render import from_yaml, to_yaml
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import Authorizer, Decision
from kubeloop.server.auth.user import UserInfo
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.e2e]

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
NAMESPACE = "kubeloop-system"
USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
CLONESETS = f"clonesets.{kruise.GROUP}"
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
BASE = Path(__file__).resolve().parents[3] / "deploy" / "base"
Obj = dict[str, Any]


@dataclass
class DenialLog:
    """Wraps the server's authorizer: every request denied to the ServiceAccount, in order."""

    inner: Authorizer
    denied: list[RequestAttributes] = field(default_factory=list)

    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        decision = self.inner.authorize(user, attributes)
        if not decision.allowed and user.username == USER:
            self.denied.append(attributes)
        return decision


@dataclass
class Install:
    cluster: EmbeddedCluster
    denials: DenialLog
    kubeconfig: Path
    """Authenticates as the ServiceAccount with a token from ``kubectl create token``."""
    objects: list[Obj]
    workdir: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def install(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Install]:
    workdir = tmp_path_factory.mktemp("install")
    config = ClusterConfig(data_dir=workdir / "server", kubelet=quick_kubelet_config(nodes=1),
                           controllers=("garbagecollector",))
    async with EmbeddedCluster(config) as cluster:
        await cluster.wait_ready()
        state = cluster.server.state
        assert state is not None
        denials = DenialLog(state.authorizer)
        state.authorizer = denials
        admin = str(cluster.kubeconfig_path)
        objects = [obj for obj in install_manifests(InstallOptions()) if obj["kind"] not in WEBHOOK_KINDS]
        manifest = workdir / "install.yaml"
        manifest.write_text(to_yaml(objects))
        await run(KUBECTL, "--kubeconfig", admin, "apply", "-f", str(manifest))
        token = (await run(KUBECTL, "--kubeconfig", admin, "create", "token", SERVICE_ACCOUNT,
                           "-n", NAMESPACE)).strip()
        kubeconfig = yaml.safe_load(cluster.kubeconfig_path.read_text())
        kubeconfig["users"][0]["user"] = {"token": token}
        path = workdir / "sa-kubeconfig"
        path.write_text(yaml.safe_dump(kubeconfig))
        yield Install(cluster, denials, path, objects, workdir)


async def start_controllers(install: Install, name: str, *extra: str) -> Kubeloop:
    """``kubeloop controllers`` with the manager container's arguments and the ServiceAccount's token."""
    (deployment,) = [obj for obj in install.objects if obj["kind"] == "Deployment"]
    manager = deployment["spec"]["template"]["spec"]["containers"][0]
    args = [arg.replace("$(POD_NAMESPACE)", NAMESPACE) for arg in manager["args"]]
    args[args.index("--health-port") + 1] = "0"  # any free port: several tests may run at once
    return await Kubeloop.start(install.workdir / f"{name}.log", *args, *extra, "--kubeconfig", str(install.kubeconfig))


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


def settled(replicas: int, image: str) -> Callable[[Obj], bool]:
    def check(obj: Obj) -> bool:
        status = obj.get("status") or {}
        return (obj["spec"]["template"]["spec"]["containers"][0]["image"] == image
                and status.get("observedGeneration") == obj["metadata"]["generation"]
                and status.get("replicas") == status.get("updatedReadyReplicas") == replicas)
    return check


async def pods_of(install: Install, name: str) -> list[Obj]:
    listed = await install.cluster.client.list(PODS, namespace="default", label_selector=f"app={name}")
    items: list[Obj] = listed["items"]
    return items


async def delete_cloneset(install: Install, name: str) -> None:
    await install.cluster.client.delete(CLONESETS, name, namespace="default")
    await install.cluster.wait_deleted(CLONESETS, name, timeout=30)

    async def no_pods() -> bool:
        return not await pods_of(install, name)

    await until(no_pods, f"the pods of {name} to go")


async def test_a_cloneset_lives_and_dies_with_zero_denials(install: Install) -> None:
    client, cluster = install.cluster.client, install.cluster
    install.denials.denied.clear()
    controllers = await start_controllers(install, "full")
    try:
        await client.create(CLONESETS, cloneset("web", 2, "nginx:1.26"), namespace="default")
        await cluster.wait_for(CLONESETS, "web", settled(2, "nginx:1.26"), timeout=60)
        await client.patch(CLONESETS, "web", {"spec": {"replicas": 3}}, patch_type="merge", namespace="default")
        await cluster.wait_for(CLONESETS, "web", settled(3, "nginx:1.26"), timeout=60)
        before = {pod["metadata"]["uid"] for pod in await pods_of(install, "web")}
        image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
        await client.patch(CLONESETS, "web", image, patch_type="merge", namespace="default")
        await cluster.wait_for(CLONESETS, "web", settled(3, "nginx:1.27"), timeout=60)
        after = await pods_of(install, "web")
        assert {pod["metadata"]["uid"] for pod in after} == before  # in place: the same pods
        assert {pod["spec"]["containers"][0]["image"] for pod in after} == {"nginx:1.27"}
        await delete_cloneset(install, "web")
        leases = await client.list("leases.coordination.k8s.io", namespace=NAMESPACE)
        assert [lease["metadata"]["name"] for lease in leases["items"]] == ["kubeloop-controller-manager-leader"]
    finally:
        await controllers.stop()
    assert install.denials.denied == []
    assert "forbidden" not in controllers.output().lower()


def covers(rule: Obj, denied: RequestAttributes) -> bool:
    resource = f"{denied.resource}/{denied.subresource}" if denied.subresource else denied.resource
    return (denied.resource_request and denied.group in rule["apiGroups"] and resource in rule["resources"]
            and denied.verb in rule["verbs"])


def role_cases() -> list[tuple[str, int]]:
    objects = install_manifests(InstallOptions())
    cases = []
    for obj in objects:
        if (obj["kind"], obj["metadata"]["name"]) in (("ClusterRole", MANAGER_ROLE), ("Role", LEADER_ELECTION_ROLE)):
            cases.extend((f"{obj['kind']}/{obj['metadata']['name']}", index) for index in range(len(obj["rules"])))
    return cases


SPREAD = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchLabels": {"app": "probe"}}}]
"""Makes a scale-in rank its victims by node, so the controller reads Nodes."""
GATES = ("--feature-gates", "PreDownloadImageForInPlaceUpdate=true")
"""The gate under which the controller uses ImagePullJobs (it lists them once a CloneSet converges)."""


@pytest.mark.parametrize(("role", "index"), role_cases())
async def test_each_rule_is_needed(install: Install, role: str, index: int) -> None:
    kind, name = role.split("/")
    resource = f"{'clusterroles' if kind == 'ClusterRole' else 'roles'}.rbac.authorization.k8s.io"
    namespace = None if kind == "ClusterRole" else NAMESPACE
    client = install.cluster.client
    original = await client.get(resource, name, namespace=namespace)
    removed = original["rules"][index]
    reduced = {**original, "rules": [r for i, r in enumerate(original["rules"]) if i != index]}
    await client.update(resource, reduced, namespace=namespace)
    install.denials.denied.clear()

    def refused() -> bool:
        return any(covers(removed, denied) for denied in install.denials.denied)

    async def step(replicas: int, image: str) -> None:
        async def refused_or_settled() -> bool:
            return refused() or settled(replicas, image)(await client.get(CLONESETS, "probe", namespace="default"))

        await until(refused_or_settled, f"a denial or {replicas} pods of {image}", timeout=30)

    controllers = await start_controllers(install, f"without-{name}-{index}", *GATES)
    try:
        # Create, scale in, update in place: stop at the first denial the removed rule covers.
        await client.create(CLONESETS, cloneset("probe", 2, "nginx:1.26", topologySpreadConstraints=SPREAD),
                            namespace="default")
        await step(2, "nginx:1.26")
        if not refused():
            await client.patch(CLONESETS, "probe", {"spec": {"replicas": 1}}, patch_type="merge", namespace="default")
            await step(1, "nginx:1.26")
        if not refused():
            image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
            await client.patch(CLONESETS, "probe", image, patch_type="merge", namespace="default")
            await step(1, "nginx:1.27")
        assert refused(), (f"without {removed} the CloneSet still lived; denied: {install.denials.denied}\n"
                           + controllers.output())
    finally:
        await controllers.stop()
        latest = await client.get(resource, name, namespace=namespace)
        await client.update(resource, {**latest, "rules": original["rules"]}, namespace=namespace)
        await delete_cloneset(install, "probe")


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


async def test_the_server_accepts_kubectl_apply_k_of_the_whole_base(install: Install) -> None:
    # Server-side dry run: every object of deploy/base, the webhook configurations too, passes
    # the server's decoding, defaulting and validation, and nothing is stored.
    out = await run(KUBECTL, "--kubeconfig", str(install.cluster.kubeconfig_path), "apply", "-k", str(BASE),
                    "--dry-run=server")
    applied = {line.split(" ")[0] for line in out.splitlines()}
    expected = {f"{obj['kind'].lower()}.{obj['apiVersion'].split('/')[0]}/{obj['metadata']['name']}"
                if "/" in obj["apiVersion"] else f"{obj['kind'].lower()}/{obj['metadata']['name']}"
                for obj in install_manifests(InstallOptions())}
    assert applied == expected
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        listed = await install.cluster.client.list(f"{kind}.admissionregistration.k8s.io")
        assert [item["metadata"]["name"] for item in listed["items"]] == []
