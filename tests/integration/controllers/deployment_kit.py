"""Deployment helpers for integration tests: builders, lookups and the rolling-update checks."""

from __future__ import annotations

from typing import Any

from controller_kit import NAMESPACE, mark_pods_ready, pod_template

from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.client import DEPLOYMENTS, REPLICA_SETS, ApiClient
from kubeloop.controllers.deployment.annotations import REVISION
from kubeloop.controllers.deployment.status import deployment_complete
from kubeloop.controllers.deployment.strategy import max_surge, min_available
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH, equal_ignore_hash

Obj = dict[str, Any]
LABELS = {"name": "test"}


def deployment(name: str, replicas: int, *, image: str = "fakeimage", strategy: str = "RollingUpdate",
               rolling: Obj | None = None, **spec: Any) -> Obj:
    strategy_block: Obj = {"type": strategy}
    if strategy == "RollingUpdate":
        strategy_block["rollingUpdate"] = dict(rolling or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(LABELS)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)},
                     "template": pod_template(LABELS, image), "strategy": strategy_block, **spec}}


async def get_deployment(client: ApiClient, name: str) -> Obj:
    result: Obj = await client.get(DEPLOYMENTS, name, namespace=NAMESPACE)
    return result


async def owned_replica_sets(client: ApiClient, d: Obj) -> list[Obj]:
    items = (await client.list(REPLICA_SETS, namespace=NAMESPACE))["items"]
    uid = d["metadata"]["uid"]
    return [rs for rs in items if any(r.get("uid") == uid and r.get("controller")
                                      for r in rs["metadata"].get("ownerReferences") or [])]


async def new_replica_set(client: ApiClient, d: Obj) -> Obj | None:
    for rs in await owned_replica_sets(client, d):
        if equal_ignore_hash(rs["spec"]["template"], d["spec"]["template"]):
            return rs
    return None


def image_of(obj: Obj) -> str:
    return str(obj["spec"]["template"]["spec"]["containers"][0]["image"])


async def set_image(client: ApiClient, name: str, image: str) -> Obj:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "fake-name", "image": image}]}}}}
    result: Obj = await client.patch(DEPLOYMENTS, name, patch, patch_type="strategic", namespace=NAMESPACE)
    return result


class RolloutWatcher:
    """Marks new pods ready and checks the rolling-update bounds on every poll
    (upstream test/utils/deployment.go ``checkRollingUpdateStatus``)."""

    def __init__(self, client: ApiClient, name: str, *, mark_ready: bool = True) -> None:
        self.client = client
        self.name = name
        self.mark_ready = mark_ready
        self.violations: list[str] = []

    async def check(self, d: Obj) -> None:
        replica_sets = await owned_replica_sets(self.client, d)
        new = next((rs for rs in replica_sets if equal_ignore_hash(rs["spec"]["template"], d["spec"]["template"])),
                   None)
        if new is None:
            return
        active = [rs for rs in replica_sets if rs["spec"]["replicas"] > 0 or rs is new]
        total = sum(rs["spec"]["replicas"] for rs in active)
        if total > d["spec"]["replicas"] + max_surge(d):
            self.violations.append(f"spec total {total} above replicas + maxSurge")
        for rs in replica_sets:
            if POD_TEMPLATE_HASH not in rs["spec"]["selector"].get("matchLabels", {}):
                self.violations.append(f"{rs['metadata']['name']} selector lacks pod-template-hash")
        if d["status"].get("availableReplicas", 0) < min_available(d):
            self.violations.append(f"available {d['status'].get('availableReplicas', 0)} below minAvailable")

    async def complete(self, *, revision: str | None = None, check_rolling: bool = True) -> Obj | None:
        """One poll: mark the new ReplicaSet's pods ready, check bounds; the Deployment once complete."""
        d = await get_deployment(self.client, self.name)
        new = await new_replica_set(self.client, d)
        if self.mark_ready and new is not None:
            hash_label = new["metadata"]["labels"][POD_TEMPLATE_HASH]
            await mark_pods_ready(self.client, {**LABELS, POD_TEMPLATE_HASH: hash_label})
        if check_rolling:
            await self.check(d)
        if revision is not None and (d["metadata"].get("annotations") or {}).get(REVISION) != revision:
            return None
        return d if deployment_complete(d, d.get("status") or {}) else None


def condition(d: Obj, type_: str) -> Obj | None:
    for item in (d.get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return None


def condition_reason(d: Obj, type_: str) -> str | None:
    """The reason of the Deployment's condition of that type (``None`` without one)."""
    found = find_condition(status_conditions(d), type_)
    return found.get("reason") if found is not None else None
