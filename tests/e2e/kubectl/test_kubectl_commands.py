"""kubectl's everyday commands against the embedded cluster (issue 4 items 3 and 5;
the server sides kubectl relies on: PATCH, OpenAPI, Table output), with every kubectl build found on the machine.

One cluster serves the whole module; each kubectl build works in its own namespace, so the
builds never see each other's objects. Where kubectl prints fixed text, the text is compared
exactly; the state each command leaves is read back through the API. The builds used are
printed (``pytest -s``) and recorded as test properties.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
import yaml
from kubectl_runner import KubectlBuild, KubectlRunner, kubectl_builds

from kubeloop.client import DEPLOYMENTS, NAMESPACES, REPLICA_SETS, is_not_found
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BUILDS = kubectl_builds()
Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def deployment(name: str, replicas: int = 2, image: str = "nginx:1.25", labels: dict[str, str] | None = None) -> Obj:
    selector = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": labels if labels is not None else {"tier": "front"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": selector},
                                  "spec": {"containers": [{"name": "app", "image": image}],
                                           "terminationGracePeriodSeconds": 0}}}}


def cloneset(name: str, replicas: int = 2) -> Obj:
    selector = {"app": name}
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": selector},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("kubectl-cluster"), kubelet=quick_kubelet_config(nodes=2))
    async with EmbeddedCluster(config) as started:
        yield started


@pytest.fixture(scope="module", params=BUILDS, ids=[b.version for b in BUILDS])
def build(request: pytest.FixtureRequest) -> KubectlBuild:
    found: KubectlBuild = request.param
    print(f"kubectl {found.version} at {found.path}")
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def kubectl(build: KubectlBuild, cluster: EmbeddedCluster, tmp_path: Path,
                  record_property: Callable[[str, object], None]) -> KubectlRunner:
    """A runner for ``build`` in a fresh namespace of its own."""
    record_property("kubectl", f"{build.version} {build.path}")
    namespace = f"k{build.minor}-{tmp_path.name.lower().replace('_', '-')[-40:].strip('-')}"
    await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    home = tmp_path / "home"
    home.mkdir()
    return KubectlRunner(build, cluster.kubeconfig_path, home, namespace)


def write(directory: Path, name: str, obj: Obj) -> str:
    path = directory / name
    path.write_bytes(orjson.dumps(obj))
    return str(path)


async def test_kubectl_builds_found() -> None:
    """Debian's kubectl 1.20 and at least one modern build are on the machine."""
    minors = [b.minor for b in BUILDS]
    assert 20 in minors and max(minors) >= 27, BUILDS


