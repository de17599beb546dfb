"""Reading a CloneSet's spec with upstream's defaults.

Admission defaults a stored CloneSet, but the controller must not break on an object that
missed defaulting (or on a hand-written dict in a test): each accessor here falls back to the
value upstream's defaulting would have written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.intstr import IntOrString
from kubeloop.api.meta import is_mapping, labels_of
from kubeloop.api.nested import section

from .options import CloneSetFeatureGates


def spec_of(cs: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(cs, "spec")


def replicas_of(cs: Mapping[str, Any]) -> int:
    """``spec.replicas``; 1 when unset, as defaulting would set it."""
    value = spec_of(cs).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def update_strategy_of(cs: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(cs, "spec", "updateStrategy")


def scale_strategy_of(cs: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(cs, "spec", "scaleStrategy")


def update_strategy_type(cs: Mapping[str, Any]) -> str:
    return str(update_strategy_of(cs).get("type") or kruise.RECREATE)


def partition_of(cs: Mapping[str, Any]) -> IntOrString | None:
    value = update_strategy_of(cs).get("partition")
    return value if isinstance(value, int | str) else None


def max_unavailable_of(cs: Mapping[str, Any]) -> IntOrString:
    value = update_strategy_of(cs).get("maxUnavailable")
    return value if isinstance(value, int | str) else kruise.DEFAULT_MAX_UNAVAILABLE


def max_surge_of(cs: Mapping[str, Any]) -> IntOrString | None:
    value = update_strategy_of(cs).get("maxSurge")
    return value if isinstance(value, int | str) else None


def scale_max_unavailable_of(cs: Mapping[str, Any]) -> IntOrString | None:
    value = scale_strategy_of(cs).get("maxUnavailable")
    return value if isinstance(value, int | str) else None


def is_paused(cs: Mapping[str, Any]) -> bool:
    return update_strategy_of(cs).get("paused") is True


def min_ready_seconds_of(cs: Mapping[str, Any]) -> int:
    value = spec_of(cs).get("minReadySeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def pods_to_delete_of(cs: Mapping[str, Any]) -> list[str]:
    names = scale_strategy_of(cs).get("podsToDelete")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def disable_pvc_reuse(cs: Mapping[str, Any]) -> bool:
    return scale_strategy_of(cs).get("disablePVCReuse") is True


def revision_history_limit_of(cs: Mapping[str, Any]) -> int:
    value = spec_of(cs).get("revisionHistoryLimit")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return kruise.DEFAULT_REVISION_HISTORY_LIMIT


def progress_deadline_seconds_of(cs: Mapping[str, Any]) -> int | None:
    value = spec_of(cs).get("progressDeadlineSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def grace_period_seconds_of(cs: Mapping[str, Any]) -> int:
    """``updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds`` (0 when unset)."""
    strategy = section(update_strategy_of(cs), "inPlaceUpdateStrategy")
    value = strategy.get("gracePeriodSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def lifecycle_of(cs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``spec.lifecycle`` or ``None`` when unset (upstream distinguishes nil from empty)."""
    value = spec_of(cs).get("lifecycle")
    return value if is_mapping(value) else None


def lifecycle_hook(cs: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """One hook of ``spec.lifecycle`` (``preDelete``, ``inPlaceUpdate``, ``preNormal``) or ``None``."""
    lifecycle = lifecycle_of(cs)
    if lifecycle is None:
        return None
    hook = lifecycle.get(name)
    return hook if is_mapping(hook) else None


def template_of(cs: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(cs, "spec", "template")


def volume_claim_templates_of(cs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    templates = spec_of(cs).get("volumeClaimTemplates")
    return [t for t in templates if is_mapping(t)] if isinstance(templates, list) else []


def selector_match_labels(cs: Mapping[str, Any]) -> Mapping[str, str]:
    return section(cs, "spec", "selector", "matchLabels")


def priority_strategy_of(cs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = update_strategy_of(cs).get("priorityStrategy")
    return value if is_mapping(value) else None


def scatter_strategy_of(cs: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    value = update_strategy_of(cs).get("scatterStrategy")
    return [t for t in value if is_mapping(t)] if isinstance(value, list) else []


def excludes_preparing_delete(cs: Mapping[str, Any], gates: CloneSetFeatureGates) -> bool:
    """Whether PreparingDelete pods are left out of the scale arithmetic for this CloneSet."""
    return (
        gates.scaling_exclude_preparing_delete
        or labels_of(cs).get(kruise.SCALING_EXCLUDE_PREPARING_DELETE_LABEL) == "true"
    )
