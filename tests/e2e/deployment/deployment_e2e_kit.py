"""Builders and waits shared by the Deployment end-to-end tests.

Upstream's e2e harness (``test/e2e/framework/deployment/fixtures.go`` ``NewDeployment``): Deployment
labels, selector and template labels are the same map, the template has one container and
``terminationGracePeriodSeconds: 0``, no ``rollingUpdate`` block unless a test gives one (the server
defaults 25%/25%). Pod behaviour that upstream gets from special images (``webserver:404``,
``...:nonexistent``) comes from the simulated kubelet's ``sim.kubeloop.io/*`` template annotations here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kubeloop.client import DEPLOYMENTS, PODS, REPLICA_SETS, ApiClient, is_conflict
from kubeloop.testing.cluster import EmbeddedCluster
from kubeloop.testing.deployment_rules import (
    POD_TEMPLATE_HASH,
    is_complete,
    new_replica_set,
    revision_of,
    spec_replicas,
)
from kubeloop.testing.monitor import DeploymentMonitor

Obj = dict[str, Any]
StartMonitor = Callable[[str], Awaitable[DeploymentMonitor]]
"""The ``monitor_for`` fixture: starts a monitor for the named Deployment."""
NS = "default"
HTTPD = "httpd:2.4.38-alpine"
AGNHOST = "agnhost:2.40"
NEVER_READY = {"sim.kubeloop.io/never-ready": "true"}


def deployment(name: str, replicas: int, labels: dict[str, str], *, image: str = HTTPD,
               strategy: str = "RollingUpdate", rolling: Obj | None = None,
               pod_annotations: dict[str, str] | None = None, **spec: Any) -> Obj:
    strategy_block: Obj = {"type": strategy}
    if rolling is not None:
        strategy_block["rollingUpdate"] = rolling
    template_meta: Obj = {"labels": dict(labels)}
    if pod_annotations:
        template_meta["annotations"] = dict(pod_annotations)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "labels": dict(labels)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "strategy": strategy_block,
                     "template": {"metadata": template_meta,
                                  "spec": {"containers": [{"name": "httpd", "image": image}],
                                           "terminationGracePeriodSeconds": 0}},
                     **spec}}


def replica_set(name: str, replicas: int, labels: dict[str, str], *, image: str = HTTPD,
                annotations: dict[str, str] | None = None) -> Obj:
    """A bare ReplicaSet (upstream pre-creates these to be adopted)."""
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": NS, "labels": dict(labels),
                         "annotations": dict(annotations or {})},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "httpd", "image": image}],
                                           "terminationGracePeriodSeconds": 0}}}}


def selector_of(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def image_of(obj: Obj) -> str:
    return str(obj["spec"]["template"]["spec"]["containers"][0]["image"])


def condition(obj: Obj, type_: str) -> Obj | None:
    return next((dict(c) for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == type_),
                None)


def reason_of(obj: Obj, type_: str) -> str | None:
    found = condition(obj, type_)
    return None if found is None else str(found.get("reason"))


async def get_deployment(client: ApiClient, name: str) -> Obj:
    result: Obj = await client.get(DEPLOYMENTS, name, namespace=NS)
    return result


async def update_deployment(client: ApiClient, name: str, change: Callable[[Obj], None]) -> Obj:
    """GET, change, PUT; retried on conflicts (the controller writes status concurrently)."""
    for _ in range(20):
        body = await get_deployment(client, name)
        change(body)
        try:
            result: Obj = await client.update(DEPLOYMENTS, body, namespace=NS)
            return result
        except Exception as exc:
            if not is_conflict(exc):
                raise
    raise AssertionError(f"could not update deployment {name}")


def set_image(image: str, index: int = 0) -> Callable[[Obj], None]:
    def change(d: Obj) -> None:
        d["spec"]["template"]["spec"]["containers"][index]["image"] = image
    return change


def set_pod_annotations(annotations: dict[str, str] | None) -> Callable[[Obj], None]:
    def change(d: Obj) -> None:
        metadata = d["spec"]["template"].setdefault("metadata", {})
        if annotations:
            metadata["annotations"] = dict(annotations)
        else:
            metadata.pop("annotations", None)
    return change


async def owned_replica_sets(client: ApiClient, d: Obj) -> list[Obj]:
    uid = d["metadata"]["uid"]
    items = (await client.list(REPLICA_SETS, namespace=NS))["items"]
    found = [rs for rs in items if any(r.get("uid") == uid and r.get("controller")
                                       for r in rs["metadata"].get("ownerReferences") or ())]
    return sorted(found, key=lambda rs: (revision_of(rs) or 0, rs["metadata"]["name"]))


async def the_new_replica_set(client: ApiClient, d: Obj) -> Obj:
    new = new_replica_set(await owned_replica_sets(client, d), d["spec"]["template"])
    assert new is not None, f"deployment {d['metadata']['name']} has no new ReplicaSet"
    return dict(new)


async def pods_matching(client: ApiClient, labels: dict[str, str], *, active: bool = True) -> list[Obj]:
    items = (await client.list(PODS, namespace=NS, label_selector=selector_of(labels)))["items"]
    if active:
        items = [p for p in items if not p["metadata"].get("deletionTimestamp")]
    return sorted(items, key=lambda p: p["metadata"]["name"])


async def wait_complete(cluster: EmbeddedCluster, name: str, *, revision: int | None = None,
                        timeout: float = 30.0) -> Obj:
    """Wait until the Deployment is complete for its newest generation (and at ``revision``),
    then until its old ReplicaSets are scaled to 0 (they follow completion,
    as the status is computed from ReplicaSet statuses that may lag their specs)."""
    def done(d: Obj) -> bool:
        return is_complete(d) and (revision is None or revision_of(d) == revision)
    d = await cluster.wait_for(DEPLOYMENTS, name, done, namespace=NS, timeout=timeout)
    if d["spec"].get("paused"):
        return d

    async def old_drained() -> bool:
        current = await get_deployment(cluster.client, name)
        owned = await owned_replica_sets(cluster.client, current)
        new = new_replica_set(owned, current["spec"]["template"])
        return all(rs is new or spec_replicas(rs) == 0 for rs in owned)

    await cluster.wait_until(old_drained, timeout=timeout, message=f"old ReplicaSets of {name} at 0")
    return d


async def wait_observed(cluster: EmbeddedCluster, name: str, check: Callable[[Obj], bool] = lambda d: True,
                        timeout: float = 30.0) -> Obj:
    """Wait until the controller observed the newest generation and ``check`` holds."""
    def done(d: Obj) -> bool:
        status = d.get("status") or {}
        return int(status.get("observedGeneration") or 0) >= int(d["metadata"]["generation"]) and check(d)
    return await cluster.wait_for(DEPLOYMENTS, name, done, namespace=NS, timeout=timeout)


async def wait_revision_and_image(cluster: EmbeddedCluster, name: str, revision: int, image: str) -> Obj:
    """Upstream's "wait for revision and image": the Deployment and its new ReplicaSet at
    ``revision``, both templates with ``image``, the ReplicaSet selecting by pod-template-hash."""
    client = cluster.client

    async def check() -> bool:
        d = await get_deployment(client, name)
        new = new_replica_set(await owned_replica_sets(client, d), d["spec"]["template"])
        return (new is not None and revision_of(d) == revision and revision_of(new) == revision
                and image_of(d) == image and image_of(dict(new)) == image
                and POD_TEMPLATE_HASH in new["spec"]["selector"]["matchLabels"])

    await cluster.wait_until(check, message=f"deployment {name} at revision {revision} with {image}")
    return await get_deployment(client, name)


def status_counts(d: Obj) -> tuple[int, int, int, int, int]:
    """(replicas, updated, ready, available, unavailable) of a Deployment status."""
    status = d.get("status") or {}
    replicas, updated, ready, available, unavailable = (
        int(status.get(k) or 0)
        for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"))
    return replicas, updated, ready, available, unavailable