async def test_apply_three_way_merge(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns, client = kubectl.namespace, cluster.client
    manifest = deployment("web", labels={"tier": "front", "team": "a"})
    path = write(tmp_path, "web.json", manifest)
    assert await kubectl.ok("apply", "-f", path) == "deployment.apps/web created\n"
    live = await client.get(DEPLOYMENTS, "web", namespace=ns)
    assert orjson.loads(live["metadata"]["annotations"][LAST_APPLIED]) == {**manifest, "metadata": {
        **manifest["metadata"], "annotations": {}, "namespace": ns}}
    assert await kubectl.ok("apply", "-f", path) == "deployment.apps/web unchanged\n"
    unchanged = await client.get(DEPLOYMENTS, "web", namespace=ns)
    assert unchanged["metadata"]["generation"] == live["metadata"]["generation"]

    # A label someone else added survives; one dropped from the manifest is removed.
    assert await kubectl.ok("label", "deployment", "web", "owner=ops") == "deployment.apps/web labeled\n"
    changed = deployment("web", replicas=3, image="nginx:1.26", labels={"tier": "front"})
    assert await kubectl.ok("apply", "-f", write(tmp_path, "web.json", changed)) == "deployment.apps/web configured\n"
    after = await client.get(DEPLOYMENTS, "web", namespace=ns)
    assert after["metadata"]["labels"] == {"tier": "front", "owner": "ops"}
    assert after["spec"]["replicas"] == 3
    assert after["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert orjson.loads(after["metadata"]["annotations"][LAST_APPLIED])["spec"]["replicas"] == 3


async def test_apply_cloneset(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    """Custom resources get a JSON merge patch; the defaulted container list makes every
    re-apply send one (as against a real cluster with Kruise's defaulting webhook), which
    changes nothing."""
    ns, client = kubectl.namespace, cluster.client
    path = write(tmp_path, "cs.json", cloneset("cs"))
    created = await kubectl.run("apply", "-f", path)
    assert (created.code, created.out, created.err) == (0, "cloneset.apps.kruise.io/cs created\n", "")
    first = await client.get(CLONESETS, "cs", namespace=ns)
    again = await kubectl.run("apply", "-f", path)
    assert again.code == 0 and again.err == "", again.err
    reapplied = await client.get(CLONESETS, "cs", namespace=ns)
    assert reapplied["metadata"]["generation"] == first["metadata"]["generation"]
    scaled = await kubectl.run("apply", "-f", write(tmp_path, "cs.json", cloneset("cs", replicas=3)))
    assert (scaled.code, scaled.out, scaled.err) == (0, "cloneset.apps.kruise.io/cs configured\n", "")
    assert (await client.get(CLONESETS, "cs", namespace=ns))["spec"]["replicas"] == 3
    table = await kubectl.ok("get", "cloneset", "cs")
    assert table.split("\n")[0].split() == ["NAME", "DESIRED", "UPDATED", "UPDATED_READY", "UPDATED_AVAILABLE",
                                            "READY", "TOTAL", "AGE"]


async def test_create_and_get(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns = kubectl.namespace
    path = write(tmp_path, "api.json", deployment("api", replicas=1, labels={"tier": "back"}))
    assert await kubectl.ok("create", "-f", path) == "deployment.apps/api created\n"
    assert await kubectl.fails("create", "-f", path) == (
        f'Error from server (AlreadyExists): error when creating "{path}": deployments.apps "api" already exists\n')
    await kubectl.ok("create", "-f", write(tmp_path, "www.json", deployment("www", replicas=1)))
    await cluster.wait_for(DEPLOYMENTS, "api", lambda d: d.get("status", {}).get("availableReplicas") == 1,
                           namespace=ns)

    as_yaml = yaml.safe_load(await kubectl.ok("get", "deployment", "api", "-o", "yaml"))
    assert (as_yaml["kind"], as_yaml["metadata"]["name"], as_yaml["spec"]["replicas"]) == ("Deployment", "api", 1)
    as_json = orjson.loads(await kubectl.ok("get", "deployments", "-o", "json"))
    assert as_json["kind"] == "List" and sorted(i["metadata"]["name"] for i in as_json["items"]) == ["api", "www"]

    wide = (await kubectl.ok("get", "deployment", "api", "-o", "wide")).splitlines()
    assert wide[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[:4] == ["api", "1/1", "1", "1"] and wide[1].split()[5:] == ["app", "nginx:1.25", "app=api"]
    selected = (await kubectl.ok("get", "deployments", "-l", "tier=back", "-o", "name")).split()
    assert selected == ["deployment.apps/api"]

    everywhere = (await kubectl.ok("get", "deployments", "--all-namespaces")).splitlines()
    assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert {tuple(line.split()[:2]) for line in everywhere[1:]} >= {(ns, "api"), (ns, "www")}


async def test_get_watch(kubectl: KubectlRunner, tmp_path: Path) -> None:
    """``get -w`` prints the current rows, then one row per change, until stopped."""
    await kubectl.ok("create", "-f", write(tmp_path, "w.json", deployment("watched", replicas=0)))
    process = await kubectl.start("get", "deployment", "watched", "-w", "-o", "custom-columns=NAME:.metadata.name,"
                                  "REPLICAS:.spec.replicas", "--request-timeout=60s")
    assert process.stdout is not None
    try:
        lines = [await asyncio.wait_for(process.stdout.readline(), 30) for _ in range(2)]
        assert [line.decode().split() for line in lines] == [["NAME", "REPLICAS"], ["watched", "0"]]
        await kubectl.ok("scale", "deployment", "watched", "--replicas=2")
        while (row := (await asyncio.wait_for(process.stdout.readline(), 30)).decode().split()) != ["watched", "2"]:
            assert row[0] == "watched", row
    finally:
        process.terminate()
        await process.wait()


async def test_describe(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns, client = kubectl.namespace, cluster.client
    await kubectl.ok("apply", "-f", write(tmp_path, "d.json", deployment("shown", replicas=1)))
    await cluster.wait_for_condition(DEPLOYMENTS, "shown", "Available", namespace=ns)
    (replica_set,) = (await client.list(REPLICA_SETS, namespace=ns, label_selector="app=shown"))["items"]
    rs_name = replica_set["metadata"]["name"]

    described = await kubectl.ok("describe", "deployment", "shown")
    assert re.search(r"^Name:\s+shown$", described, re.M)
    replicas = r"^Replicas:\s+1 desired \| 1 updated \| 1 total \| 1 available \| 0 unavailable$"
    assert re.search(replicas, described, re.M), described
    assert re.search(rf"^NewReplicaSet:\s+{rs_name} \(1/1 replicas created\)$", described, re.M)
    described_rs = await kubectl.ok("describe", "replicaset", rs_name)
    assert re.search(r"^Controlled By:\s+Deployment/shown$", described_rs, re.M)
    assert re.search(r"^Pods Status:\s+1 Running / 0 Waiting / 0 Succeeded / 0 Failed$", described_rs, re.M)
    described_pod = await kubectl.ok("describe", "pod", "-l", "app=shown")
    assert re.search(rf"^Controlled By:\s+ReplicaSet/{rs_name}$", described_pod, re.M)
    assert re.search(r"^Status:\s+Running$", described_pod, re.M)
    (node,) = re.findall(r"^Node:\s+(\S+?)/", described_pod, re.M)
    described_node = await kubectl.ok("describe", "node", node)
    assert re.search(rf"^Name:\s+{node}$", described_node, re.M)
    assert re.search(rf"^\s+{ns}\s+shown-", described_node, re.M), described_node


async def test_edit(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    """``edit`` with an editor that rewrites the file: the whole live object (status included)
    passes kubectl's validation against our OpenAPI document and the change is patched in."""
    ns, client = kubectl.namespace, cluster.client
    await kubectl.ok("apply", "-f", write(tmp_path, "e.json", deployment("edited", replicas=1)))
    await cluster.wait_for_condition(DEPLOYMENTS, "edited", "Available", namespace=ns)
    await kubectl.ok("apply", "-f", write(tmp_path, "c.json", cloneset("cse", replicas=1)))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/image: nginx:1.25/image: nginx:1.27/' \"$1\"\n")
    editor.chmod(0o755)
    env = {"EDITOR": str(editor), "KUBE_EDITOR": str(editor)}
    assert await kubectl.ok("edit", "deployment", "edited", env=env) == "deployment.apps/edited edited\n"
    edited = await client.get(DEPLOYMENTS, "edited", namespace=ns)
    assert edited["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert await kubectl.ok("edit", "cloneset", "cse", env=env) == "cloneset.apps.kruise.io/cse edited\n"
    edited_cs = await client.get(CLONESETS, "cse", namespace=ns)
    assert edited_cs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


async def test_patch_label_annotate_scale(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns, client = kubectl.namespace, cluster.client
    await kubectl.ok("create", "-f", write(tmp_path, "p.json", deployment("patched", replicas=1)))
    strategic = '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}'
    merge = '{"metadata":{"annotations":{"note":"merged"}}}'
    json_patch = '[{"op":"replace","path":"/spec/minReadySeconds","value":3}]'
    for patch_type, body in (("strategic", strategic), ("merge", merge), ("json", json_patch)):
        out = await kubectl.ok("patch", "deployment", "patched", "--type", patch_type, "-p", body)
        assert out == "deployment.apps/patched patched\n"
    patched = await client.get(DEPLOYMENTS, "patched", namespace=ns)
    assert patched["spec"]["template"]["spec"]["containers"] == [
        {**patched["spec"]["template"]["spec"]["containers"][0], "name": "app", "image": "nginx:1.27"}]
    assert patched["metadata"]["annotations"]["note"] == "merged"
    assert patched["spec"]["minReadySeconds"] == 3

    assert await kubectl.ok("label", "deployment", "patched", "stage=one") == "deployment.apps/patched labeled\n"
    assert "already has a value (one)" in await kubectl.fails("label", "deployment", "patched", "stage=two")
    await kubectl.ok("label", "deployment", "patched", "stage=two", "--overwrite")
    await kubectl.ok("label", "deployment", "patched", "tier-")
    # Some kubectl builds (1.27) print "annotate" rather than "annotated".
    annotated = await kubectl.ok("annotate", "deployment", "patched", "owner=ops")
    assert re.fullmatch(r"deployment\.apps/patched annotated?\n", annotated), annotated
    await kubectl.ok("annotate", "deployment", "patched", "note-")
    labelled = (await client.get(DEPLOYMENTS, "patched", namespace=ns))["metadata"]
    assert labelled["labels"] == {"stage": "two"}
    assert labelled["annotations"].get("owner") == "ops" and "note" not in labelled["annotations"]

    assert await kubectl.ok("scale", "deployment", "patched", "--replicas=3") == "deployment.apps/patched scaled\n"
    assert (await client.get(DEPLOYMENTS, "patched", namespace=ns))["spec"]["replicas"] == 3
    await kubectl.ok("apply", "-f", write(tmp_path, "c.json", cloneset("csp", replicas=1)))
    assert await kubectl.ok("scale", "cloneset", "csp", "--replicas=2") == "cloneset.apps.kruise.io/csp scaled\n"
    assert (await client.get(CLONESETS, "csp", namespace=ns))["spec"]["replicas"] == 2


async def test_wait_and_delete(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns, client = kubectl.namespace, cluster.client
    await kubectl.ok("create", "-f", write(tmp_path, "g.json", deployment("gone", replicas=2)))
    available = await kubectl.ok("wait", "--for=condition=Available", "deployment/gone", "--timeout=60s")
    assert available == "deployment.apps/gone condition met\n"

    waiter = await kubectl.start("wait", "--for=delete", "deployment/gone", "--timeout=60s")
    # kubectl 1.20 reports an object that is already gone as an error: let the waiter find it.
    await asyncio.sleep(1)
    assert await kubectl.ok("delete", "deployment", "gone", "--wait") == 'deployment.apps "gone" deleted\n'
    with pytest.raises(Exception) as missing:
        await client.get(DEPLOYMENTS, "gone", namespace=ns)
    assert is_not_found(missing.value)
    out, err = await asyncio.wait_for(waiter.communicate(), 60)
    assert (waiter.returncode, out.decode()) == (0, "deployment.apps/gone condition met\n"), err.decode()
    await cluster.wait_until(lambda: _no_pods(cluster, ns, "app=gone"))


async def _no_pods(cluster: EmbeddedCluster, namespace: str, selector: str) -> bool:
    return not (await cluster.client.list("pods", namespace=namespace, label_selector=selector))["items"]


async def test_discovery_and_explain(kubectl: KubectlRunner) -> None:
    versions = (await kubectl.ok("api-versions")).split()
    assert {"v1", "apps/v1", "apps.kruise.io/v1alpha1", "coordination.k8s.io/v1"} <= set(versions)
    resources = [line.split() for line in (await kubectl.ok("api-resources")).splitlines()]
    assert resources[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in resources
    assert any(row[0] == "clonesets" and row[-3:] == ["apps.kruise.io/v1alpha1", "true", "CloneSet"]
               for row in resources)
    explained = await kubectl.ok("explain", "deployment.spec.replicas")
    assert re.search(r"^FIELD:\s+replicas\s+<integer>$", explained, re.M), explained
    assert "replicas" in await kubectl.ok("explain", "cloneset.spec")
    server = orjson.loads(await kubectl.ok("version", "-o", "json"))["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "33")


async def test_diff_and_server_dry_run(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns, client = kubectl.namespace, cluster.client
    path = write(tmp_path, "d.json", deployment("diffed", replicas=1))
    await kubectl.ok("apply", "-f", path)
    same = await kubectl.run("diff", "-f", path)
    assert (same.code, same.out) == (0, ""), same.err
    changed = write(tmp_path, "d5.json", deployment("diffed", replicas=5))
    different = await kubectl.run("diff", "-f", changed)
    assert different.code == 1, different.err
    assert re.search(r"^-  replicas: 1$", different.out, re.M) and re.search(r"^\+  replicas: 5$", different.out, re.M)

    before = await client.get(DEPLOYMENTS, "diffed", namespace=ns)
    assert await kubectl.ok("apply", "-f", changed, "--dry-run=server") == (
        "deployment.apps/diffed configured (server dry run)\n")
    after = await client.get(DEPLOYMENTS, "diffed", namespace=ns)
    assert (after["metadata"]["generation"], after["spec"]["replicas"]) == (before["metadata"]["generation"], 1)
    fresh = write(tmp_path, "n.json", deployment("never", replicas=1))
    created = await kubectl.ok("apply", "-f", fresh, "--dry-run=server")
    assert created == "deployment.apps/never created (server dry run)\n"
    assert await kubectl.ok("get", "deployments", "-o", "name") == "deployment.apps/diffed\n"


async def test_bad_input_gets_kubectl_error_text(kubectl: KubectlRunner, tmp_path: Path) -> None:
    """Invalid objects and patches come back as kubectl prints them from a real server."""
    bad = deployment("bad")
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    path = write(tmp_path, "bad.json", bad)
    invalid = ('The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: '
               'map[string]string{"app":"other"}: `selector` does not match template `labels`\n')
    assert await kubectl.fails("apply", "-f", path) == invalid
    assert await kubectl.fails("create", "-f", path) == invalid

    await kubectl.ok("create", "-f", write(tmp_path, "ok.json", deployment("ok", replicas=1)))
    mistyped = await kubectl.fails("patch", "deployment", "ok", "--type", "merge", "-p", '{"spec":{"replicas":"x"}}')
    assert mistyped.startswith('The request is invalid: patch: Invalid value: "{'), mistyped
    assert mistyped.endswith(
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32\n"), mistyped
    assert await kubectl.fails("patch", "deployment", "ok", "--type", "merge", "-p",
                               '{"spec":{"replicas":-1}}') == (
        'The Deployment "ok" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n')
    label_error = await kubectl.fails("label", "deployment", "ok", "bad label=x")
    assert label_error.startswith('The Deployment "ok" is invalid: metadata.labels: Invalid value: "bad label": '
                                  "name part must consist of alphanumeric characters")
    json_error = await kubectl.fails("patch", "deployment", "ok", "--type", "json", "-p",
                                     '[{"op":"replace","path":"/spec/missing/x","value":1}]')
    assert json_error.startswith("The request is invalid"), json_error
    assert await kubectl.fails("get", "deployment", "nope") == (
        'Error from server (NotFound): deployments.apps "nope" not found\n')
    await kubectl.ok("apply", "-f", write(tmp_path, "c.json", cloneset("csx", replicas=1)))
    strategic = await kubectl.fails("patch", "cloneset", "csx", "--type", "strategic", "-p", '{"spec":{"replicas":2}}')
    # 1.20 prints the server's Status; later builds name the kind in their own words first.
    assert ("Error from server (UnsupportedMediaType): " in strategic
            or "strategic-merge-patch+json is not supported by apps.kruise.io/v1alpha1, Kind=CloneSet" in strategic)
    assert strategic.rstrip().endswith(
        "accepted media types include: application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml"), strategic


async def test_create_subcommands(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    """``create deployment`` / ``create configmap`` build the object in kubectl's typed client;
    builds from 1.32 send it as Kubernetes protobuf, read like JSON (every other ``create``
    subcommand: test_kubectl_matrix.py)."""
    ns = kubectl.namespace
    made = await kubectl.run("create", "deployment", "gen", "--image=nginx:1.25", "--replicas=1")
    config = await kubectl.run("create", "configmap", "settings", "--from-literal=mode=fast")
    assert (made.code, made.out) == (0, "deployment.apps/gen created\n"), made.err
    assert (config.code, config.out) == (0, "configmap/settings created\n"), config.err
    created = await cluster.client.get(DEPLOYMENTS, "gen", namespace=ns)
    assert created["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    # Defaulted on the way in, whatever the body's encoding.
    assert created["spec"]["strategy"]["type"] == "RollingUpdate"
    assert (await cluster.client.get("configmaps", "settings", namespace=ns))["data"] == {"mode": "fast"}


async def test_server_side_apply_create_and_change(kubectl: KubectlRunner, cluster: EmbeddedCluster,
                                                   tmp_path: Path) -> None:
    """``apply --server-side`` creates, then applies a changed manifest (ownership and conflicts:
    test_kubectl_server_side_apply.py)."""
    ns = kubectl.namespace
    path = write(tmp_path, "s.json", deployment("ssa", replicas=1))
    assert await kubectl.ok("apply", "--server-side", "-f", path) == "deployment.apps/ssa serverside-applied\n"
    changed = write(tmp_path, "s.json", deployment("ssa", replicas=2, image="nginx:1.26"))
    assert await kubectl.ok("apply", "--server-side", "-f", changed) == "deployment.apps/ssa serverside-applied\n"
    live = await cluster.client.get(DEPLOYMENTS, "ssa", namespace=ns)
    assert live["spec"]["replicas"] == 2
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
