"""kubeloop issue 14 item 5: the kubectl builds the issue names, against the embedded cluster.

For every kubectl 1.27-1.33 found and 1.20 if one is installed: ``cluster-info``, ``expose``,
every ``create`` subcommand (namespace, configmap, secret generic|tls|docker-registry,
deployment, service clusterip|nodeport|loadbalancer|externalname, job, cronjob, role,
rolebinding, clusterrole, clusterrolebinding, quota, poddisruptionbudget, priorityclass,
ingress, serviceaccount; 1.20 skips ``create cronjob`` and ``create poddisruptionbudget``, which
post batch/v1beta1 and policy/v1beta1, removed in 1.25; ``create token`` is left out: the
server does not serve TokenRequests), ``run``, ``drain`` (a pod evicted), ``rollout status``,
``api-resources`` compared with :mod:`kubeloop.api.catalog` (kube-apiserver 1.33's defaults)
plus the cluster's CustomResourceDefinitions, and ``explain`` for every kind (every kind with the
newest build, a sample with the others, to keep the run short).

Builds 1.32 and later send typed objects as Kubernetes protobuf (``create`` subcommands,
``drain``'s evictions, ``run``), so the matrix is also the end-to-end test of the server's
protobuf bodies and answers. The test :func:`test_matrix_builds` lists what was found and what runs.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from kubectl_runner import KubectlBuild, KubectlRunner, kubectl_builds

from kubeloop.api.catalog import CATALOG, Entry
from kubeloop.client import DEPLOYMENTS, NAMESPACES
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

NAMED_MINORS = frozenset({20, 27, 28, 29, 30, 31, 32, 33})
FOUND = kubectl_builds()
BUILDS = [b for b in FOUND if b.minor in NAMED_MINORS]
EXPLAIN_SAMPLE = ("pods", "deployments.apps", "customresourcedefinitions.apiextensions.k8s.io",
                  "events.events.k8s.io", "flowschemas.flowcontrol.apiserver.k8s.io")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("kubectl-matrix"), kubelet=quick_kubelet_config(nodes=1))
    async with EmbeddedCluster(config) as started:
        await started.wait_ready()
        yield started


@pytest.fixture(scope="module", params=BUILDS, ids=[b.version for b in BUILDS])
def build(request: pytest.FixtureRequest) -> KubectlBuild:
    found: KubectlBuild = request.param
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def kubectl(build: KubectlBuild, cluster: EmbeddedCluster, tmp_path: Path,
                  record_property: Callable[[str, object], None]) -> KubectlRunner:
    record_property("kubectl", f"{build.version} {build.path}")
    namespace = f"m{build.minor}-{tmp_path.name.lower().replace('_', '-')[-30:].strip('-')}"
    await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    home = tmp_path / "home"
    home.mkdir()
    return KubectlRunner(build, cluster.kubeconfig_path, home, namespace)


async def test_matrix_builds() -> None:
    """The issue's builds in the 1.27-1.33 range are on this machine (1.20 only if installed)."""
    print("found:", [f"{b.version} {b.path}" for b in FOUND], "running:", [b.version for b in BUILDS])
    assert {b.minor for b in BUILDS} >= {27, 28, 29, 30, 31, 32, 33}


async def test_cluster_info(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    out = await kubectl.ok("cluster-info")
    plane = "control plane"  # kubectl says so since 1.20 (before, "master")
    assert f"Kubernetes {plane} is running at {cluster.url}" in re.sub(r"\x1b\[[0-9;]*m", "", out), out


async def test_expose(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    ns = kubectl.namespace
    await cluster.client.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}, namespace=ns)
    assert await kubectl.ok("expose", "deployment", "web", "--port=80", "--target-port=8080") == "service/web exposed\n"
    service = await cluster.client.get("services", "web", namespace=ns)
    assert service["spec"]["selector"] == {"app": "web"}
    assert [(p["port"], p["targetPort"], p["protocol"]) for p in service["spec"]["ports"]] == [(80, 8080, "TCP")]
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", service["spec"]["clusterIP"])


