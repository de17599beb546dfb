"""The rules of an aggregated ClusterRole: the pure core of the aggregation controller.

As upstream's ``ClusterRoleAggregationController.syncClusterRole``
(``pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go``): for each of
the role's ``aggregationRule.clusterRoleSelectors`` in order, the ClusterRoles whose labels it
selects, sorted by name and excluding the role itself, contribute their rules in order; a rule
equal to one already gathered is skipped. The role is written only when the result differs
from its current rules (an absent rule list and an empty one are the same, as Go's semantic
equality says).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.api.labels import SelectorError, selector_from_label_selector

Obj = Mapping[str, Any]


def _name(role: Obj) -> str:
    return str((role.get("metadata") or {}).get("name") or "")


def selectors_of(role: Obj) -> list[Any] | None:
    """The role's cluster role selectors; None when it has no aggregation rule."""
    rule = role.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return None
    selectors = rule.get("clusterRoleSelectors")
    return list(selectors) if isinstance(selectors, list) else []


def aggregated_rules(role: Obj, roles: Iterable[Obj]) -> list[Any] | None:
    """The rules ``role`` should hold given every ClusterRole ``roles``; None when it is not an
    aggregated role or a selector is invalid (upstream returns the error and retries)."""
    selectors = selectors_of(role)
    if selectors is None:
        return None
    candidates = sorted(roles, key=_name)
    rules: list[Any] = []
    for selector_spec in selectors:
        try:
            selector = selector_from_label_selector(selector_spec)
        except SelectorError:
            return None
        for other in candidates:
            if _name(other) == _name(role):
                continue
            if not selector.matches((other.get("metadata") or {}).get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
    return rules


def needs_update(role: Obj, rules: list[Any]) -> bool:
    return list(role.get("rules") or []) != rules
