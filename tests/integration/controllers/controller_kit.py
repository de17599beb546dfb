"""Helpers for controller integration tests: running managers, marking pods ready, waiting."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kubeloop.api.meta import labels_of, now_time
from kubeloop.client import PODS, ApiClient, load_kubeconfig
from kubeloop.controllers import add_controllers
from kubeloop.runtime.manager import Manager, ManagerOptions

Obj = dict[str, Any]
NAMESPACE = "default"


class ControllerRunner:
    """Starts managers that run named controllers against one server, and stops them."""

    def __init__(self, kubeconfig: Path) -> None:
        self._kubeconfig = kubeconfig
        self._running: list[tuple[Manager, ApiClient]] = []

    async def start(self, *names: str, feature_gates: dict[str, bool] | None = None) -> Manager:
        client = ApiClient(load_kubeconfig(str(self._kubeconfig)))
        manager = Manager(client, ManagerOptions(name="test", detect_cache_mutations=True))
        await add_controllers(manager, names, feature_gates=feature_gates)
        await manager.start()
        self._running.append((manager, client))
        return manager

    async def stop(self, manager: Manager) -> None:
        for entry in list(self._running):
            if entry[0] is manager:
                self._running.remove(entry)
                await manager.stop()
                # Informers a controller started itself are not the factory's to stop.
                for informer in manager.factory.informers():
                    await informer.stop()
                await entry[1].aclose()

    async def stop_all(self) -> None:
        for manager, _ in list(self._running):
            await self.stop(manager)



def selector_string(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


async def list_pods(client: ApiClient, labels: dict[str, str] | None = None) -> list[Obj]:
    result = await client.list(PODS, namespace=NAMESPACE,
                               label_selector=selector_string(labels) if labels else None)
    return list(result["items"])


async def mark_ready(client: ApiClient, pod: Obj, *, since: str | None = None) -> None:
    """What a kubelet would report: Running, with Ready=True since ``since`` (default now)."""
    status = {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": since or now_time()}]}}
    await client.patch(PODS, pod["metadata"]["name"], status, patch_type="merge", namespace=NAMESPACE,
                       subresource="status")


def is_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


async def mark_pods_ready(client: ApiClient, labels: dict[str, str], limit: int | None = None) -> int:
    """Mark matching pods that are neither ready nor deleting ready (at most ``limit`` of them,
    counting those already ready); returns how many were marked now."""
    marked = 0
    pods = await list_pods(client, labels)
    already = sum(1 for pod in pods if is_ready(pod))
    for pod in pods:
        if is_ready(pod) or pod["metadata"].get("deletionTimestamp"):
            continue
        if limit is not None and already + marked >= limit:
            break
        try:
            await mark_ready(client, pod)
        except Exception as exc:  # the pod may be deleted meanwhile
            if getattr(exc, "code", None) != 404:
                raise
        marked += 1
    return marked


def has_labels(pod: Obj, labels: dict[str, str]) -> bool:
    current = labels_of(pod)
    return all(current.get(k) == v for k, v in labels.items())


def pod_template(labels: dict[str, str], image: str = "fakeimage") -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "fake-name", "image": image}], "terminationGracePeriodSeconds": 0}}


def names(objects: Iterable[Obj]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objects)
