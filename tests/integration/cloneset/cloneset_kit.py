"""Helpers for CloneSet integration tests: CloneSet manifests, a stand-in kubelet, waiting.

There is no simulated kubelet here. :class:`StatusDriver` plays its part through ``/status``
the way a kubelet would: pods run, their containers report the spec image (a changed image
counts as a restart with a new ``imageID``), ``ContainersReady`` follows the test's health
choice, and ``Ready`` is ``ContainersReady`` and every readiness-gate condition True. Tests
decide which pods are healthy with :attr:`StatusDriver.unhealthy`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, deep_copy, now_time
from kubeloop.client import (
    CONTROLLER_REVISIONS,
    EVENTS,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
    ApiClient,
    is_conflict,
    is_not_found,
)
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.controller import CloneSetController
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
NAMESPACE = "default"

StartController = Callable[..., Awaitable[CloneSetController]]
"""The ``start_controller`` fixture: starts a manager running the CloneSet controller."""


def cloneset(name: str, replicas: int, *, image: str = "nginx:1", **spec: Any) -> Obj:
    """A CloneSet selecting ``app=<name>`` with one container ``main``; ``spec`` overrides fields."""
    labels = {"app": name}
    body: Obj = {
        "apiVersion": kruise.API_VERSION,
        "kind": kruise.CLONESET_KIND,
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "main", "image": image}], "terminationGracePeriodSeconds": 0},
            },
        },
    }
    body["spec"].update(spec)
    return body



async def get_cloneset(client: ApiClient, name: str) -> Obj:
    result: Obj = await client.get(CLONESETS, name, namespace=NAMESPACE)
    return result


async def update_cloneset(client: ApiClient, name: str, change: Callable[[Obj], None]) -> Obj:
    """Read-modify-write of a CloneSet, retried on conflict."""
    for _ in range(10):
        body = await get_cloneset(client, name)
        change(body)
        try:
            result: Obj = await client.update(CLONESETS, body, namespace=NAMESPACE)
            return result
        except Exception as exc:
            if not is_conflict(exc):
                raise
    raise AssertionError(f"could not update cloneset {name}")


async def wait_ready(client: ApiClient, name: str, replicas: int, updated: int | None = None) -> Obj:
    """Wait until ``replicas`` pods exist and are available, ``updated`` (default all) of them
    on the update revision, and the status observed the latest generation."""
    want_updated = replicas if updated is None else updated

    async def ready() -> Obj | None:
        cs = await get_cloneset(client, name)
        status = cs.get("status") or {}
        if (status.get("replicas") == replicas and status.get("readyReplicas") == replicas
                and status.get("availableReplicas") == replicas and status.get("updatedReplicas") == want_updated
                and status.get("observedGeneration") == cs["metadata"]["generation"]
                and len(await owned_pods(client, name)) == replicas):
            return cs
        return None

    result: Obj = await eventually(ready, what=f"{name} to have {replicas} available pods")
    return result


def set_image(image: str) -> Callable[[Obj], None]:
    def change(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return change


async def owned_pods(client: ApiClient, name: str, *, terminating: bool = False) -> list[Obj]:
    """Pods controlled by the CloneSet ``name``, sorted by name (without terminating ones)."""
    listed = await client.list(PODS, namespace=NAMESPACE)
    pods = []
    for pod in listed["items"]:
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != kruise.CLONESET_KIND or ref.get("name") != name:
            continue
        if pod["metadata"].get("deletionTimestamp") and not terminating:
            continue
        pods.append(pod)
    return sorted(pods, key=lambda p: p["metadata"]["name"])


async def owned_pvcs(client: ApiClient, name: str) -> list[Obj]:
    listed = await client.list(PERSISTENT_VOLUME_CLAIMS, namespace=NAMESPACE)
    return sorted((p for p in listed["items"] if (controller_of(p) or {}).get("name") == name
                   and not p["metadata"].get("deletionTimestamp")), key=lambda p: p["metadata"]["name"])


async def revisions_of(client: ApiClient, name: str) -> list[Obj]:
    listed = await client.list(CONTROLLER_REVISIONS, namespace=NAMESPACE)
    return [r for r in listed["items"] if (controller_of(r) or {}).get("name") == name]


async def events_of(client: ApiClient, name: str) -> list[Obj]:
    listed = await client.list(EVENTS, namespace=NAMESPACE)
    return [e for e in listed["items"] if e["involvedObject"].get("name") == name
            and e["involvedObject"].get("kind") == kruise.CLONESET_KIND]


def labels(pod: Obj) -> dict[str, str]:
    return dict(pod["metadata"].get("labels") or {})


def state_of(pod: Obj) -> str:
    return labels(pod).get(kruise.LIFECYCLE_STATE_LABEL, "")


def condition(pod: Obj, type_: str) -> Obj | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return dict(cond)
    return None


def names(objects: Iterable[Obj]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objects)


def _image_id(image: str) -> str:
    return "sha256:" + hashlib.sha256(image.encode()).hexdigest()[:16]


def _normalized(image: str) -> str:
    return image if ":" in image else f"{image}:latest"


def simulated_status(pod: Obj, healthy: bool) -> Obj | None:
    """The status a kubelet would report now, or ``None`` when nothing changes."""
    status: Obj = deep_copy(pod.get("status") or {})
    stamp = now_time()
    old = {s.get("name"): s for s in status.get("containerStatuses") or []}
    statuses = []
    for container in pod["spec"]["containers"]:
        image = _normalized(container["image"])
        previous = old.get(container["name"]) or {}
        restarts = int(previous.get("restartCount") or 0)
        if previous and previous.get("image") != image:
            restarts += 1
        statuses.append({
            "name": container["name"], "image": image, "imageID": _image_id(image), "ready": healthy,
            "restartCount": restarts, "containerID": f"sim://{pod['metadata']['uid']}/{container['name']}/{restarts}",
            "state": {"running": {"startedAt": (previous.get("state") or {}).get("running", {}).get("startedAt")
                                  if previous.get("image") == image else stamp}},
        })
    conditions = [dict(c) for c in status.get("conditions") or []]

    def put(type_: str, value: bool) -> None:
        text = "True" if value else "False"
        for cond in conditions:
            if cond.get("type") == type_:
                if cond.get("status") != text:
                    cond.clear()
                    cond.update(type=type_, status=text, lastTransitionTime=stamp)
                return
        conditions.append({"type": type_, "status": text, "lastTransitionTime": stamp})

    put("ContainersReady", healthy)
    gates = [g.get("conditionType") for g in pod["spec"].get("readinessGates") or []]
    gates_true = all((condition({"status": {"conditions": conditions}}, g) or {}).get("status") == "True"
                     for g in gates)
    put("Ready", healthy and gates_true)
    new = {**status, "phase": "Running", "containerStatuses": statuses, "conditions": conditions}
    before = {**(pod.get("status") or {})}
    if _comparable(before) == _comparable(new):
        return None
    return new


def _comparable(status: Obj) -> Any:
    return (status.get("phase"), [(s.get("name"), s.get("image"), s.get("ready"), s.get("restartCount"))
                                  for s in status.get("containerStatuses") or []],
            sorted((c.get("type"), c.get("status")) for c in status.get("conditions") or []))


class StatusDriver:
    """Keeps every pod of the namespace running as a kubelet would, until stopped."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self.unhealthy: Callable[[Obj], bool] = lambda pod: False
        self.enabled = True
        self._task: asyncio.Task[None] | None = None

    async def sync_once(self) -> int:
        listed = await self.client.list(PODS, namespace=NAMESPACE)
        written = 0
        for pod in listed["items"]:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            new = simulated_status(pod, not self.unhealthy(pod))
            if new is None:
                continue
            try:
                await self.client.update_status(PODS, {**pod, "status": new}, namespace=NAMESPACE)
                written += 1
            except Exception as exc:
                if not (is_conflict(exc) or is_not_found(exc)):
                    raise
        return written

    async def _run(self) -> None:
        while True:
            if self.enabled:
                await self.sync_once()
            await asyncio.sleep(0.05)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
