"""The status conditions a terminating namespace carries while its content is deleted.

As upstream's ``pkg/controller/namespace/deletion/status_condition_utils.go``: five condition
types, each either True with a failure reason and message, or False with its "ok" reason and
message. Updating keeps a condition's ``lastTransitionTime`` unless its status flips, and
leaves conditions of other types alone. Pure functions: the caller writes the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSION_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

CONDITION_TYPES = (DISCOVERY_FAILURE, GROUP_VERSION_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)

OK_REASONS = {
    DISCOVERY_FAILURE: "ResourcesDiscovered",
    GROUP_VERSION_PARSING_FAILURE: "ParsedGroupVersions",
    CONTENT_FAILURE: "ContentDeleted",
    CONTENT_REMAINING: "ContentRemoved",
    FINALIZERS_REMAINING: "ContentHasNoFinalizers",
}
OK_MESSAGES = {
    DISCOVERY_FAILURE: "All resources successfully discovered",
    GROUP_VERSION_PARSING_FAILURE: "All legacy kube types successfully parsed",
    CONTENT_FAILURE: "All content successfully deleted, may be waiting on finalization",
    CONTENT_REMAINING: "All content successfully removed",
    FINALIZERS_REMAINING: "All content-preserving finalizers finished",
}


@dataclass
class DeletionReport:
    """What one pass over a namespace's content found."""

    remaining: dict[tuple[str, str], int] = field(default_factory=dict)
    """(group, resource) -> objects still there."""
    finalizers: dict[str, int] = field(default_factory=dict)
    """Finalizer -> remaining objects that carry it."""
    errors: list[str] = field(default_factory=list)
    """One message per resource whose deletion failed."""
    discovery_error: str | None = None
    group_version_error: str | None = None

    def add_remaining(self, group: str, resource: str, count: int, finalizers: Mapping[str, int]) -> None:
        if count <= 0:
            return
        self.remaining[(group, resource)] = self.remaining.get((group, resource), 0) + count
        for finalizer, number in finalizers.items():
            if number > 0:
                self.finalizers[finalizer] = self.finalizers.get(finalizer, 0) + number


def failures(report: DeletionReport) -> dict[str, tuple[str, str]]:
    """Condition type -> (reason, message) for each failing condition of ``report``."""
    found: dict[str, tuple[str, str]] = {}
    if report.discovery_error is not None:
        found[DISCOVERY_FAILURE] = ("DiscoveryFailed", report.discovery_error)
    if report.group_version_error is not None:
        found[GROUP_VERSION_PARSING_FAILURE] = ("GroupVersionParsingFailed", report.group_version_error)
    if report.errors:
        messages = sorted(report.errors)
        found[CONTENT_FAILURE] = ("ContentDeletionFailed",
                                  f"Failed to delete all resource types, {len(messages)} remaining: "
                                  + ", ".join(messages))
    if report.remaining:
        # "<resource>.<group>": the core group leaves a trailing dot ("pods."), as upstream.
        parts = sorted(f"{resource}.{group} has {count} resource instances"
                       for (group, resource), count in report.remaining.items())
        found[CONTENT_REMAINING] = ("SomeResourcesRemain", "Some resources are remaining: " + ", ".join(parts))
    if report.finalizers:
        parts = sorted(f"{finalizer} in {count} resource instances" for finalizer, count in report.finalizers.items())
        found[FINALIZERS_REMAINING] = ("SomeFinalizersRemain",
                                       "Some content in the namespace has finalizers remaining: " + ", ".join(parts))
    return found


def updated_conditions(current: list[Any], report: DeletionReport, now: str) -> list[Obj] | None:
    """The namespace's new ``status.conditions`` after ``report``, or None when nothing changes."""
    conditions: list[Obj] = [dict(c) if isinstance(c, Mapping) else c for c in current]
    failing = failures(report)
    changed = False
    for kind in CONDITION_TYPES:
        status, (reason, message) = ("True", failing[kind]) if kind in failing else (
            "False", (OK_REASONS[kind], OK_MESSAGES[kind]))
        old = next((c for c in conditions if isinstance(c, dict) and c.get("type") == kind), None)
        if old is None:
            conditions.append({"type": kind, "status": status, "lastTransitionTime": now, "reason": reason,
                               "message": message})
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (status, reason, message):
            if old.get("status") != status:
                old["lastTransitionTime"] = now
            old.update(status=status, reason=reason, message=message)
            changed = True
    return conditions if changed else None
