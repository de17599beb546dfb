"""The kubelet's memory of one pod and how it moves on with time.

:class:`PodMemo` holds what a node agent knows that the API does not store precisely: when it
took the pod on, the pod's IP, each container's :class:`~kubeloop.kubelet.containers.ContainerRun`,
and when it first saw the pod being deleted. :func:`advance_pod` steps every container to
``now``; :func:`memo_from_status` rebuilds a memo from a pod's status (after a kubelet
restart, status is all there is; its timestamps have whole-second precision, which is good
enough to resume). :func:`deletion_deadline` says when a Terminating pod is to be removed.

All functions are pure: times are floats of wall-clock seconds (``time.time()`` scale).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kubeloop.api.meta import is_shape, parse_time
from kubeloop.api.shapes import Container
from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import (
    BackOff,
    ContainerRun,
    ContainerSpec,
    IdSource,
    RunState,
    Termination,
    new_container_run,
    ready_time,
    step_container,
)
from kubeloop.kubelet.envmeta import env_from_metadata
from kubeloop.kubelet.images import display_image
from kubeloop.kubelet.launchpriority import barrier_opens, barrier_priority


@dataclass(frozen=True)
class PodMemo:
    """What the kubelet remembers of one pod placed on one of its nodes."""

    uid: str
    node: str
    host_ip: str
    pod_ip: str
    accepted_at: float
    """When the kubelet took the pod on (``status.startTime``)."""
    containers: tuple[ContainerRun, ...] = ()
    deleting_since: float | None = None
    """When the kubelet first saw the pod's deletionTimestamp."""


def spec_containers(pod: Mapping[str, Any], field: str = "containers") -> list[Container]:
    """The named containers of ``spec.<field>`` (``containers`` or ``initContainers``)."""
    spec = pod.get("spec")
    items: Any = spec.get(field) if isinstance(spec, Mapping) else None
    return [c for c in items or () if is_shape(c) and c.get("name")]


def new_pod_memo(pod: Mapping[str, Any], node: str, host_ip: str, pod_ip: str, now: float) -> PodMemo:
    """The memo of a pod the kubelet takes on at ``now``: every container waits to be created."""
    metadata = pod.get("metadata") or {}
    runs = tuple(new_container_run(str(c["name"]), str(c.get("image") or ""), now) for c in spec_containers(pod))
    return PodMemo(str(metadata.get("uid") or ""), node, host_ip, pod_ip, now, runs)


def _outranks(other: int | None, priority: int) -> bool:
    return other is not None and other > priority


def container_spec(container: Mapping[str, Any], pod: Mapping[str, Any]) -> ContainerSpec:
    """What the container asks for now: image, env values read from metadata, postStart hook."""
    lifecycle = container.get("lifecycle")
    post_start = isinstance(lifecycle, Mapping) and bool(lifecycle.get("postStart"))
    return ContainerSpec(str(container.get("image") or ""), env_from_metadata(container, pod), post_start)


def advance_pod(pod: Mapping[str, Any], memo: PodMemo, behaviour: PodBehaviour, now: float, new_id: IdSource,
                back_off: BackOff) -> tuple[PodMemo, float | None]:
    """Step every container of the pod to ``now``; return the memo and the earliest next due time.

    Containers are stepped from the highest launch priority down, so a container held by its
    barrier sees the containers it waits for already moved on; a held container is created
    when the barrier opens (see :mod:`kubeloop.kubelet.launchpriority`).
    """
    runs = {run.name: run for run in memo.containers}
    containers = spec_containers(pod)
    priorities = {str(c["name"]): barrier_priority(c) for c in containers}
    stepping_order = sorted(containers, key=lambda c: -(priorities[str(c["name"])] or 0))
    stepped: dict[str, ContainerRun] = {}
    earliest: float | None = None
    for container in stepping_order:
        name = str(container["name"])
        spec = container_spec(container, pod)
        run = runs.get(name) or new_container_run(name, spec.image, memo.accepted_at)
        priority = priorities[name]
        if run.state is RunState.CREATING and not run.has_started and priority is not None:
            higher = [ready_time(other, behaviour) for other_name, other in stepped.items()
                      if _outranks(priorities[other_name], priority)]
            opens = barrier_opens(priority, higher)
            if opens is None:
                stepped[name] = run
                continue
            if opens > run.since:
                run = replace(run, since=opens)
        run, due = step_container(run, spec, behaviour, now, new_id, back_off)
        stepped[name] = run
        if due is not None and (earliest is None or due < earliest):
            earliest = due
    ordered = tuple(stepped[str(c["name"])] for c in containers)
    return replace(memo, containers=ordered), earliest


def _time(value: Any, fallback: float) -> float:
    moment = parse_time(value) if isinstance(value, str) else None
    return moment.timestamp() if moment is not None else fallback


