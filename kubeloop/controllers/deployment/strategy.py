"""Rollout strategy arithmetic: maxSurge / maxUnavailable resolution and the new ReplicaSet size.

``maxSurge`` rounds up and ``maxUnavailable`` rounds down when given as percentages of
``spec.replicas``. If both resolve to 0 (only possible through rounding, validation rejects
explicit zeros for both), ``maxUnavailable`` becomes 1 so that a rollout can always make
progress even when surge pods cannot be scheduled (quota). ``Recreate`` deployments have
neither surge nor unavailability budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeloop.api.intstr import IntOrPercentError, scaled_value
from kubeloop.controllers.deployment.objects import (
    RECREATE,
    ROLLING_UPDATE,
    is_rolling_update,
    rolling_update_parameters,
    spec_replicas,
    strategy_type,
)


class UnsupportedStrategyError(ValueError):
    """The deployment names a strategy type the controller does not know."""


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """Resolve ``(surge, unavailable)`` against ``desired`` replicas.

    Unset values count as 0. Raises :class:`~kubeloop.api.intstr.IntOrPercentError` for a value
    that is neither an int nor an integer percentage.
    """
    surge = scaled_value(0 if max_surge is None else max_surge, desired, round_up=True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _fenceposts_or_zero(deployment: Mapping[str, Any]) -> tuple[int, int]:
    # Validation rejects malformed values; an object that slipped through gets no budget at all.
    max_surge, max_unavailable = rolling_update_parameters(deployment)
    try:
        return resolve_fenceposts(max_surge, max_unavailable, spec_replicas(deployment))
    except IntOrPercentError:
        return 0, 0


def max_surge(deployment: Mapping[str, Any]) -> int:
    """Surge pods allowed above ``spec.replicas``; 0 unless the strategy is RollingUpdate."""
    if not is_rolling_update(deployment):
        return 0
    return _fenceposts_or_zero(deployment)[0]


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    """Pods allowed to be unavailable; 0 unless RollingUpdate with replicas, never above replicas."""
    replicas = spec_replicas(deployment)
    if not is_rolling_update(deployment) or replicas == 0:
        return 0
    return min(_fenceposts_or_zero(deployment)[1], replicas)


def min_available(deployment: Mapping[str, Any]) -> int:
    """Pods that must stay available during a rolling update (0 for other strategies)."""
    if not is_rolling_update(deployment):
        return 0
    return spec_replicas(deployment) - max_unavailable(deployment)


def max_replicas(deployment: Mapping[str, Any]) -> int:
    """``spec.replicas + maxSurge``: the value of the ``max-replicas`` annotation."""
    return spec_replicas(deployment) + max_surge(deployment)


def _total_spec_replicas(replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    return sum(spec_replicas(rs) for rs in replica_sets if rs is not None)


def new_replica_set_replicas(
    deployment: Mapping[str, Any],
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    new_replica_set: Mapping[str, Any],
) -> int:
    """The size the new ReplicaSet may grow to now.

    RollingUpdate: grow by the room left under ``replicas + maxSurge`` (summed over
    ``all_replica_sets`` by ``spec.replicas``), never beyond ``replicas``; no room keeps the current
    size. Recreate: ``replicas``. Raises :class:`IntOrPercentError` for a malformed maxSurge and
    :class:`UnsupportedStrategyError` for an unknown strategy type.
    """
    kind = strategy_type(deployment)
    replicas = spec_replicas(deployment)
    current_new = spec_replicas(new_replica_set)
    if kind == ROLLING_UPDATE:
        surge_value = rolling_update_parameters(deployment)[0]
        surge = scaled_value(0 if surge_value is None else surge_value, replicas, round_up=True)
        ceiling = replicas + surge
        current_total = _total_spec_replicas(all_replica_sets)
        if current_total >= ceiling:
            return current_new
        return current_new + min(ceiling - current_total, replicas - current_new)
    if kind == RECREATE:
        return replicas
    raise UnsupportedStrategyError(f"unsupported deployment strategy type {kind!r}")
