"""One pass of deleting a terminating namespace's content, in chunks that yield to the event loop.

As upstream's ``pkg/controller/namespace/deletion/namespaced_resources_deleter.go``
(``deleteAllContent``) with 1.33's OrderedNamespaceDeletion (on by default): pods first, and
nothing else while pods remain; then every other namespaced resource that can be deleted.
Each object goes through :func:`kubeloop.server.objects.delete_object` with
``propagationPolicy: Background``, the path a client's DELETE takes, so pods get their grace
period and finalizers hold objects until whoever owns them lets go.

After deleting, a resource's remaining objects are counted: with a pod grace period still
running (the estimate) or finalizers on them they are waited for; otherwise the resource is
reported as failed ("unexpected items still remain"). Objects are read page by page
(``CHUNK_SIZE`` at a time) and the event loop gets control between pages, so the server keeps
answering while a large namespace is emptied.

Discovery cannot fail in-process, so the discovery and group-version conditions are always
reported as fine.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubeloop.api.meta import parse_time
from kubeloop.api.status import ApiError
from kubeloop.server.namespace_conditions import DeletionReport
from kubeloop.server.objects import delete_object
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import DeleteOptions
from kubeloop.server.state import ServerState

Obj = dict[str, Any]

CHUNK_SIZE = 100
"""Objects deleted between two yields to the event loop."""
FINALIZER_ESTIMATE_SECONDS = 15
"""Upstream's default wait for objects held by finalizers."""
_BACKGROUND = DeleteOptions(propagation_policy="Background")
_TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass
class ResourceOutcome:
    """What deleting one resource's objects left behind."""

    estimate: int = 0
    """Seconds still expected before the rest goes (0: no estimate)."""
    remaining: int = 0
    finalizers: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def _is_pods(info: ResourceInfo) -> bool:
    return info.group == "" and info.resource == "pods"


def gvr_text(info: ResourceInfo) -> str:
    """A GroupVersionResource as Go prints it (``/v1, Resource=pods``)."""
    return f"{info.group}/{info.version}, Resource={info.resource}"


def pod_grace_estimate(pods: Sequence[Mapping[str, Any]]) -> int:
    """The longest ``terminationGracePeriodSeconds`` of the pods not yet finished."""
    estimate = 0
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            continue
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and grace > estimate:
            estimate = grace
    return estimate


def outcome_of(info: ResourceInfo, namespace: str, remaining: Sequence[Mapping[str, Any]],
               estimate: int) -> ResourceOutcome:
    """Classify what is left of a resource after its objects were deleted (upstream's rules)."""
    if not remaining:
        return ResourceOutcome()
    finalizers = Counter(f for item in remaining for f in item["metadata"].get("finalizers") or [])
    if estimate:
        return ResourceOutcome(estimate, len(remaining), dict(finalizers))
    if finalizers:
        return ResourceOutcome(FINALIZER_ESTIMATE_SECONDS, len(remaining), dict(finalizers))
    return ResourceOutcome(0, len(remaining), {},
                           f"unexpected items still remain in namespace: {namespace} for gvr: {gvr_text(info)}")


async def _delete_resource(state: ServerState, info: ResourceInfo, namespace: str, deleted_at: datetime | None,
                           chunk: int) -> ResourceOutcome:
    rt = info.resource_type
    estimate = 0
    if _is_pods(info):
        pods, _, _ = state.storage.list(rt, namespace)
        estimate = pod_grace_estimate(pods)
        # A grace period that has run out since the namespace was deleted no longer counts.
        if deleted_at is not None and (state.clock() - deleted_at).total_seconds() >= estimate:
            estimate = 0
    after = None
    while True:
        page, after, _ = state.storage.list(rt, namespace, start_after=after, limit=chunk)
        for item in page:
            try:
                delete_object(state, info, item, _BACKGROUND)
            except ApiError as error:
                if error.code not in (404, 405):
                    return ResourceOutcome(estimate=estimate, error=str(error))
        # Let requests in between pages; the page boundary key stays valid as objects go.
        await asyncio.sleep(0)
        if after is None:
            break
    remaining, _, _ = state.storage.list(rt, namespace)
    return outcome_of(info, namespace, remaining, estimate)


def deletable_resources(state: ServerState) -> tuple[list[ResourceInfo], list[ResourceInfo]]:
    """(pods, everything else) among the namespaced resources that can be deleted."""
    infos = [info for info in state.registry.namespaced_types() if "delete" in info.verbs]
    return [i for i in infos if _is_pods(i)], [i for i in infos if not _is_pods(i)]


async def delete_content(state: ServerState, namespace: Mapping[str, Any],
                         chunk: int = CHUNK_SIZE) -> tuple[int, DeletionReport]:
    """Delete what ``namespace`` holds; returns (seconds to wait, report of what is left).

    Pods go first; while some remain the other resources are left alone.
    """
    name = namespace["metadata"]["name"]
    deleted_at = parse_time(namespace["metadata"].get("deletionTimestamp"))
    report = DeletionReport()
    estimate = 0
    pods, others = deletable_resources(state)
    for batch in (pods, others):
        for info in batch:
            outcome = await _delete_resource(state, info, name, deleted_at, chunk)
            estimate = max(estimate, outcome.estimate)
            if outcome.error is not None:
                report.errors.append(outcome.error)
            report.add_remaining(info.group, info.resource, outcome.remaining, outcome.finalizers)
        if batch is pods and report.remaining:
            break
    return estimate, report
