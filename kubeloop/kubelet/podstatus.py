"""The pod status a node agent reports, drawn from its memory of the pod.

:func:`render_status` is a pure function of the pod as stored, the kubelet's
:class:`~kubeloop.kubelet.podstate.PodMemo`, the pod's behaviour and ``now``. It keeps every
status field and condition it does not own (``qosClass``, conditions written by controllers
such as kruise's ``InPlaceUpdateReady``) and owns:

- ``phase``: ``Pending`` until every container has started once, then ``Running``;
- ``hostIP(s)``, ``podIP(s)``, ``startTime``;
- ``containerStatuses`` (sorted by name, as the kubelet reports them) and, for pods with init
  containers, ``initContainerStatuses`` (init containers complete at once);
- conditions ``PodScheduled``, ``Initialized``, ``ContainersReady`` and ``Ready``, where
  ``Ready`` is ``ContainersReady`` and every readiness gate's condition True.

A pod being deleted gracefully (``terminating``) is not ready: every container reports
``ready: false`` and ``ContainersReady`` / ``Ready`` are False until the pod is gone, as a real
kubelet reports a pod whose containers it is stopping (so endpoints drop it and
``kubectl wait --for=condition=Ready=false`` returns).

A condition's ``lastTransitionTime`` changes only when its status does, so an unchanged pod
renders an unchanged status: rendering twice writes nothing (the reconcile compares, with
:func:`same_status`: the rendered conditions carry ``lastProbeTime: null`` as the kubelet's
do, and a server that stores no nulls -- the embedded one -- returns them without it; compared
as they were, every pod event after the first report cost a PUT of an unchanged status).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubeloop.api.meta import deep_copy, format_time
from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import ContainerRun, RunState, Termination, is_container_ready
from kubeloop.kubelet.images import display_image, image_id
from kubeloop.kubelet.podstate import PodMemo, spec_containers

POD_SCHEDULED = "PodScheduled"
INITIALIZED = "Initialized"
CONTAINERS_READY = "ContainersReady"
READY = "Ready"
OWNED_CONDITIONS = (INITIALIZED, READY, CONTAINERS_READY, POD_SCHEDULED)
"""Condition types the kubelet writes, in the order it adds them."""


def readiness_gates(pod: Mapping[str, Any]) -> list[str]:
    spec = pod.get("spec")
    gates = spec.get("readinessGates") if isinstance(spec, Mapping) else None
    return [str(g["conditionType"]) for g in gates or () if isinstance(g, Mapping) and g.get("conditionType")]


def _find(conditions: list[Mapping[str, Any]], condition_type: str) -> Mapping[str, Any] | None:
    for condition in conditions:
        if condition.get("type") == condition_type:
            return condition
    return None


def unready_gates(pod: Mapping[str, Any], conditions: list[Mapping[str, Any]]) -> list[str]:
    """Why each readiness gate of the pod is not passed (empty when all are True)."""
    reasons = []
    for gate in readiness_gates(pod):
        condition = _find(conditions, gate)
        if condition is None:
            reasons.append(f'readiness gate "{gate}" has no condition yet')
        elif condition.get("status") != "True":
            reasons.append(f'readiness gate "{gate}" is {condition.get("status")}, not True')
    return reasons


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def same_status(rendered: Mapping[str, Any], stored: object) -> bool:
    """Whether writing ``rendered`` would leave ``stored`` (the pod's status as the server
    answered it) as it is: equal, or equal once null fields are dropped -- a null and an absent
    field decode to the same value in every typed API object (``lastProbeTime: null`` is the
    zero ``metav1.Time``), and servers differ in which of the two they answer. The real
    kubelet compares typed statuses, so it never sees the difference (``status_manager.go``,
    ``isPodStatusByKubeletEqual``)."""
    if rendered == stored:
        return True
    return isinstance(stored, Mapping) and _without_nulls(rendered) == _without_nulls(stored)


def _condition(condition_type: str, ok: bool, reason: str = "", message: str = "") -> dict[str, Any]:
    condition: dict[str, Any] = {"type": condition_type, "status": "True" if ok else "False", "lastProbeTime": None}
    if not ok and reason:
        condition["reason"] = reason
    if not ok and message:
        condition["message"] = message
    return condition


def _terminated(record: Termination) -> dict[str, Any]:
    return {"terminated": {
        "exitCode": record.exit_code,
        "reason": record.reason,
        "startedAt": format_time_of(record.started_at),
        "finishedAt": format_time_of(record.finished_at),
        "containerID": record.container_id,
    }}


def format_time_of(seconds: float) -> str:
    """``metav1.Time`` of a wall-clock reading in seconds."""
    return format_time(datetime.fromtimestamp(seconds, UTC))


def _state(run: ContainerRun, pod_name: str, now: float) -> dict[str, Any]:
    if run.state is RunState.RUNNING:
        started = run.started_at if run.started_at is not None else run.since
        return {"running": {"startedAt": format_time_of(started)}}
    if run.state is RunState.CREATING:
        return {"waiting": {"reason": "ContainerCreating"}}
    if run.state is RunState.PULL_FAILED:
        reason = "ErrImagePull" if run.failures <= 1 else "ImagePullBackOff"
        return {"waiting": {"reason": reason, "message": f'simulated failure pulling image "{run.image}"'}}
    wait = max(0, round((run.next_attempt or now) - run.since))
    return {"waiting": {"reason": "CrashLoopBackOff",
                        "message": f"container {run.name} of pod {pod_name} failed; restarting after {wait}s back-off"}}


def container_status(run: ContainerRun, behaviour: PodBehaviour, pod_name: str, now: float) -> dict[str, Any]:
    """One entry of ``status.containerStatuses``.

    A container whose new image fails to pull still reports the image its last run used.
    """
    shown = run.ran_image if run.state is RunState.PULL_FAILED and run.ran_image else run.image
    status: dict[str, Any] = {
        "name": run.name,
        "state": _state(run, pod_name, now),
        "lastState": _terminated(run.last_termination) if run.last_termination is not None else {},
        "ready": is_container_ready(run, behaviour, now),
        "restartCount": run.restart_count,
        "image": display_image(shown),
        "imageID": image_id(shown) if run.has_started else "",
        "started": run.state is RunState.RUNNING,
    }
    if run.has_started:
        status["containerID"] = run.container_id
    return status


def _init_container_status(container: Mapping[str, Any], memo: PodMemo) -> dict[str, Any]:
    image = str(container.get("image") or "")
    at = format_time_of(memo.accepted_at)
    return {
        "name": str(container["name"]),
        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": at, "finishedAt": at,
                                 "containerID": f"containerd://init-{memo.uid}-{container['name']}"}},
        "lastState": {},
        "ready": True,
        "restartCount": 0,
        "image": display_image(image),
        "imageID": image_id(image),
        "containerID": f"containerd://init-{memo.uid}-{container['name']}",
        "started": False,
    }


def _merge_conditions(existing: list[Mapping[str, Any]], desired: dict[str, dict[str, Any]],
                      now: float) -> list[dict[str, Any]]:
    """Replace owned conditions, keep the others, and keep transition times of unchanged statuses."""
    stamp = format_time_of(now)
    merged: list[dict[str, Any]] = []
    placed: set[str] = set()
    for condition in existing:
        condition_type = str(condition.get("type"))
        wanted = desired.get(condition_type)
        if wanted is None:
            merged.append(dict(condition))
            continue
        placed.add(condition_type)
        same = condition.get("status") == wanted["status"] and condition.get("lastTransitionTime")
        merged.append({**wanted, "lastTransitionTime": condition["lastTransitionTime"] if same else stamp})
    for condition_type in OWNED_CONDITIONS:
        if condition_type not in placed:
            merged.append({**desired[condition_type], "lastTransitionTime": stamp})
    return merged


def render_status(pod: Mapping[str, Any], memo: PodMemo, behaviour: PodBehaviour, now: float, *,
                  terminating: bool = False) -> dict[str, Any]:
    """The status the kubelet reports for ``pod`` at ``now`` (a new dict; ``pod`` is untouched).

    With ``terminating``, no container is ready (the pod is being deleted gracefully).
    """
    current = pod.get("status")
    status: dict[str, Any] = deep_copy(current) if isinstance(current, Mapping) else {}
    name = str((pod.get("metadata") or {}).get("name") or "")
    runs = sorted(memo.containers, key=lambda run: run.name)
    statuses = [container_status(run, behaviour, name, now) for run in runs]
    if terminating:
        for entry in statuses:
            entry["ready"] = False
    unready = [s["name"] for s in statuses if not s["ready"]]
    existing = [c for c in status.get("conditions") or () if isinstance(c, Mapping)]
    gates = unready_gates(pod, existing)
    containers_ready = not unready
    if not containers_ready:
        ready = _condition(READY, False, "ContainersNotReady", f"unready containers: [{' '.join(unready)}]")
    elif gates:
        ready = _condition(READY, False, "ReadinessGatesNotReady", "; ".join(gates))
    else:
        ready = _condition(READY, True)
    desired = {
        POD_SCHEDULED: _condition(POD_SCHEDULED, True),
        INITIALIZED: _condition(INITIALIZED, True),
        CONTAINERS_READY: _condition(CONTAINERS_READY, containers_ready, "ContainersNotReady",
                                     f"unready containers: [{' '.join(unready)}]"),
        READY: ready,
    }
    status["conditions"] = _merge_conditions(existing, desired, now)
    status["phase"] = "Running" if runs and all(run.has_started for run in runs) else "Pending"
    status["hostIP"] = memo.host_ip
    status["hostIPs"] = [{"ip": memo.host_ip}]
    status["podIP"] = memo.pod_ip
    status["podIPs"] = [{"ip": memo.pod_ip}]
    status["startTime"] = format_time_of(memo.accepted_at)
    status["containerStatuses"] = statuses
    init_containers = spec_containers(pod, "initContainers")
    if init_containers:
        status["initContainerStatuses"] = [_init_container_status(c, memo) for c in init_containers]
    return status


def unschedulable_status(pod: Mapping[str, Any], message: str, now: float) -> dict[str, Any]:
    """The status of a pod no node can take: ``PodScheduled=False`` with reason Unschedulable."""
    current = pod.get("status")
    status: dict[str, Any] = deep_copy(current) if isinstance(current, Mapping) else {}
    status.setdefault("phase", "Pending")
    existing = [c for c in status.get("conditions") or () if isinstance(c, Mapping)]
    wanted = _condition(POD_SCHEDULED, False, "Unschedulable", message)
    conditions: list[dict[str, Any]] = []
    placed = False
    for condition in existing:
        if condition.get("type") == POD_SCHEDULED:
            placed = True
            same = condition.get("status") == "False" and condition.get("lastTransitionTime")
            conditions.append({**wanted, "lastTransitionTime": condition["lastTransitionTime"] if same
                               else format_time_of(now)})
        else:
            conditions.append(dict(condition))
    if not placed:
        conditions.append({**wanted, "lastTransitionTime": format_time_of(now)})
    status["conditions"] = conditions
    return status
