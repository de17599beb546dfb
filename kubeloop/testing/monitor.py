"""A monitor that checks a Deployment's rollout invariants at every watch event.

:class:`DeploymentMonitor` watches the Deployments, ReplicaSets and pods of one namespace and,
after each event, checks the rollout invariants below (upstream's e2e checks the first two,
test/utils/deployment.go ``checkRollingUpdateStatus``) on the state the cluster was in *at
that event*:

- I1 surge: a ReplicaSet may only grow if the owned ReplicaSets then ask for at most
  ``R + maxSurge`` replicas together (a shrinking sum above the bound is the tail of a
  scaling event or an adoption);
- I2 availability floor (RollingUpdate): once the Deployment reported ``available >= R - U``
  for its current ``R`` and ``U``, its ``availableReplicas`` and its ready, non-terminating
  pods stay at or above ``R - U`` until ``R`` or ``U`` change (tests that disrupt pods on
  purpose switch it off with :meth:`DeploymentMonitor.allow_disruption`);
- I3 / I4 direction: the new ReplicaSet never grows past ``R``; old ReplicaSets never grow and
  the new one never shrinks below ``R``; each except when the write also changes the
  ``desired-replicas`` annotation (proportional scaling on a scaling event, which can take the
  new ReplicaSet past ``R`` while old ones run);
- I8 Recreate: pods of two different templates are never active together, old terminating
  pods included; and the status never shows updated pods next to other pods;
- I9 revisions: the Deployment's and each ReplicaSet's revision never decrease, a ReplicaSet
  the controller creates carries a revision above every other owned one;
- I10 status bookkeeping of the Deployment and its ReplicaSets, ``observedGeneration`` and
  ``collisionCount`` never decreasing, the Available condition agreeing with the counts;
- I11 ownership: the ReplicaSets and pods the controllers create carry exactly one controller
  reference with ``blockOwnerDeletion``; the ReplicaSets are named by their template hash.

The three watch streams are separate connections, so their events can arrive out of order
with respect to each other. The API server numbers every change from one counter, so the
monitor holds events for a short while (``hold`` seconds) and applies them in
resourceVersion order: each check sees one consistent snapshot. Controllers decide on cached
state, so the Deployment spec they act on may lag the newest one; checks that depend on the
spec accept any generation between ``status.observedGeneration`` and ``metadata.generation``.

Not checked per event: I7 (a complete status implies old ReplicaSets at 0). Upstream computes
the status from the ReplicaSets' own statuses, which lag their specs (a ReplicaSet reports the
pods it had before creating new ones), so a status can read complete for an instant while an old
ReplicaSet that was just scaled up by a rollback or a scaling event has not counted its pods
yet. The tests check I7 where it converges: after completion, the old ReplicaSets reach 0.

:class:`~kubeloop.testing.replicaset_monitor.ReplicaSetMonitor` does the same for ReplicaSets
running without a Deployment.

Violations are recorded with the event that revealed them, never raised in the watch tasks;
:meth:`DeploymentMonitor.check` raises ``AssertionError`` listing them.

    monitor = DeploymentMonitor(cluster.client, "web")
    await monitor.start()
    ...  # create, update, scale the Deployment "web"
    await monitor.stop()
    monitor.check()
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import DEPLOYMENTS, PODS, REPLICA_SETS, ApiClient, Resource, is_gone
from kubeloop.testing import deployment_rules as rules
from kubeloop.testing.deployment_rules import Obj, RolloutBounds

DEFAULT_HOLD_SECONDS = 0.15
TRAIL_LENGTH = 12


@dataclass(frozen=True)
class Violation:
    """One broken invariant and the event after which it was seen."""

    invariant: str
    message: str
    event: str
    trail: tuple[str, ...] = ()
    """The events applied just before (the last one is ``event``)."""

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.message} (after {self.event})"


@dataclass(order=True)
class QueuedEvent:
    """A watch event waiting to be applied, ordered by resourceVersion (then arrival)."""

    rv: int
    seq: int
    arrived: float = field(compare=False)
    kind: str = field(compare=False)
    type: str = field(compare=False)
    obj: Obj = field(compare=False)


class DeploymentMonitor:
    """Watches one Deployment (by name), its ReplicaSets and pods; records invariant violations."""

    def __init__(self, client: ApiClient, name: str, namespace: str = "default", *,
                 hold: float = DEFAULT_HOLD_SECONDS) -> None:
        self.client = client
        self.name = name
        self.namespace = namespace
        self.hold = hold
        self.violations: list[Violation] = []
        self.trail: list[str] = []
        """The last events applied (their labels), for diagnosing a violation."""
        self.events = 0
        """Events applied so far (bookmarks excluded)."""
        self.deployment: Obj | None = None
        self.replica_sets: dict[str, Obj] = {}
        self.pods: dict[str, Obj] = {}
        self.pods_added: list[str] = []
        """Names of the pods created while watching, in order (any owner)."""
        self.disruption_allowed = False
        self._specs: dict[int, RolloutBounds] = {}
        self._floor_armed_for: tuple[int, int] | None = None
        self._queue: list[QueuedEvent] = []
        self._seq = itertools.count()
        self._arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # -- running ------------------------------------------------------------------------------
    async def start(self) -> None:
        """List the current state, then watch from there."""
        loop = asyncio.get_running_loop()
        for resource in (DEPLOYMENTS, REPLICA_SETS, PODS):
            rv = await self._relist(resource)
            self._tasks.append(loop.create_task(self._watch(resource, rv)))
        self._tasks.append(loop.create_task(self._apply_loop()))

    async def stop(self) -> None:
        """Stop watching and apply every event still held back."""
        await asyncio.sleep(self.hold)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._drain(until=None)

    async def __aenter__(self) -> DeploymentMonitor:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def check(self) -> None:
        """Raise ``AssertionError`` naming every violation recorded so far."""
        if self.violations:
            shown = "\n  ".join(str(v) for v in self.violations[:30])
            more = f"\n  ... and {len(self.violations) - 30} more" if len(self.violations) > 30 else ""
            trail = "\n    ".join(self.violations[0].trail)
            raise AssertionError(f"{len(self.violations)} invariant violations for deployment "
                                 f"{self.name}:\n  {shown}{more}\n  events up to the first one:\n    {trail}")

    @contextlib.asynccontextmanager
    async def allow_disruption(self) -> AsyncIterator[None]:
        """Suspend the availability floor (I2) while the test disrupts pods on purpose.

        On leaving, the events that arrived inside are applied first; the floor must then be
        reached again before it is enforced.
        """
        self.disruption_allowed = True
        self._floor_armed_for = None
        try:
            yield
        finally:
            await self.settle()
            self.disruption_allowed = False

    def observe(self, kind: str, type_: str, obj: Obj) -> None:
        """Queue one event as if a watch delivered it (``kind`` is Deployment, ReplicaSet or
        Pod); :meth:`flush` applies it. For replaying recorded events, and for tests."""
        self._enqueue(kind, type_, obj)

    def flush(self) -> None:
        """Apply every queued event now, in resourceVersion order."""
        self._drain(until=None)

    async def settle(self) -> None:
        """Wait until every event that arrived so far has been applied."""
        await asyncio.sleep(self.hold * 2)

    # -- watching -----------------------------------------------------------------------------
    async def _relist(self, resource: Resource) -> str:
        listed = await self.client.list(resource, namespace=self.namespace)
        store = self._store(resource.kind)
        if resource.kind == "Deployment":
            self.deployment = next((d for d in listed["items"] if d["metadata"]["name"] == self.name), None)
            if self.deployment is not None:
                self._remember_spec(self.deployment)
        else:
            assert store is not None
            store.clear()
            store.update({item["metadata"]["name"]: item for item in listed["items"]})
        return str(listed["metadata"]["resourceVersion"])

    def _store(self, kind: str) -> dict[str, Obj] | None:
        return {"ReplicaSet": self.replica_sets, "Pod": self.pods}.get(kind)

    async def _watch(self, resource: Resource, resource_version: str) -> None:
        while True:
            try:
                stream = self.client.watch(resource, namespace=self.namespace, resource_version=resource_version)
                async with stream:
                    async for event in stream:
                        if event.type != "BOOKMARK":
                            self._enqueue(resource.kind, event.type, event.object)
                    resource_version = stream.resource_version or resource_version
            except Exception as exc:
                if not is_gone(exc):
                    # A monitor that stopped seeing events must not let the test pass.
                    self._record("monitor", f"watch of {resource.plural} failed: {exc!r}", "watch")
                    return
                # Events were lost: the state is listed again, and checks resume from there.
                self._record("monitor", f"watch of {resource.plural} expired; relisting", "410 Gone")
                resource_version = await self._relist(resource)

    def _enqueue(self, kind: str, type_: str, obj: Obj) -> None:
        text = str((obj.get("metadata") or {}).get("resourceVersion") or "0")
        rv = int(text) if text.isdigit() else 0
        heapq.heappush(self._queue, QueuedEvent(rv, next(self._seq), time.monotonic(), kind, type_, obj))
        self._arrived.set()

    async def _apply_loop(self) -> None:
        while True:
            if not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
            oldest = min(item.arrived for item in self._queue)
            wait = oldest + self.hold - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._drain(until=time.monotonic() - self.hold)

    def _drain(self, until: float | None) -> None:
        """Apply queued events in resourceVersion order, up to the first one not yet held long enough."""
        while self._queue and (until is None or self._queue[0].arrived <= until):
            item = heapq.heappop(self._queue)
            try:
                self._apply(item)
            except Exception as exc:
                # An object the checks cannot read is itself worth failing the test for.
                self._record("monitor", f"could not check the event: {exc!r}", f"{item.type} {item.kind} rv={item.rv}")

    # -- applying one event -------------------------------------------------------------------
    def _apply(self, item: QueuedEvent) -> None:
        self.events += 1
        meta = item.obj.get("metadata") or {}
        label = f"{item.type} {item.kind} {meta.get('name')} rv={item.rv}"
        self.trail = [*self.trail[-(TRAIL_LENGTH - 1):], f"{label} {brief(item.kind, item.obj)}"]
        if item.kind == "Deployment":
            if meta.get("name") == self.name:
                self._apply_deployment(item.type, item.obj, label)
            return
        store = self._store(item.kind)
        assert store is not None
        name = str(meta.get("name"))
        previous = store.get(name)
        if item.type == "ADDED" and item.kind == "Pod" and previous is None:
            self.pods_added.append(name)
        if item.type == "DELETED":
            store.pop(name, None)
        else:
            store[name] = item.obj
        if self.deployment is None:
            return
        if item.kind == "ReplicaSet":
            self._check_replica_set_change(item.type, previous, item.obj, label)
        else:
            self._check_pod_change(item.type, item.obj, label)
        self._check_snapshot(label)

    def _apply_deployment(self, type_: str, d: Obj, label: str) -> None:
        previous = self.deployment
        if type_ == "DELETED":
            self.deployment = None
            return
        if previous is not None and previous["metadata"].get("uid") != d["metadata"].get("uid"):
            previous = None
            self._specs.clear()
        self.deployment = d
        self._remember_spec(d)
        status = d.get("status") or {}
        generation = int(d["metadata"].get("generation") or 0)
        for problem in rules.status_problems("Deployment", status, generation):
            self._record("I10", problem, label)
        if previous is not None:
            before = previous.get("status") or {}
            self._never_decreases("I10", "observedGeneration", before.get("observedGeneration"),
                                  status.get("observedGeneration"), label)
            self._never_decreases("I10", "collisionCount", before.get("collisionCount"),
                                  status.get("collisionCount"), label)
            self._never_decreases("I9", "Deployment revision", rules.revision_of(previous),
                                  rules.revision_of(d), label)
        observed = self._specs.get(int(status.get("observedGeneration") or 0))
        if observed is not None:
            condition_problem = rules.available_condition_problem(status, observed)
            if condition_problem:
                self._record("I10", condition_problem, label)
        if self._all_recreate() and int(status.get("updatedReplicas") or 0) > 0 and \
                status.get("updatedReplicas") != status.get("replicas"):
            self._record("I8", f"Recreate status shows {status.get('updatedReplicas')} updated of "
                               f"{status.get('replicas')} replicas", label)
        self._check_snapshot(label)

    def _remember_spec(self, d: Obj) -> None:
        self._specs[int(d["metadata"].get("generation") or 0)] = rules.bounds_of(d)

    # -- the checks -----------------------------------------------------------------------------
    def _window(self) -> list[RolloutBounds]:
        """The specs a controller may be acting on: generations from the observed one to the newest."""
        assert self.deployment is not None
        generation = int(self.deployment["metadata"].get("generation") or 0)
        observed = int((self.deployment.get("status") or {}).get("observedGeneration") or 0)
        specs = [self._specs[g] for g in range(min(observed, generation), generation + 1) if g in self._specs]
        return specs or [rules.bounds_of(self.deployment)]

    def _all_recreate(self) -> bool:
        return all(b.recreate for b in self._window())

    def owned_replica_sets(self) -> list[Obj]:
        """The ReplicaSets the Deployment controls, as of the last applied event."""
        if self.deployment is None:
            return []
        uid = self.deployment["metadata"].get("uid")
        return [rs for rs in self.replica_sets.values()
                if any(r.get("controller") and r.get("uid") == uid
                       for r in rs["metadata"].get("ownerReferences") or ())]

    def _new_under(self, owned: list[Obj]) -> list[str | None]:
        """The new ReplicaSet's name under each spec of the window (``None``: none yet)."""
        names: list[str | None] = []
        for bounds in self._window():
            new = rules.new_replica_set(owned, bounds.template)
            names.append(None if new is None else str(new["metadata"]["name"]))
        return names

    def _check_replica_set_change(self, type_: str, previous: Obj | None, rs: Obj, label: str) -> None:
        assert self.deployment is not None
        uid = str(self.deployment["metadata"].get("uid"))
        owned = self.owned_replica_sets()
        if type_ == "DELETED" or not any(o is rs for o in owned):
            return
        name = rs["metadata"]["name"]
        generation = int(rs["metadata"].get("generation") or 0)
        for problem in rules.status_problems("ReplicaSet " + name, rs.get("status") or {}, generation):
            self._record("I10", problem, label)
        if type_ == "ADDED" and previous is None:
            for problem in [*rules.controller_ref_problems(rs, uid),
                            *rules.hash_label_problems(rs, self.name)]:
                self._record("I11", problem, label)
            revision = rules.revision_of(rs)
            others = [r for r in (rules.revision_of(o) for o in owned if o is not rs) if r is not None]
            if others and (revision is None or revision <= max(others)):
                self._record("I9", f"new ReplicaSet {name} has revision {revision}, not above {max(others)}", label)
        if previous is None:
            if type_ != "ADDED":
                return
            # Created by the controller at its first size: checked as a growth from nothing.
            previous = {"metadata": {}, "spec": {"replicas": 0}}
        self._never_decreases("I9", f"ReplicaSet {name} revision", rules.revision_of(previous),
                              rules.revision_of(rs), label)
        before, after = rules.spec_replicas(previous), rules.spec_replicas(rs)
        if before == after:
            return
        annotations_before = previous["metadata"].get("annotations") or {}
        annotations_after = rs["metadata"].get("annotations") or {}
        scaling_event = annotations_before.get(rules.DESIRED_REPLICAS) != annotations_after.get(rules.DESIRED_REPLICAS)
        window = self._window()
        new_under = self._new_under(owned)
        # A controller acting on an older generation may still treat the previous template's
        # ReplicaSet as new: growth is allowed if it is new under any spec of the window,
        # shrinking is checked only if it is new under all of them.
        is_new, always_new = name in new_under, all(n == name for n in new_under)
        largest_r = max(b.replicas for b in window)
        if after > before:
            total = sum(rules.spec_replicas(o) for o in owned)
            allowed = max(b.max_total for b in window)
            if total > allowed:
                self._record("I1", f"{name} grew {before}->{after}: owned ReplicaSets ask for {total} > "
                                   f"replicas + maxSurge {allowed}", label)
            # Proportional scaling may size the new ReplicaSet past ``replicas`` while old ones
            # still run (the total stays within I1's bound); such a write resizes it for the new
            # replica count, so it carries a new desired-replicas annotation.
            if is_new and after > largest_r and not scaling_event:
                self._record("I3", f"new ReplicaSet {name} grew to {after} > replicas {largest_r}", label)
            if not is_new and not scaling_event:
                self._record("I4", f"old ReplicaSet {name} grew {before}->{after} outside a scaling event", label)
        elif always_new and not scaling_event and after < min(b.replicas for b in window) and \
                not any(b.paused for b in window):
            self._record("I4", f"new ReplicaSet {name} shrank {before}->{after} below replicas", label)

    def _check_pod_change(self, type_: str, pod: Obj, label: str) -> None:
        if type_ == "DELETED" or not rules.is_active(pod):
            return
        owner = self._owner_of(pod)
        if owner is None:
            return
        rs_uid = str(owner["metadata"].get("uid"))
        if type_ == "ADDED":
            for problem in rules.controller_ref_problems(pod, rs_uid):
                self._record("I11", problem, label)
            rs_hash = ((owner["spec"].get("selector") or {}).get("matchLabels") or {}).get(rules.POD_TEMPLATE_HASH)
            pod_hash = (pod["metadata"].get("labels") or {}).get(rules.POD_TEMPLATE_HASH)
            if rs_hash is not None and pod_hash != rs_hash:
                self._record("I11", f"pod {pod['metadata']['name']} has hash {pod_hash}, its ReplicaSet {rs_hash}",
                             label)
        if self._all_recreate():
            template = owner["spec"].get("template") or {}
            for other in self.pods.values():
                other_owner = self._owner_of(other)
                if other_owner is None or rules.is_terminal(other):
                    continue
                if not rules.same_template(other_owner["spec"].get("template") or {}, template):
                    self._record("I8", f"Recreate: pod {pod['metadata']['name']} ({owner['metadata']['name']}) "
                                       f"runs beside {other['metadata']['name']} ({other_owner['metadata']['name']})",
                                 label)
                    break

    def _owner_of(self, pod: Obj) -> Obj | None:
        """The owned ReplicaSet controlling ``pod``, if any."""
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        rs = self.replica_sets.get(str(ref.get("name")))
        if rs is None or rs["metadata"].get("uid") != ref.get("uid"):
            return None
        return rs if any(o is rs for o in self.owned_replica_sets()) else None

    def _check_snapshot(self, label: str) -> None:
        """I2: the availability floor of a rolling update, once reached."""
        d = self.deployment
        if d is None or self.disruption_allowed or d["metadata"].get("deletionTimestamp"):
            # Deleting the Deployment takes its pods down on purpose (or orphans them).
            self._floor_armed_for = None
            return
        bounds = rules.bounds_of(d)
        window = self._window()
        if bounds.recreate or any(b.recreate for b in window):
            self._floor_armed_for = None
            return
        key = (bounds.replicas, bounds.max_unavailable)
        status = d.get("status") or {}
        available = int(status.get("availableReplicas") or 0)
        steady = all((b.replicas, b.max_unavailable) == key for b in window)
        if self._floor_armed_for != key:
            self._floor_armed_for = key if steady and available >= bounds.min_available else None
            return
        if not steady:
            return
        if available < bounds.min_available:
            self._record("I2", f"availableReplicas {available} < minAvailable {bounds.min_available}", label)
        owned = {rs["metadata"]["uid"] for rs in self.owned_replica_sets()}
        ready = sum(1 for pod in self.pods.values()
                    if rules.is_active(pod) and rules.is_ready(pod)
                    and any(r.get("controller") and r.get("uid") in owned
                            for r in pod["metadata"].get("ownerReferences") or ()))
        if ready < bounds.min_available:
            self._record("I2", f"{ready} ready pods < minAvailable {bounds.min_available}", label)

    # -- recording ------------------------------------------------------------------------------
    def _never_decreases(self, invariant: str, what: str, before: Any, after: Any, label: str) -> None:
        if before is not None and after is not None and int(after) < int(before):
            self._record(invariant, f"{what} went down from {before} to {after}", label)

    def _record(self, invariant: str, message: str, event: str) -> None:
        self.violations.append(Violation(invariant, message, event, tuple(self.trail)))


def brief(kind: str, obj: Obj) -> str:
    """The fields of an object that matter to the invariants, in one short line."""
    status = obj.get("status") or {}
    if kind == "Pod":
        return f"phase={status.get('phase')} ready={rules.is_ready(obj)} " \
               f"deleting={bool((obj.get('metadata') or {}).get('deletionTimestamp'))}"
    counts = "/".join(str(status.get(k, 0)) for k in ("replicas", "updatedReplicas", "readyReplicas",
                                                       "availableReplicas"))
    return (f"spec={rules.spec_replicas(obj)} status(replicas/updated/ready/available)={counts} "
            f"gen={(obj.get('metadata') or {}).get('generation')}/{status.get('observedGeneration')} "
            f"rev={rules.revision_of(obj)}")


