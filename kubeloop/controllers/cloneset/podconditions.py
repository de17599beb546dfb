"""Writing pod conditions the way OpenKruise's controllers write them.

``set_pod_condition`` replaces a condition only when its status changes (keeping the old one,
with its transition time, otherwise). ``refresh_ready_condition`` recomputes ``Ready`` from
the readiness gates, but only while ``ContainersReady`` is True: the controller only ever turns
``Ready`` False this way and leaves turning it True to the kubelet.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kubeloop.api.conditions import find_condition
from kubeloop.api.meta import format_time, is_mapping


def conditions_list(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod's ``status.conditions`` list, created when missing (``pod`` must be a copy)."""
    status = pod.setdefault("status", {})
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = []
        status["conditions"] = conditions
    return conditions


def set_pod_condition(pod: dict[str, Any], condition: dict[str, Any]) -> None:
    """Add ``condition`` or replace the one of its type if the status differs (in place)."""
    conditions = conditions_list(pod)
    for index, existing in enumerate(conditions):
        if is_mapping(existing) and existing.get("type") == condition.get("type"):
            if existing.get("status") != condition.get("status"):
                conditions[index] = condition
            return
    conditions.append(condition)


def readiness_gate_types(pod: Mapping[str, Any]) -> list[str]:
    spec = pod.get("spec")
    gates = spec.get("readinessGates") if is_mapping(spec) else None
    return [str(g.get("conditionType")) for g in gates or () if is_mapping(g)]


def has_readiness_gate(pod: Mapping[str, Any], condition_type: str) -> bool:
    return condition_type in readiness_gate_types(pod)


def refresh_ready_condition(pod: dict[str, Any], now: datetime) -> None:
    """Recompute ``Ready`` from the readiness gates while ``ContainersReady`` is True (in place)."""
    conditions = conditions_list(pod)
    if find_condition(conditions, "Ready") is None:
        return
    containers_ready = find_condition(conditions, "ContainersReady")
    if containers_ready is None or containers_ready.get("status") != "True":
        return
    unready: list[str] = []
    for gate in readiness_gate_types(pod):
        condition = find_condition(conditions, gate)
        if condition is None:
            unready.append(f'corresponding condition of pod readiness gate "{gate}" does not exist.')
        elif condition.get("status") != "True":
            unready.append(f'the status of pod readiness gate "{gate}" is not "True", but {condition.get("status")}')
    ready: dict[str, Any] = {"type": "Ready", "status": "True", "lastTransitionTime": format_time(now)}
    if unready:
        ready = {
            "type": "Ready",
            "status": "False",
            "reason": "ReadinessGatesNotReady",
            "message": ", ".join(unready),
            "lastTransitionTime": format_time(now),
        }
    set_pod_condition(pod, ready)
