"""Pod rows: NAME READY STATUS RESTARTS AGE, and IP, NODE, NOMINATED NODE, READINESS GATES wide.

The STATUS cell follows kube-apiserver 1.20's pod printer:

- start from ``status.reason`` if set, else ``status.phase``;
- walk the init containers in order: a clean exit (code 0) moves on; a failed one gives
  ``Init:<reason>`` (or ``Init:Signal:<n>`` / ``Init:ExitCode:<n>``); a waiting one with a reason
  other than ``PodInitializing`` gives ``Init:<reason>``; anything else gives
  ``Init:<index>/<count>``. The first init container not cleanly done decides;
- if no init container is pending, walk the app containers from last to first: a waiting
  reason, else a terminated reason (or ``Signal:<n>`` / ``ExitCode:<n>``) replaces the status,
  and a ready running container counts as ready; a ``Completed`` status with a container still
  running turns back into ``Running`` (if the pod is Ready) or ``NotReady``;
- a pod being deleted shows ``Terminating`` (``Unknown`` when the node was unreachable).

RESTARTS sums the restart counts of the containers walked (the init containers' while
initializing, else the app containers'); this is the 1.20 form, a plain integer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    integer,
    items,
    mapping,
    name_of,
    text,
)

NODE_UNREACHABLE_REASON = "NodeLost"
"""``status.reason`` the node lifecycle controller sets on pods of an unreachable node."""

POD_COLUMNS = (
    NAME,
    Column("Ready", "string", "How many of the pod's containers are ready, out of all of them."),
    Column("Status", "string", "A summary of the pod's state, from its phase and its containers' states."),
    Column("Restarts", "integer", "How many times the pod's containers have been restarted."),
    AGE,
    Column("IP", "string", "The pod's IP address.", priority=1),
    Column("Node", "string", "The node the pod is bound to.", priority=1),
    Column("Nominated Node", "string", "The node the scheduler nominated after preemption.", priority=1),
    Column("Readiness Gates", "string", "How many readiness gates hold, out of all of them.", priority=1),
)


def _terminated_text(terminated: Any, prefix: str) -> str:
    reason = text(dig(terminated, "reason"))
    if reason:
        return prefix + reason
    signal = integer(dig(terminated, "signal"))
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{integer(dig(terminated, 'exitCode'))}"


def _condition_true(pod: Obj, condition_type: str) -> bool:
    return any(c.get("type") == condition_type and c.get("status") == "True"
               for c in items(dig(pod, "status", "conditions")))


def _init_status(pod: Obj) -> tuple[str | None, int]:
    """The STATUS while initializing (``None`` when every init container exited cleanly) and the
    init containers' restarts up to the deciding one."""
    statuses = items(dig(pod, "status", "initContainerStatuses"))
    total = len(items(dig(pod, "spec", "initContainers")))
    restarts = 0
    for index, status in enumerate(statuses):
        restarts += integer(status.get("restartCount"))
        state = mapping(status.get("state"))
        terminated = state.get("terminated")
        waiting_reason = text(dig(state, "waiting", "reason"))
        if isinstance(terminated, dict) and integer(terminated.get("exitCode")) == 0:
            continue
        if isinstance(terminated, dict):
            return _terminated_text(terminated, "Init:"), restarts
        if waiting_reason and waiting_reason != "PodInitializing":
            return "Init:" + waiting_reason, restarts
        return f"Init:{index}/{total}", restarts
    return None, restarts


def pod_status(pod: Obj) -> tuple[str, int, int]:
    """``(STATUS, ready containers, restarts)`` of a pod, as upstream's printer derives them."""
    reason = text(dig(pod, "status", "reason")) or text(dig(pod, "status", "phase"))
    ready = 0
    initializing, restarts = _init_status(pod)
    if initializing is not None:
        reason = initializing
    else:
        restarts = 0
        running = False
        for status in reversed(items(dig(pod, "status", "containerStatuses"))):
            restarts += integer(status.get("restartCount"))
            state = mapping(status.get("state"))
            waiting_reason = text(dig(state, "waiting", "reason"))
            terminated = state.get("terminated")
            if waiting_reason:
                reason = waiting_reason
            elif isinstance(terminated, dict):
                reason = _terminated_text(terminated, "")
            elif status.get("ready") is True and isinstance(state.get("running"), dict):
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(pod, "Ready") else "NotReady"
    if dig(pod, "metadata", "deletionTimestamp"):
        reason = "Unknown" if dig(pod, "status", "reason") == NODE_UNREACHABLE_REASON else "Terminating"
    return reason, ready, restarts


def _readiness_gates(pod: Obj) -> str:
    gates = items(dig(pod, "spec", "readinessGates"))
    if not gates:
        return "<none>"
    conditions = items(dig(pod, "status", "conditions"))
    holding = 0
    for gate in gates:
        for condition in conditions:
            if condition.get("type") == gate.get("conditionType"):
                holding += condition.get("status") == "True"
                break
    return f"{holding}/{len(gates)}"


def pod_cells(pod: Obj, now: datetime) -> list[Any]:
    reason, ready, restarts = pod_status(pod)
    total = len(items(dig(pod, "spec", "containers")))
    ips = items(dig(pod, "status", "podIPs"))
    # Pods written with only the singular field still show it (the internal form fills podIPs from it).
    ip = text(ips[0].get("ip")) if ips else text(dig(pod, "status", "podIP"))
    return [
        name_of(pod), f"{ready}/{total}", reason, restarts, age(created(pod), now),
        ip or "<none>",
        text(dig(pod, "spec", "nodeName")) or "<none>",
        text(dig(pod, "status", "nominatedNodeName")) or "<none>",
        _readiness_gates(pod),
    ]


_SUCCEEDED = [{"type": "Completed", "status": "True", "reason": "Succeeded",
               "message": "The pod has completed successfully."}]
_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]


def pod_row_conditions(pod: Obj) -> list[dict[str, str]]:
    """Row conditions upstream attaches to finished pods (clients may hide completed rows)."""
    phase = dig(pod, "status", "phase")
    if phase == "Succeeded":
        return [dict(c) for c in _SUCCEEDED]
    if phase == "Failed":
        return [dict(c) for c in _FAILED]
    return []


POD_PRINTER = Printer(POD_COLUMNS, pod_cells, pod_row_conditions)
