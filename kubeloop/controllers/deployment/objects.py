"""Tolerant readers for the Deployment and ReplicaSet fields the controller arithmetic uses.

Objects arrive as plain JSON dicts, normally already defaulted by the API server. The readers
never raise: a missing or malformed field reads as the API default (``replicas`` 1,
``minReadySeconds`` 0, ...) or as ``None`` where upstream keeps a nil pointer with its own
meaning (``progressDeadlineSeconds``, ``revisionHistoryLimit``, ``collisionCount``), so a
malformed object degrades to defined behaviour instead of a stack trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kubeloop.api.meta import is_shape, metadata, parse_time
from kubeloop.api.nested import section
from kubeloop.api.shapes import PodTemplateSpec

Obj = dict[str, Any]

MAX_INT32 = 2**31 - 1

ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"


def int_field(values: Mapping[str, Any], key: str, default: int = 0) -> int:
    """An integer field; booleans, strings and other JSON types read as ``default``."""
    value = values.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def optional_int_field(values: Mapping[str, Any], key: str) -> int | None:
    value = values.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def spec_replicas(obj: Mapping[str, Any] | None) -> int:
    """``spec.replicas`` of a Deployment or ReplicaSet (API default 1 when absent)."""
    return int_field(section(obj, "spec"), "replicas", 1)


def status_int(obj: Mapping[str, Any] | None, key: str) -> int:
    """An integer counter of ``status`` (0 when absent, as Go's zero value)."""
    return int_field(section(obj, "status"), key)


def generation_of(obj: Mapping[str, Any]) -> int:
    return int_field(metadata(obj), "generation")


def creation_time(obj: Mapping[str, Any]) -> datetime | None:
    """``metadata.creationTimestamp``; ``None`` (Go's zero time) when missing or unparsable."""
    return safe_time(metadata(obj).get("creationTimestamp"))


def safe_time(value: Any) -> datetime | None:
    """Parse an RFC 3339 timestamp, reading anything malformed as ``None`` (the zero time)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def min_ready_seconds(obj: Mapping[str, Any]) -> int:
    return int_field(section(obj, "spec"), "minReadySeconds")


def strategy_type(deployment: Mapping[str, Any]) -> str:
    value = section(deployment, "spec", "strategy").get("type")
    return value if isinstance(value, str) else ""


def is_rolling_update(deployment: Mapping[str, Any]) -> bool:
    return strategy_type(deployment) == ROLLING_UPDATE


def rolling_update_parameters(deployment: Mapping[str, Any]) -> tuple[Any, Any]:
    """Raw ``(maxSurge, maxUnavailable)`` of ``spec.strategy.rollingUpdate`` (``None`` if unset)."""
    params = section(deployment, "spec", "strategy", "rollingUpdate")
    return params.get("maxSurge"), params.get("maxUnavailable")


def progress_deadline_seconds(deployment: Mapping[str, Any]) -> int | None:
    return optional_int_field(section(deployment, "spec"), "progressDeadlineSeconds")


def has_progress_deadline(deployment: Mapping[str, Any]) -> bool:
    """A deadline is configured: set and not MaxInt32 (which upstream reads as "no deadline")."""
    deadline = progress_deadline_seconds(deployment)
    return deadline is not None and deadline != MAX_INT32


def revision_history_limit(deployment: Mapping[str, Any]) -> int | None:
    return optional_int_field(section(deployment, "spec"), "revisionHistoryLimit")


def has_revision_history_limit(deployment: Mapping[str, Any]) -> bool:
    limit = revision_history_limit(deployment)
    return limit is not None and limit != MAX_INT32


def is_paused(deployment: Mapping[str, Any]) -> bool:
    return section(deployment, "spec").get("paused") is True


def collision_count(deployment: Mapping[str, Any]) -> int | None:
    return optional_int_field(section(deployment, "status"), "collisionCount")


def pod_template(obj: Mapping[str, Any]) -> PodTemplateSpec:
    """``spec.template`` of a Deployment or ReplicaSet (empty mapping when absent)."""
    template: Any = section(obj, "spec", "template")
    return template if is_shape(template) else {}
