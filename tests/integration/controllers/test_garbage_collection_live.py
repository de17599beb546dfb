"""The garbage collector against the embedded API server: each propagation policy, dangling
owner references, and owners of a custom resource kind (upstream
``pkg/controller/garbagecollector``, ``test/integration/garbagecollector``)."""

from __future__ import annotations

from typing import Any

from controller_kit import NAMESPACE, ControllerRunner, list_pods
from deployment_kit import LABELS, RolloutWatcher, deployment, owned_replica_sets

from kubeloop.client import CONFIG_MAPS, CUSTOM_RESOURCE_DEFINITIONS, DEPLOYMENTS, REPLICA_SETS, ApiClient
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
ALL = ("replicaset", "deployment", "garbagecollector")


async def replica_sets(client: ApiClient) -> list[Obj]:
    return list((await client.list(REPLICA_SETS, namespace=NAMESPACE))["items"])


async def deployment_gone(client: ApiClient, name: str) -> bool:
    items = (await client.list(DEPLOYMENTS, namespace=NAMESPACE))["items"]
    return all(d["metadata"]["name"] != name for d in items)


async def running_deployment(client: ApiClient, runner: ControllerRunner, name: str, replicas: int) -> Obj:
    await runner.start(*ALL)
    await client.create(DEPLOYMENTS, deployment(name, replicas), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, name)
    done: Obj = await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    return done


async def test_background_deletion_cascades(client: ApiClient, runner: ControllerRunner) -> None:
    d = await running_deployment(client, runner, "bg", 2)
    await client.delete(DEPLOYMENTS, "bg", namespace=NAMESPACE, propagation_policy="Background",
                        preconditions={"uid": d["metadata"]["uid"]})

    async def all_gone() -> bool:
        return await deployment_gone(client, "bg") and not await replica_sets(client) \
            and not await list_pods(client, LABELS)

    await eventually(all_gone, what="deployment, replica sets and pods to go")


async def test_orphan_deletion_keeps_dependents(client: ApiClient, runner: ControllerRunner) -> None:
    d = await running_deployment(client, runner, "orph", 2)
    await client.delete(DEPLOYMENTS, "orph", namespace=NAMESPACE, propagation_policy="Orphan")

    async def orphaned() -> bool:
        remaining = await replica_sets(client)
        return await deployment_gone(client, "orph") and len(remaining) == 1 \
            and not remaining[0]["metadata"].get("ownerReferences")

    await eventually(orphaned, what="the deployment to go and its replica set to lose its owner reference")
    assert len(await list_pods(client, LABELS)) == 2
    pods = await list_pods(client, LABELS)
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in pods)
    # A new deployment with the same selector and template adopts the orphaned replica set.
    adopter = await client.create(DEPLOYMENTS, deployment("adopter", 2), namespace=NAMESPACE)

    async def adopted() -> bool:
        owned = await owned_replica_sets(client, adopter)
        return len(owned) == 1 and owned[0]["metadata"]["uid"] == (await replica_sets(client))[0]["metadata"]["uid"]

    await eventually(adopted)
    assert d["metadata"]["uid"] != adopter["metadata"]["uid"]


async def test_foreground_deletion_waits_for_dependents(client: ApiClient, runner: ControllerRunner) -> None:
    await running_deployment(client, runner, "fg", 2)
    pods = await list_pods(client, LABELS)
    blocker = pods[0]["metadata"]["name"]
    await client.patch("pods", blocker, {"metadata": {"finalizers": ["example.com/hold"]}}, namespace=NAMESPACE)
    deleted = await client.delete(DEPLOYMENTS, "fg", namespace=NAMESPACE, propagation_policy="Foreground")
    assert "foregroundDeletion" in deleted["metadata"]["finalizers"]

    async def only_blocker_left() -> bool:
        remaining = await list_pods(client, LABELS)
        return len(remaining) == 1 and remaining[0]["metadata"].get("deletionTimestamp") is not None

    await eventually(only_blocker_left, what="every pod but the held one to go")
    # The held pod blocks its replica set, which blocks the deployment.
    assert not await deployment_gone(client, "fg")
    assert len(await replica_sets(client)) == 1
    await client.patch("pods", blocker, {"metadata": {"finalizers": None}}, namespace=NAMESPACE)

    async def all_gone() -> bool:
        return await deployment_gone(client, "fg") and not await replica_sets(client) \
            and not await list_pods(client, LABELS)

    await eventually(all_gone, what="the foreground deletion to finish")


