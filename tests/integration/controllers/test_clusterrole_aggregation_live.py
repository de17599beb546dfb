"""The ClusterRole aggregation controller against the embedded server's bootstrap policy."""

from __future__ import annotations

from typing import Any

from controller_kit import ControllerRunner

from kubeloop.client import ApiClient, find_builtin
from kubeloop.testing.polling import eventually

CLUSTER_ROLES = find_builtin("clusterroles.rbac.authorization.k8s.io")
WIDGETS = {"verbs": ["get", "list"], "apiGroups": ["example.com"], "resources": ["widgets"]}


async def _rules(client: ApiClient, name: str) -> list[Any]:
    assert CLUSTER_ROLES is not None
    return list((await client.get(CLUSTER_ROLES, name)).get("rules") or [])


async def test_a_role_labelled_aggregate_to_edit_shows_up_in_edit_and_admin(client: ApiClient,
                                                                           runner: ControllerRunner) -> None:
    assert CLUSTER_ROLES is not None
    await runner.start("clusterroleaggregation")
    # The bootstrap aggregate-to-* roles fill the aggregated ones (view's rules land in edit too).
    view = await eventually(lambda: _rules(client, "view"), what="view aggregated")
    assert view
    await eventually(lambda: _has_all(client, "edit", view), what="view's rules in edit")
    await client.create(CLUSTER_ROLES, {"metadata": {"name": "widgets-edit", "labels": {
        "rbac.authorization.k8s.io/aggregate-to-edit": "true"}}, "rules": [WIDGETS]})
    await eventually(lambda: _has_all(client, "edit", [WIDGETS]), what="widgets in edit")
    # edit is itself aggregated into admin.
    await eventually(lambda: _has_all(client, "admin", [WIDGETS]), what="widgets in admin")
    assert WIDGETS not in await _rules(client, "view")
    edit = await client.get(CLUSTER_ROLES, "edit")
    managers = [entry["manager"] for entry in edit["metadata"].get("managedFields", [])]
    assert "clusterrole-aggregation-controller" in managers
    await client.delete(CLUSTER_ROLES, "widgets-edit")
    await eventually(lambda: _lacks(client, "edit", WIDGETS), what="widgets gone from edit")


async def _has_all(client: ApiClient, name: str, wanted: list[Any]) -> bool:
    rules = await _rules(client, name)
    return all(rule in rules for rule in wanted)


async def _lacks(client: ApiClient, name: str, rule: Any) -> bool:
    return rule not in await _rules(client, name)
