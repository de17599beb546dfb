"""The bootstrap RBAC policy: its content, and the reconciliation of objects a user changed."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.auth.rbac.bootstrap import AUTOUPDATE, bootstrap_policy, reconcile_binding, reconcile_role

G = "rbac.authorization.k8s.io"


def _policy(resource: str, name: str) -> dict[str, Any]:
    for kind, item in bootstrap_policy():
        if kind == resource and item["metadata"]["name"] == name:
            return item
    raise AssertionError(f"{resource}/{name} is not in the bootstrap policy")


def test_every_object_is_labelled_and_annotated_for_autoupdate() -> None:
    policy = bootstrap_policy()
    assert len(policy) > 100
    for _, item in policy:
        meta = item["metadata"]
        assert meta["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert meta["annotations"][AUTOUPDATE] == "true"
        assert "creationTimestamp" not in meta


@pytest.mark.parametrize(("resource", "name"), [
    ("clusterroles", "cluster-admin"), ("clusterroles", "system:discovery"), ("clusterroles", "system:basic-user"),
    ("clusterroles", "system:public-info-viewer"), ("clusterroles", "system:node"),
    ("clusterroles", "system:kube-controller-manager"), ("clusterroles", "system:kube-scheduler"),
    ("clusterroles", "system:aggregate-to-edit"), ("clusterroles", "system:controller:replicaset-controller"),
    ("clusterrolebindings", "cluster-admin"), ("clusterrolebindings", "system:controller:deployment-controller"),
    ("roles", "extension-apiserver-authentication-reader"), ("rolebindings", "system:controller:bootstrap-signer"),
])
def test_upstreams_objects_are_there(resource: str, name: str) -> None:
    assert _policy(resource, name)["metadata"]["name"] == name


def test_anonymous_and_authenticated_users_are_bound_as_upstream() -> None:
    public = _policy("clusterrolebindings", "system:public-info-viewer")
    assert [s["name"] for s in public["subjects"]] == ["system:authenticated", "system:unauthenticated"]
    assert [s["name"] for s in _policy("clusterrolebindings", "system:discovery")["subjects"]] == \
        ["system:authenticated"]
    assert _policy("clusterroles", "system:public-info-viewer")["rules"] == [
        {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]
    assert _policy("clusterroles", "edit")["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]}
    assert "rules" not in _policy("clusterroles", "edit")


def _stored_role(**changes: Any) -> dict[str, Any]:
    role = _policy("clusterroles", "system:basic-user")
    role["metadata"]["resourceVersion"] = "7"
    role.update(changes)
    return role


def test_an_unchanged_role_needs_nothing() -> None:
    assert reconcile_role(_stored_role(), _policy("clusterroles", "system:basic-user")) is None


def test_missing_rules_are_added_broken_down_and_extra_rules_kept() -> None:
    expected = _policy("clusterroles", "system:basic-user")
    extra = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    existing = _stored_role(rules=[extra])
    updated = reconcile_role(existing, expected)
    assert updated is not None
    assert updated["rules"][0] == extra
    assert updated["rules"][1:] == [
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"]},
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"]},
        {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}]


def test_labels_and_annotations_are_added_and_users_values_win() -> None:
    existing = _stored_role()
    existing["metadata"]["labels"] = {"kubernetes.io/bootstrapping": "mine"}
    existing["metadata"]["annotations"] = {AUTOUPDATE: "true", "note": "x"}
    del existing["metadata"]["annotations"][AUTOUPDATE]
    updated = reconcile_role(existing, _policy("clusterroles", "system:basic-user"))
    assert updated is not None
    assert updated["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "mine"}
    assert updated["metadata"]["annotations"] == {AUTOUPDATE: "true", "note": "x"}


def test_autoupdate_false_is_left_alone() -> None:
    existing = _stored_role(rules=[])
    existing["metadata"]["annotations"] = {AUTOUPDATE: "false"}
    assert reconcile_role(existing, _policy("clusterroles", "system:basic-user")) is None
    binding = _policy("clusterrolebindings", "system:basic-user")
    binding["subjects"] = []
    binding["metadata"]["annotations"] = {AUTOUPDATE: "false"}
    assert reconcile_binding(binding, _policy("clusterrolebindings", "system:basic-user")) == (None, False)


def test_aggregation_selectors_are_added() -> None:
    existing = _policy("clusterroles", "edit")
    existing["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"mine": "true"}}]}
    updated = reconcile_role(existing, _policy("clusterroles", "edit"))
    assert updated is not None
    assert updated["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {"mine": "true"}}, {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]


def test_missing_subjects_are_added_and_a_changed_role_ref_recreates() -> None:
    expected = _policy("clusterrolebindings", "system:public-info-viewer")
    existing = _policy("clusterrolebindings", "system:public-info-viewer")
    mine = {"kind": "User", "apiGroup": G, "name": "me"}
    existing["subjects"] = [mine]
    updated, recreate = reconcile_binding(existing, expected)
    assert not recreate and updated is not None
    assert updated["subjects"] == [mine, *expected["subjects"]]
    existing["roleRef"] = {"apiGroup": G, "kind": "ClusterRole", "name": "view"}
    updated, recreate = reconcile_binding(existing, expected)
    assert recreate and updated is not None and updated["roleRef"] == expected["roleRef"]