def create_commands(build: KubectlBuild, tls: tuple[Path, Path]) -> list[tuple[list[str], str, str, str]]:
    """(kubectl args, expected output, resource to read back, name) per ``create`` subcommand;
    ``tls`` a certificate and key file for ``create secret tls``. Cluster-scoped names carry the
    build's version (two builds may share a minor)."""
    minor = build.minor
    suffix = re.sub(r"[^a-z0-9]+", "-", build.version.lower()).strip("-")
    cert, key = tls
    commands = [
        (["namespace", f"ns-{suffix}"], f"namespace/ns-{suffix} created\n", "namespaces", f"ns-{suffix}"),
        (["configmap", "cm", "--from-literal=a=b"], "configmap/cm created\n", "configmaps", "cm"),
        (["secret", "generic", "generic", "--from-literal=a=b"], "secret/generic created\n", "secrets", "generic"),
        (["secret", "tls", "tls", f"--cert={cert}", f"--key={key}"], "secret/tls created\n", "secrets", "tls"),
        (["secret", "docker-registry", "registry", "--docker-server=r.example.com", "--docker-username=u",
          "--docker-password=p"], "secret/registry created\n", "secrets", "registry"),
        (["deployment", "deploy", "--image=nginx:1.25", "--replicas=1"], "deployment.apps/deploy created\n",
         "deployments", "deploy"),
        (["service", "nodeport", "nodeport", "--tcp=80:8080"], "service/nodeport created\n", "services", "nodeport"),
        (["service", "loadbalancer", "lb", "--tcp=80:8080"], "service/lb created\n", "services", "lb"),
        (["service", "externalname", "external", "--external-name=db.example.com"], "service/external created\n",
         "services", "external"),
        (["clusterrolebinding", f"reader-{suffix}", f"--clusterrole=reader-{suffix}", "--user=alice"],
         f"clusterrolebinding.rbac.authorization.k8s.io/reader-{suffix} created\n", "clusterrolebindings",
         f"reader-{suffix}"),
        (["serviceaccount", "robot"], "serviceaccount/robot created\n", "serviceaccounts", "robot"),
        (["service", "clusterip", "svc", "--tcp=80:8080"], "service/svc created\n", "services", "svc"),
        (["job", "job", "--image=busybox"], "job.batch/job created\n", "jobs", "job"),
        (["cronjob", "cron", "--image=busybox", "--schedule=*/5 * * * *"], "cronjob.batch/cron created\n",
         "cronjobs", "cron"),
        (["role", "reader", "--verb=get", "--verb=list", "--resource=pods"],
         "role.rbac.authorization.k8s.io/reader created\n", "roles", "reader"),
        (["rolebinding", "reader", "--role=reader", "--user=alice"],
         "rolebinding.rbac.authorization.k8s.io/reader created\n", "rolebindings", "reader"),
        (["clusterrole", f"reader-{suffix}", "--verb=get", "--resource=nodes"],
         f"clusterrole.rbac.authorization.k8s.io/reader-{suffix} created\n", "clusterroles", f"reader-{suffix}"),
        (["quota", "quota", "--hard=pods=5,services=3"], "resourcequota/quota created\n", "resourcequotas", "quota"),
        (["poddisruptionbudget", "pdb", "--selector=app=web", "--min-available=1"],
         "poddisruptionbudget.policy/pdb created\n", "poddisruptionbudgets", "pdb"),
        (["priorityclass", f"high-{suffix}", "--value=1000"],
         f"priorityclass.scheduling.k8s.io/high-{suffix} created\n", "priorityclasses", f"high-{suffix}"),
        (["ingress", "ing", "--rule=foo.example.com/bar=svc:8080"], "ingress.networking.k8s.io/ing created\n",
         "ingresses", "ing"),
    ]
    if minor < 25:
        # 1.20 posts batch/v1beta1 CronJobs and policy/v1beta1 PodDisruptionBudgets, removed in 1.25.
        commands = [c for c in commands if c[0][0] not in ("cronjob", "poddisruptionbudget")]
    return commands


