"""The Scale and Update steps of a CloneSet reconcile, performing the pure modules' plans.

:meth:`CloneSetSteps.scale` runs :func:`.scaleplan.plan_scale` and writes its outcome (revive,
create, move to PreparingDelete, delete) through :class:`.control.CloneSetControl`;
:meth:`CloneSetSteps.update` first refreshes every pod (in-place bookkeeping, lifecycle
transitions, the pod-template-hash fix) and, when none of that wrote anything and the update
is not paused, updates the pods :func:`.update.pods_to_update` selects, each as
:func:`.update.decide_pod_update` says. Both report whether they wrote; the reconcile skips
Update in a round where Scale wrote.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from kubeloop.api import kruise
from kubeloop.api.meta import name_of, resource_version_of
from kubeloop.client import NODES, ApiClient
from kubeloop.runtime.events import WARNING, EventRecorder

from .control import CloneSetControl
from .inplace import UpdateSpec, refresh
from .lifecycle import marks_pod_not_ready, with_initial_kruise_pod_ready
from .options import CloneSetBehaviour, CloneSetFeatureGates
from .refreshplan import plan_refresh, refresh_context
from .scale import pvcs_of_pod
from .scaleplan import plan_scale
from .spec import is_paused, lifecycle_hook, template_of
from .tally import TallyView
from .update import decide_pod_update, pods_to_update

Obj = dict[str, Any]
T = TypeVar("T")

DEFAULT_WRITE_CONCURRENCY = 16


class UpdateError(Exception):
    """An update that cannot proceed (e.g. InPlaceOnly but not updatable in place)."""


@dataclass
class Requeue:
    """The earliest of the positive delays pushed during one reconcile."""

    after: float | None = None

    def push(self, seconds: float | None) -> None:
        if seconds is not None and seconds > 0 and (self.after is None or seconds < self.after):
            self.after = seconds


async def run_concurrently(calls: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Run the calls with at most ``limit`` in flight; once all are done, raise the first
    failure (in call order) if any, else return the results in call order."""
    semaphore = asyncio.Semaphore(max(limit, 1))

    async def bounded(call: Callable[[], Awaitable[T]]) -> T:
        async with semaphore:
            return await call()

    results = await asyncio.gather(*(bounded(c) for c in calls), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [r for r in results if not isinstance(r, BaseException)]


class CloneSetSteps:
    """Performs the Scale and Update steps for one CloneSet per call.

    Per-pod writes of one round (refreshing pods, updating the chosen pods) are independent of
    each other, so they run concurrently, at most ``write_concurrency`` at a time; upstream
    writes them one after the other, which makes a large in-place rollout latency-bound.
    """

    def __init__(
        self,
        client: ApiClient,
        recorder: EventRecorder,
        control: CloneSetControl,
        *,
        gates: CloneSetFeatureGates,
        behaviour: CloneSetBehaviour,
        rng: random.Random,
        write_concurrency: int = DEFAULT_WRITE_CONCURRENCY,
    ) -> None:
        self.write_concurrency = write_concurrency
        self.client = client
        self.recorder = recorder
        self.control = control
        self.gates = gates
        self.behaviour = behaviour
        self.rng = rng

    async def _nodes_for_ranking(self, cs: Mapping[str, Any]) -> list[Obj]:
        """Nodes for the topology-spread ranking of scale-in victims, read live as upstream does
        (only for templates with ``topologySpreadConstraints``)."""
        spec = template_of(cs).get("spec") or {}
        if not spec.get("topologySpreadConstraints"):
            return []
        listed = await self.client.list(NODES)
        return list(listed.get("items") or [])

    async def scale(
        self,
        current_cs: Obj,
        update_cs: Obj,
        pods: list[Obj],
        pvcs: list[Obj],
        current_name: str,
        update_name: str,
        now: datetime,
        tally: TallyView | None = None,
    ) -> bool:
        """Perform this round's Scale step; returns whether it wrote anything."""
        plan = plan_scale(current_cs, update_cs, pods, pvcs, current_name, update_name, now=now,
                          gates=self.gates, rng=self.rng, nodes=await self._nodes_for_ranking(update_cs), tally=tally)
        if plan.scale_up_limited and plan.diffs is not None:
            self.recorder.event(update_cs, WARNING, "ScaleUpLimited",
                                "scaleUp is limited because of scaleStrategy.maxUnavailable, "
                                f"limit: {plan.diffs.scale_up_limit}")
        if plan.step == "revive":
            revive = [functools.partial(self.control.set_lifecycle_state, pod, kruise.STATE_PREPARING_NORMAL, now)
                      for pod in plan.revive]
            return any(await run_concurrently(revive, self.write_concurrency))
        if plan.step == "create":
            return await self.control.create_pods(update_cs, plan.creations) > 0
        hold = [functools.partial(self.control.set_lifecycle_state, pod, kruise.STATE_PREPARING_DELETE, now,
                                  mark_not_ready=plan.mark_not_ready) for pod in plan.to_preparing_delete]
        modified = any(await run_concurrently(hold, self.write_concurrency))
        delete = [functools.partial(self.control.delete_pod, update_cs, pod, pvcs_of_pod(pod, pvcs))
                  for pod in plan.deletions]
        await run_concurrently(delete, self.write_concurrency)
        return modified or bool(plan.deletions)

    async def refresh_pods(self, cs: Obj, pods: Sequence[Obj], update_name: str, now: datetime,
                           requeue: Requeue) -> bool:
        """For every pod: the initial ``KruisePodReady`` condition, in-place bookkeeping,
        lifecycle transitions and the pod-template-hash fix; returns whether a lifecycle or
        label patch was written (Update then waits)."""
        return any(modified for modified, _ in await self._refresh_each(cs, pods, update_name, now, requeue))

    async def _refresh_each(self, cs: Obj, pods: Sequence[Obj], update_name: str, now: datetime,
                            requeue: Requeue) -> list[tuple[bool, bool]]:
        """:meth:`refresh_pods`, per pod: ``(a lifecycle or label patch was written, the pod's
        plan was idle)`` (:class:`.refreshplan.RefreshPlan`)."""
        mark_not_ready = marks_pod_not_ready(lifecycle_hook(cs, "inPlaceUpdate"))

        async def refresh_one(pod: Obj) -> tuple[bool, bool]:
            plan = plan_refresh(cs, pod, update_name, now, self.behaviour)
            if plan.idle:
                return False, True
            modified = False
            if plan.initial_ready is not None:
                await self.control.update_pod_status(pod, lambda fresh: with_initial_kruise_pod_ready(fresh, now))
            action = plan.action
            if action.kind == "requeue":
                requeue.push(action.delay_seconds)
            elif action.kind in ("update", "update_status"):
                kind = action.kind

                def redo(fresh: Mapping[str, Any]) -> Obj | None:
                    again = refresh(fresh, now=now)
                    return again.pod if again.kind == kind else None

                if kind == "update":
                    await self.control.update_pod(pod, redo)
                else:
                    await self.control.update_pod_status(pod, redo)
            if plan.state is not None:
                modified = await self.control.set_lifecycle_state(pod, plan.state, now,
                                                                  mark_not_ready=mark_not_ready)
            if plan.hash_patch is not None:
                await self.control.patch_pod(pod, plan.hash_patch)
                modified = True
            return modified, False

        calls = [functools.partial(refresh_one, pod) for pod in pods]
        return await run_concurrently(calls, self.write_concurrency)

    async def update(
        self,
        cs: Obj,
        pods: list[Obj],
        revisions: list[Obj],
        current: Obj,
        update: Obj,
        now: datetime,
        requeue: Requeue,
        tally: TallyView | None = None,
    ) -> None:
        """Perform this round's Update step on ``cs`` (the CloneSet with the update template).

        ``tally``: the pods' counts; the refresh pass then visits only the pods whose refresh
        may write (for the others it is a no-op) and whose plan was not idle the last time, and
        the plan reads only candidates."""
        if tally is None:
            if await self.refresh_pods(cs, pods, name_of(update), now, requeue):
                return
        else:
            # Only the pods whose refresh may write and whose plan was not idle when last made
            # for this context and this version of the pod (.refreshplan); record the idle ones.
            context = refresh_context(cs, name_of(update))
            due = tally.refresh_due(context)
            outcomes = await self._refresh_each(cs, [pods[index] for index, _ in due], name_of(update), now,
                                                requeue)
            for (index, key), (_, idle) in zip(due, outcomes):
                if idle:
                    tally.note_idle(context, key, resource_version_of(pods[index]))
            if any(modified for modified, _ in outcomes):
                return
        if is_paused(cs):
            return
        plan = pods_to_update(cs, pods, name_of(current), name_of(update), now=now, gates=self.gates, tally=tally)
        target = update if plan.target_revision == name_of(update) else current
        specs: dict[str, UpdateSpec | None] = {}
        calls = [functools.partial(self._update_pod, cs, pods[index], revisions, target, now, requeue, specs)
                 for index in plan.indexes]
        await run_concurrently(calls, self.write_concurrency)

    async def _update_pod(self, cs: Obj, pod: Obj, revisions: list[Obj], target: Obj, now: datetime,
                          requeue: Requeue, specs: dict[str, UpdateSpec | None] | None = None) -> None:
        """Move one pod towards ``target`` as :func:`.update.decide_pod_update` says (``specs``:
        the round's in-place specs by old revision)."""
        decision = decide_pod_update(cs, pod, revisions, target, gates=self.gates, specs=specs)
        if decision.kind == "recreate":
            await self.control.mark_specified_delete(cs, pod, name_of(target))
        elif decision.kind == "in_place" and decision.spec is not None:
            await self.control.update_in_place(cs, pod, decision.spec, now)
            requeue.push(float(decision.spec.get("graceSeconds") or 0))
        elif decision.kind == "prepare_update":
            await self.control.set_lifecycle_state(pod, kruise.STATE_PREPARING_UPDATE, now,
                                                   mark_not_ready=decision.mark_not_ready)
        elif decision.kind == "rehook":
            await self.control.set_lifecycle_state(pod, kruise.STATE_PREPARING_UPDATE, now,
                                                   mark_not_ready=decision.mark_not_ready,
                                                   hook=lifecycle_hook(cs, "inPlaceUpdate"))
        elif decision.kind == "error":
            raise UpdateError(decision.message)