async def test_dangling_and_partial_owner_references(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start("garbagecollector")
    owner = await client.create(CONFIG_MAPS, {"metadata": {"name": "owner"}}, namespace=NAMESPACE)
    missing = {"apiVersion": "v1", "kind": "ConfigMap", "name": "never", "uid": "no-such-uid"}
    real = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await client.create(CONFIG_MAPS, {"metadata": {"name": "lonely", "ownerReferences": [missing]}},
                        namespace=NAMESPACE)
    await client.create(CONFIG_MAPS, {"metadata": {"name": "shared", "ownerReferences": [missing, real]}},
                        namespace=NAMESPACE)

    async def collected() -> bool:
        names = {c["metadata"]["name"]: c for c in (await client.list(CONFIG_MAPS, namespace=NAMESPACE))["items"]}
        return "lonely" not in names and "shared" in names \
            and names["shared"]["metadata"].get("ownerReferences") == [real]

    await eventually(collected, what="the orphan with a non-existent owner to go and the dangling ref to be cut")


async def test_custom_resource_owner_cascades(client: ApiClient, runner: ControllerRunner) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }
    await client.create(CUSTOM_RESOURCE_DEFINITIONS, crd)
    client.discovery.invalidate()
    widgets = await client.resource("widgets.example.com")
    await runner.start("garbagecollector")
    widget = await client.create(widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                                           "metadata": {"name": "w"}}, namespace=NAMESPACE)
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": widget["metadata"]["uid"],
           "blockOwnerDeletion": True}
    await client.create(CONFIG_MAPS, {"metadata": {"name": "part", "ownerReferences": [ref]}}, namespace=NAMESPACE)
    await client.create(widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                                  "metadata": {"name": "child", "ownerReferences": [ref]}}, namespace=NAMESPACE)
    await client.delete(widgets, "w", namespace=NAMESPACE, propagation_policy="Foreground")

    async def cascaded() -> bool:
        configmaps = {c["metadata"]["name"] for c in (await client.list(CONFIG_MAPS, namespace=NAMESPACE))["items"]}
        remaining = {w["metadata"]["name"] for w in (await client.list(widgets, namespace=NAMESPACE))["items"]}
        return "part" not in configmaps and not remaining

    await eventually(cascaded, what="the widget and its dependents to go")


async def test_foreground_deletion_of_an_ownership_cycle_finishes(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start("garbagecollector")
    created = {name: await client.create(CONFIG_MAPS, {"metadata": {"name": name}}, namespace=NAMESPACE)
               for name in ("a", "b", "c")}

    def blocking_ref(name: str) -> Obj:
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": created[name]["metadata"]["uid"],
                "blockOwnerDeletion": True}

    # a is owned by c, b by a, c by b.
    for dependent, owner in (("a", "c"), ("b", "a"), ("c", "b")):
        await client.patch(CONFIG_MAPS, dependent, {"metadata": {"ownerReferences": [blocking_ref(owner)]}},
                           namespace=NAMESPACE)
    await client.delete(CONFIG_MAPS, "a", namespace=NAMESPACE, propagation_policy="Foreground")

    async def all_gone() -> bool:
        names = {c["metadata"]["name"] for c in (await client.list(CONFIG_MAPS, namespace=NAMESPACE))["items"]}
        return not names & {"a", "b", "c"}

    await eventually(all_gone, what="the cycle to be deleted")


async def test_a_solid_owner_keeps_a_dependent_of_a_foreground_owner(client: ApiClient,
                                                                      runner: ControllerRunner) -> None:
    await runner.start("garbagecollector")
    going = await client.create(CONFIG_MAPS, {"metadata": {"name": "going"}}, namespace=NAMESPACE)
    staying = await client.create(CONFIG_MAPS, {"metadata": {"name": "staying"}}, namespace=NAMESPACE)
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "going", "uid": going["metadata"]["uid"],
             "blockOwnerDeletion": True},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "staying", "uid": staying["metadata"]["uid"]}]
    await client.create(CONFIG_MAPS, {"metadata": {"name": "shared", "ownerReferences": refs}}, namespace=NAMESPACE)
    await client.delete(CONFIG_MAPS, "going", namespace=NAMESPACE, propagation_policy="Foreground")

    async def settled() -> bool:
        items = {c["metadata"]["name"]: c for c in (await client.list(CONFIG_MAPS, namespace=NAMESPACE))["items"]}
        return "going" not in items and "shared" in items \
            and [r["name"] for r in items["shared"]["metadata"]["ownerReferences"]] == ["staying"]

    await eventually(settled, what="the owner to go while the shared dependent stays")