async def test_create_subcommands(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    cluster_scoped = {"clusterroles", "clusterrolebindings", "priorityclasses", "namespaces"}
    tls = (cluster.kubeconfig_path.parent / "server.crt", cluster.kubeconfig_path.parent / "server.key")
    for args, expected, resource, name in create_commands(kubectl.build, tls):
        result = await kubectl.run("create", *args)
        assert (result.code, result.out) == (0, expected), f"create {' '.join(args)}: {result.err}"
        namespace = None if resource in cluster_scoped else kubectl.namespace
        made = await cluster.client.get(resource, name, namespace=namespace)
        assert made["metadata"]["name"] == name


def parse_api_resources(out: str) -> set[tuple[str, str, bool, str, tuple[str, ...]]]:
    """``kubectl api-resources`` rows as (name, apiVersion, namespaced, kind, shortnames); the
    columns are cut where the header's words start (SHORTNAMES may be blank)."""
    lines = out.splitlines()
    header = lines[0]
    columns = [m.start() for m in re.finditer(r"\S+", header)]
    titles = header.split()
    rows = set()
    for line in lines[1:]:
        cells = {title: line[start:end].strip()
                 for title, start, end in zip(titles, columns, [*columns[1:], None])}
        version = cells.get("APIVERSION") or cells.get("APIGROUP", "")
        rows.add((cells["NAME"], version, cells["NAMESPACED"] == "true", cells["KIND"],
                  tuple(sorted(filter(None, cells["SHORTNAMES"].split(","))))))
    return rows


def catalog_row(entry: Entry) -> tuple[str, str, bool, str, tuple[str, ...]]:
    version = f"{entry.group}/{entry.version}" if entry.group else entry.version
    return entry.resource, version, entry.namespaced, entry.kind, tuple(sorted(entry.short_names))


async def test_api_resources_match_the_catalog(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    crds = (await cluster.client.list("customresourcedefinitions"))["items"]
    # api-resources lists each resource once, at its group's preferred version: the first listed.
    preferred: dict[tuple[str, str], Entry] = {}
    for entry in CATALOG:
        preferred.setdefault((entry.group, entry.resource), entry)
    expected = {catalog_row(entry) for entry in preferred.values()}
    for crd in crds:
        spec = crd["spec"]
        stored = next(v["name"] for v in spec["versions"] if v.get("storage"))
        expected.add((spec["names"]["plural"], f"{spec['group']}/{stored}", spec["scope"] == "Namespaced",
                      spec["names"]["kind"], tuple(sorted(spec["names"].get("shortNames", ())))))
    listed = parse_api_resources(await kubectl.ok("api-resources"))
    assert listed - expected == set()
    assert expected - listed == set()


def explain_targets(minor: int, newest: int) -> list[Entry]:
    if minor == newest:
        return list(CATALOG)
    return [e for e in CATALOG if (f"{e.resource}.{e.group}" if e.group else e.resource) in EXPLAIN_SAMPLE]


async def test_explain_every_kind(kubectl: KubectlRunner) -> None:
    """``explain`` names each kind and its version (every kind with the newest build)."""
    targets = explain_targets(kubectl.build.minor, max(b.minor for b in BUILDS))
    assert targets
    for entry in targets:
        version = f"{entry.group}/{entry.version}" if entry.group else entry.version
        out = await kubectl.ok("explain", entry.resource, f"--api-version={version}")
        assert re.search(rf"^KIND:\s+{entry.kind}$", out, re.M), (entry, out[:300])
        # OpenAPI v3 explain (1.27+) prints GROUP and VERSION apart; v2 explain prints group/version.
        group = re.search(r"^GROUP:\s+(\S+)$", out, re.M)
        shown = f"{group.group(1)}/" if group else ""
        printed = re.search(r"^VERSION:\s+(\S+)$", out, re.M)
        assert printed is not None and shown + printed.group(1) == version, (entry, out[:300])
        assert re.search(r"^DESCRIPTION:", out, re.M), (entry, out[:300])


async def test_run_drain_and_rollout_status(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    """``run`` a pod, ``drain`` the node it runs on (the pod is evicted), ``rollout status`` of a
    Deployment. The node is uncordoned again whatever happens."""
    ns = kubectl.namespace
    assert await kubectl.ok("run", "runner", "--image=nginx:1.25", f"--labels=drain={ns}") == "pod/runner created\n"
    assert await kubectl.ok("wait", "--for=condition=Ready", "pod/runner", "--timeout=60s")
    node = (await cluster.client.get("pods", "runner", namespace=ns))["spec"]["nodeName"]
    try:
        out = await kubectl.ok("drain", node, f"--pod-selector=drain={ns}", "--ignore-daemonsets",
                               "--delete-emptydir-data", "--force", "--timeout=60s")
        # 1.20 ends with "node/N evicted", later builds with "node/N drained".
        assert "pod/runner evicted" in out and re.search(rf"^node/{node} (drained|evicted)$", out, re.M), out
        assert (await cluster.client.get("nodes", node))["spec"]["unschedulable"] is True
        pods = await cluster.client.list("pods", namespace=ns, label_selector=f"drain={ns}")
        assert pods["items"] == [] or all(p["metadata"].get("deletionTimestamp") for p in pods["items"])
    finally:
        await kubectl.ok("uncordon", node)
    await kubectl.ok("create", "deployment", "rolled", "--image=nginx:1.25", "--replicas=2")
    status = await kubectl.ok("rollout", "status", "deployment/rolled", "--timeout=90s")
    assert status.rstrip().endswith('deployment "rolled" successfully rolled out'), status
