"""What a ReplicaSet sync reads from a pod, extracted once per pod version.

A sync looks at every pod its ReplicaSet controls (claim, status counts), and with one
ReplicaSet owning thousands of pods it runs back to back while they start: re-reading each
pod's owner references, phase, labels and Ready condition (with its timestamp parsed) every
time made the sync's cost per pod dominate the controller. :class:`PodFacts` holds those
readings; :class:`PodFactsCache` keeps them per pod UID until the pod's ``resourceVersion``
changes (an informer replaces, never edits, a cached object, so an unchanged version means an
unchanged pod). The same facts tell a pod update that changes nothing a ReplicaSet's sync
depends on from one that does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api.labels import Selector
from kubeloop.api.meta import controller_of, is_being_deleted, labels_of, metadata, parse_time
from kubeloop.api.pods import POD_FAILED, POD_SUCCEEDED, pod_phase, ready_condition


def _ready_since(condition: Mapping[str, Any]) -> datetime | None:
    text = condition.get("lastTransitionTime")
    if not isinstance(text, str):
        return None
    try:
        return parse_time(text)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class PodFacts:
    """The parts of one pod a ReplicaSet's claim and status depend on.

    ``active``: neither finished nor being deleted; ``terminating``: being deleted but not
    finished; ``ready``: Ready=True, since ``ready_since`` (``None`` when not ready or the time
    is missing or malformed). ``controller`` is the controlling owner reference as stored.
    """

    active: bool
    terminating: bool
    controller: Mapping[str, Any] | None
    labels: Mapping[str, Any]
    ready: bool
    ready_since: datetime | None

    @property
    def controller_uid(self) -> Any:
        return self.controller.get("uid") if self.controller is not None else None

    def available(self, min_ready_seconds: int, now: datetime) -> bool:
        """Ready for longer than ``min_ready_seconds`` at ``now`` (the pod-available rule)."""
        if not self.ready:
            return False
        if min_ready_seconds <= 0:
            return True
        return self.ready_since is not None and self.ready_since + timedelta(seconds=min_ready_seconds) < now

    def fully_labeled(self, template_labels: Mapping[str, Any]) -> bool:
        """Carries every one of ``template_labels`` with the same value."""
        labels = self.labels
        return all(labels.get(key) == value for key, value in template_labels.items())


def pod_facts(pod: Mapping[str, Any]) -> PodFacts:
    """Read :class:`PodFacts` from a pod (pure)."""
    phase = pod_phase(pod)
    finished = phase in (POD_SUCCEEDED, POD_FAILED)
    deleting = is_being_deleted(pod)
    condition = ready_condition(pod)
    ready = condition is not None and condition.get("status") == "True"
    return PodFacts(
        active=not finished and not deleting,
        terminating=deleting and not finished,
        controller=controller_of(pod),
        labels=labels_of(pod),
        ready=ready,
        ready_since=_ready_since(condition) if ready and condition is not None else None,
    )


class _Entry:
    __slots__ = ("facts", "match", "resource_version", "selector")

    def __init__(self, resource_version: Any, facts: PodFacts) -> None:
        self.resource_version = resource_version
        self.facts = facts
        self.selector: Selector | None = None
        self.match = False


class PodFactsCache:
    """:func:`pod_facts` and selector matches, remembered per pod UID and ``resourceVersion``.

    Pods without a UID or ``resourceVersion`` are read every time. The last selector checked
    against each pod version is remembered by identity, so callers should reuse one
    :class:`Selector` object per ReplicaSet selector.
    """

    def __init__(self) -> None:
        self._entries: dict[Any, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def _entry(self, pod: Mapping[str, Any]) -> _Entry:
        meta = pod.get("metadata")
        if type(meta) is not dict:  # the usual case skips the slower Mapping check
            meta = metadata(pod)
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if not uid or not version:
            return _Entry(version, pod_facts(pod))
        entry = self._entries.get(uid)
        if entry is None or entry.resource_version != version:
            entry = _Entry(version, pod_facts(pod))
            self._entries[uid] = entry
        return entry

    def facts(self, pod: Mapping[str, Any]) -> PodFacts:
        return self._entry(pod).facts

    def matches(self, selector: Selector, pod: Mapping[str, Any]) -> bool:
        """``selector.matches`` on the pod's labels, remembered for this pod version."""
        entry = self._entry(pod)
        if entry.selector is not selector:
            entry.match = selector.matches(entry.facts.labels)
            entry.selector = selector
        return entry.match

    def forget(self, pod: Mapping[str, Any]) -> None:
        """Drop what is remembered about a pod (it was deleted)."""
        uid = metadata(pod).get("uid")
        if uid:
            self._entries.pop(uid, None)
