"""Shared pieces of the CloneSet acceptance scenarios (black-box replays of kruise's sync unit tables): a
release-aware invariant monitor; :class:`PodHistory`, every watch event of the CloneSet's pods
with the moment it was seen, so that a test can assert what happened between its waits (update
order, the lifecycle states a pod went through, how many pods were unavailable at each event);
and a barrier reconcile."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from test_cloneset_e2e import NAME, NS, Obj, state, update, wait_status

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, labels_of, name_of
from kubeloop.client import PODS, ApiClient
from kubeloop.controllers.cloneset.podstate import equal_to_revision
from kubeloop.testing.cluster import EmbeddedCluster

ROLLOUT_TIMEOUT = 60.0


def ours(pod: Obj) -> bool:
    ref = controller_of(pod) or {}
    return ref.get("kind") == kruise.CLONESET_KIND and ref.get("name") == NAME


@dataclass(frozen=True)
class PodEvent:
    seen: datetime
    kind: str
    pod: Obj


@dataclass
class PodHistory:
    """Every watch event of the CloneSet's pods, in resourceVersion order, with when it was seen."""

    client: ApiClient
    events: list[PodEvent] = field(default_factory=list)
    _task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        listed = await self.client.list(PODS, namespace=NS)
        now = datetime.now(UTC)
        self.events.extend(PodEvent(now, "ADDED", p) for p in listed["items"] if ours(p))
        rv = str(listed["metadata"]["resourceVersion"])
        self._task = asyncio.get_running_loop().create_task(self._watch(rv))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _watch(self, resource_version: str) -> None:
        while True:
            stream = self.client.watch(PODS, namespace=NS, resource_version=resource_version)
            async with stream:
                async for event in stream:
                    if event.type in ("BOOKMARK", "ERROR"):
                        continue
                    resource_version = str(event.object["metadata"].get("resourceVersion") or resource_version)
                    if ours(event.object):
                        self.events.append(PodEvent(datetime.now(UTC), event.type, event.object))

    def current(self) -> dict[str, Obj]:
        """The pods as of the last event (terminating ones included)."""
        return dict(self.timeline()[-1][1]) if self.events else {}

    def timeline(self) -> list[tuple[datetime, dict[str, Obj]]]:
        """After each event: when it was seen and the live pods (terminating ones included)."""
        view: dict[str, Obj] = {}
        steps: list[tuple[datetime, dict[str, Obj]]] = []
        for event in self.events:
            if event.kind == "DELETED":
                view.pop(name_of(event.pod), None)
            else:
                view[name_of(event.pod)] = event.pod
            steps.append((event.seen, dict(view)))
        return steps

    def names(self) -> set[str]:
        return {name_of(e.pod) for e in self.events}

    def states(self, name: str) -> list[str]:
        """The lifecycle states the pod went through, consecutive repeats folded."""
        seen: list[str] = []
        for event in self.events:
            if name_of(event.pod) == name and event.kind != "DELETED" and (not seen or seen[-1] != state(event.pod)):
                seen.append(state(event.pod))
        return seen

    def pods_of(self, name: str) -> Iterator[Obj]:
        return (e.pod for e in self.events if name_of(e.pod) == name and e.kind != "DELETED")

    def first_on(self, revision: str) -> list[str]:
        """Pod names in the order in which they first carried ``revision``'s hash label."""
        order: list[str] = []
        for event in self.events:
            if event.kind != "DELETED" and equal_to_revision(event.pod, revision) and name_of(event.pod) not in order:
                order.append(name_of(event.pod))
        return order

    async def caught_up(self, cluster: EmbeddedCluster) -> None:
        """Wait until the recorded view equals the API server's pods (same resourceVersions)."""

        async def same() -> bool:
            listed = await self.client.list(PODS, namespace=NS)
            api = {name_of(p): p["metadata"]["resourceVersion"] for p in listed["items"] if ours(p)}
            return api == {n: p["metadata"]["resourceVersion"] for n, p in self.current().items()}

        await cluster.wait_until(same, ROLLOUT_TIMEOUT, "the pod history to catch up with the API")


# -- helpers -------------------------------------------------------------------------------------

def instance_id(obj: Obj) -> str:
    return str(labels_of(obj).get(kruise.INSTANCE_ID_LABEL, ""))


def condition(pod: Obj, type_: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return str(cond.get("status"))
    return None


async def reconciled_again(cluster: EmbeddedCluster) -> Obj:
    """A barrier: change a spec field that moves no pod (the progress deadline) and wait until the
    controller observed it. Any pod change the controller makes in that reconcile precedes its
    status write, so pods read afterwards show what it decided with everything it had seen."""
    body = await update(cluster.client, lambda b: b["spec"].update(
        progressDeadlineSeconds=int(b["spec"].get("progressDeadlineSeconds") or 600) + 1))
    return await wait_status(cluster, lambda s: s.get("observedGeneration") == body["metadata"]["generation"])
