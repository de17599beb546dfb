"""The aggregation controller's core: selected roles' rules, by role name, deduplicated."""

from __future__ import annotations

from typing import Any

from kubeloop.controllers.clusterroleaggregation.aggregate import aggregated_rules, needs_update

EDIT = {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}


def _role(name: str, labels: dict[str, str] | None = None, rules: list[Any] | None = None,
          selectors: list[Any] | None = None) -> dict[str, Any]:
    role: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}}
    if rules is not None:
        role["rules"] = rules
    if selectors is not None:
        role["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return role


def _rule(resource: str) -> dict[str, Any]:
    return {"verbs": ["get"], "apiGroups": [""], "resources": [resource]}


def test_selected_rules_in_role_name_order_without_duplicates() -> None:
    edit = _role("edit", selectors=[{"matchLabels": EDIT}])
    roles = [edit, _role("z", EDIT, [_rule("pods"), _rule("secrets")]), _role("a", EDIT, [_rule("secrets")]),
             _role("other", {}, [_rule("nodes")])]
    assert aggregated_rules(edit, roles) == [_rule("secrets"), _rule("pods")]


def test_selectors_in_order_and_the_role_itself_excluded() -> None:
    selectors = [{"matchLabels": {"y": "1"}}, {"matchExpressions": [{"key": "x", "operator": "Exists"}]}]
    role = _role("agg", {"x": "1"}, [_rule("self")], selectors=selectors)
    roles = [role, _role("b", {"x": "1"}, [_rule("b")]), _role("c", {"y": "1"}, [_rule("c")])]
    assert aggregated_rules(role, roles) == [_rule("c"), _rule("b")]


def test_roles_without_aggregation_rule_are_not_aggregated() -> None:
    assert aggregated_rules(_role("plain", rules=[_rule("pods")]), []) is None


def test_an_empty_result_equals_absent_rules() -> None:
    role = _role("edit", selectors=[{"matchLabels": EDIT}])
    assert aggregated_rules(role, [role]) == []
    assert not needs_update(role, [])
    assert needs_update(role, [_rule("pods")])
