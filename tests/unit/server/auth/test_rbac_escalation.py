"""The texts of escalation refusals and which updates skip the check."""

from __future__ import annotations

from kubeloop.server.auth.rbac.escalation import escalation_error, only_gc_fields_changed
from kubeloop.server.auth.rbac.rules import Rule, breakdown
from kubeloop.server.auth.user import UserInfo

BOB = UserInfo("bob", ("a", "b"))


def test_nothing_missing_is_no_error() -> None:
    assert escalation_error(BOB, [], ["ignored"]) == ""


def test_missing_rules_are_compacted_sorted_and_followed_by_resolution_errors() -> None:
    missing = [*breakdown(Rule(("list", "get"), ("apps",), ("deployments",))),
               Rule(("get",), non_resource_urls=("/metrics",))]
    assert escalation_error(BOB, missing, ['clusterroles.rbac.authorization.k8s.io "x" not found']) == (
        'user "bob" (groups=["a" "b"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:["apps"], Resources:["deployments"], Verbs:["list" "get"]}\n'
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}'
        '; resolution errors: [clusterroles.rbac.authorization.k8s.io "x" not found]')


def test_only_owner_references_finalizers_and_managed_fields_skip_the_check() -> None:
    old = {"metadata": {"name": "r", "resourceVersion": "3"}, "rules": []}
    gc = {"metadata": {"name": "r", "resourceVersion": "3", "finalizers": ["x"], "ownerReferences": [{}],
                       "managedFields": [{}]}, "rules": []}
    assert only_gc_fields_changed(gc, old)
    assert not only_gc_fields_changed({**gc, "rules": [{"verbs": ["get"]}]}, old)
    assert not only_gc_fields_changed({"metadata": {"name": "r", "labels": {"a": "b"}}, "rules": []}, old)
