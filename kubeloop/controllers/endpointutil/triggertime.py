"""The ``endpoints.kubernetes.io/last-change-trigger-time`` annotation, as upstream's
``pkg/controller/util/endpoint`` ``TriggerTimeTracker``.

For each Service the tracker remembers the trigger times it saw at the previous sync: every
pod's ``Ready`` condition transition time, and the Service's creation time. A sync's trigger
time is the earliest of those that changed since (a pod that appeared counts as changed), so
it tells when the change that the write publishes first happened; ``None`` when nothing
changed (the annotation is then left out). Pure apart from its own memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.api.meta import name_of
from kubeloop.api.pods import ready_condition


def pod_trigger_time(pod: Mapping[str, Any]) -> str:
    condition = ready_condition(pod)
    value = condition.get("lastTransitionTime") if condition is not None else None
    return str(value) if value else ""


def service_trigger_time(service: Mapping[str, Any]) -> str:
    meta = service.get("metadata")
    value = meta.get("creationTimestamp") if isinstance(meta, Mapping) else None
    return str(value) if value else ""


@dataclass
class _State:
    service: str = ""
    pods: dict[str, str] = field(default_factory=dict)


class TriggerTimeTracker:
    """Per-Service memory of the trigger times of its last sync."""

    def __init__(self) -> None:
        self._states: dict[str, _State] = {}

    def compute(self, key: str, service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> str | None:
        """The trigger time of this sync of the Service ``key`` (RFC 3339 text), and remember it."""
        previous = self._states.get(key, _State())
        state = _State(service_trigger_time(service))
        changed: list[str] = []
        for pod in pods:
            moment = pod_trigger_time(pod)
            state.pods[name_of(pod)] = moment
            if moment and previous.pods.get(name_of(pod)) != moment:
                changed.append(moment)
        if state.service and state.service != previous.service:
            changed.append(state.service)
        self._states[key] = state
        # RFC 3339 UTC texts of one format sort as the times they name.
        return min(changed) if changed else None

    def forget(self, key: str) -> None:
        self._states.pop(key, None)
