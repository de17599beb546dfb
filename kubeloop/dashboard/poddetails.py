"""One pod's details, for the panel a click on its tile opens: conditions, containers, restarts, events.

:func:`pod_details` is pure: the pod (an informer cache entry, never modified) and its events
in, a JSON-ready dict out, served by ``GET /api/pods/{namespace}/{name}``:

``name``, ``namespace``, ``phase``, ``node``, ``podIP``, ``startTime``, ``deleting``
    identity and placement (``deleting``: ``metadata.deletionTimestamp`` or ``""``);
``restarts``
    the sum of the containers' ``restartCount`` (init containers included), as
    ``kubectl get pods`` counts its RESTARTS column;
``conditions``
    ``status.conditions`` as ``{type, status, reason, message, lastTransitionTime}``;
``containers``
    one entry per container status (init containers first, ``init: true``): ``name``,
    ``image``, ``ready``, ``restartCount``, ``state`` and ``lastState`` rendered as
    ``kubectl describe pod`` words them (``Running``, ``Waiting (CrashLoopBackOff)``,
    ``Terminated (Error, exit code 1)``);
``events``
    the events about the pod, newest first, in the views' event format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeloop.api.meta import name_of, namespace_of

Obj = Mapping[str, Any]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def container_state(state: Any) -> str:
    """A container state (``{"running": ...}`` / ``waiting`` / ``terminated``) in ``kubectl describe``'s words."""
    state = _mapping(state)
    if "running" in state:
        return "Running"
    if "waiting" in state:
        reason = _mapping(state["waiting"]).get("reason")
        return f"Waiting ({reason})" if reason else "Waiting"
    if "terminated" in state:
        terminated = _mapping(state["terminated"])
        parts = [str(terminated["reason"])] if terminated.get("reason") else []
        if terminated.get("exitCode") is not None:
            parts.append(f"exit code {terminated['exitCode']}")
        return f"Terminated ({', '.join(parts)})" if parts else "Terminated"
    return ""


def _containers(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    entries = []
    for field, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        statuses = status.get(field)
        for container in statuses if isinstance(statuses, list) else []:
            container = _mapping(container)
            entries.append({
                "name": str(container.get("name") or ""),
                "image": str(container.get("image") or ""),
                "init": init,
                "ready": bool(container.get("ready")),
                "restartCount": int(container.get("restartCount") or 0),
                "state": container_state(container.get("state")),
                "lastState": container_state(container.get("lastState")),
            })
    return entries


def pod_details(pod: Obj, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The details panel's data for ``pod``; ``events`` are already in the views' event format."""
    status = _mapping(pod.get("status"))
    spec = _mapping(pod.get("spec"))
    conditions = status.get("conditions")
    keys = ("type", "status", "reason", "message", "lastTransitionTime")
    containers = _containers(status)
    return {
        "name": name_of(pod),
        "namespace": namespace_of(pod),
        "phase": str(status.get("phase") or ""),
        "node": str(spec.get("nodeName") or ""),
        "podIP": str(status.get("podIP") or ""),
        "startTime": str(status.get("startTime") or ""),
        "deleting": str(_mapping(pod.get("metadata")).get("deletionTimestamp") or ""),
        "restarts": sum(c["restartCount"] for c in containers),
        "conditions": [{k: _mapping(c).get(k) for k in keys if _mapping(c).get(k) is not None}
                       for c in (conditions if isinstance(conditions, list) else [])],
        "containers": containers,
        "events": list(events),
    }