def _termination(record: Any, fallback: float) -> Termination | None:
    if not isinstance(record, Mapping):
        return None
    terminated = record.get("terminated")
    if not isinstance(terminated, Mapping):
        return None
    exit_code = terminated.get("exitCode")
    return Termination(
        exit_code if isinstance(exit_code, int) else 0,
        str(terminated.get("reason") or ""),
        _time(terminated.get("startedAt"), fallback),
        _time(terminated.get("finishedAt"), fallback),
        str(terminated.get("containerID") or ""),
    )


def _run_from_status(name: str, spec: ContainerSpec, status: Mapping[str, Any] | None, accepted_at: float,
                     now: float) -> ContainerRun:
    spec_image = spec.image
    if status is None:
        return new_container_run(name, spec_image, accepted_at)
    reported = str(status.get("image") or "")
    # The status shows the normalised image; keep the spec's spelling when they name the same
    # image, so resuming does not look like an image change (which would restart the container).
    image = spec_image if reported in ("", display_image(spec_image)) else reported
    restarts = status.get("restartCount")
    base = ContainerRun(
        name=name,
        image=image,
        state=RunState.CREATING,
        since=accepted_at,
        container_id=str(status.get("containerID") or ""),
        restart_count=restarts if isinstance(restarts, int) and restarts >= 0 else 0,
        last_termination=_termination(status.get("lastState"), now),
        # The values a run started with were in memory; assume the current ones, so resuming
        # does not restart containers.
        env=spec.env,
        ran_image=image if status.get("containerID") else "",
    )
    state = status.get("state") if isinstance(status.get("state"), Mapping) else {}
    assert isinstance(state, Mapping)
    running = state.get("running")
    if isinstance(running, Mapping):
        started = _time(running.get("startedAt"), now)
        return replace(base, state=RunState.RUNNING, since=started, started_at=started)
    waiting = state.get("waiting")
    reason = str(waiting.get("reason") or "") if isinstance(waiting, Mapping) else ""
    if reason in ("ErrImagePull", "ImagePullBackOff"):
        return replace(base, state=RunState.PULL_FAILED, since=now, failures=1, next_attempt=now)
    if reason == "CrashLoopBackOff" or isinstance(state.get("terminated"), Mapping):
        return replace(base, state=RunState.CRASHED, since=now, failures=1, next_attempt=now)
    return base


def memo_from_status(pod: Mapping[str, Any], node: str, host_ip: str, pod_ip: str, now: float) -> PodMemo:
    """Rebuild the memo of a pod the kubelet already ran (before it restarted) from its status.

    A pod never seen before (no ``startTime``) gets a fresh memo accepted at ``now``.
    Containers waiting in back-off are tried again at once: the back-off was in memory.
    """
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    if not status.get("startTime"):
        return new_pod_memo(pod, node, host_ip, pod_ip, now)
    accepted_at = _time(status.get("startTime"), now)
    statuses = {str(s.get("name")): s for s in status.get("containerStatuses") or () if isinstance(s, Mapping)}
    runs = tuple(
        _run_from_status(str(c["name"]), container_spec(c, pod), statuses.get(str(c["name"])), accepted_at, now)
        for c in spec_containers(pod)
    )
    metadata = pod.get("metadata") or {}
    return PodMemo(str(metadata.get("uid") or ""), node, str(status.get("hostIP") or host_ip),
                   str(status.get("podIP") or pod_ip), accepted_at, runs)


def deletion_started(pod: Mapping[str, Any], known: PodMemo | None, now: float) -> float:
    """When the pod's deletion began, as well as the kubelet knows.

    ``known`` is the memo the kubelet kept in memory (``None`` after a kubelet restart). With
    it, the deletion began when the kubelet first saw it (now, or its earlier sighting).
    Without it, it began ``deletionGracePeriodSeconds`` before ``deletionTimestamp``; that
    timestamp has whole-second precision, so it is only the fallback.
    """
    if known is not None:
        return known.deleting_since if known.deleting_since is not None else now
    metadata = pod.get("metadata") or {}
    deadline = parse_time(metadata.get("deletionTimestamp")) if metadata.get("deletionTimestamp") else None
    grace = metadata.get("deletionGracePeriodSeconds")
    if deadline is None or not isinstance(grace, int):
        return now
    return min(now, deadline.timestamp() - grace)


def deletion_deadline(pod: Mapping[str, Any], deleting_since: float, behaviour: PodBehaviour) -> float:
    """When a Terminating pod is removed: its grace period or its termination delay, the shorter."""
    metadata = pod.get("metadata") or {}
    grace = metadata.get("deletionGracePeriodSeconds")
    grace_seconds = float(grace) if isinstance(grace, int) and grace >= 0 else 0.0
    return deleting_since + min(grace_seconds, behaviour.termination_delay)
