"""RBAC's rule evaluator (upstream's RuleAllows) and the coverage checks of escalation prevention."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.auth.attributes import RequestAttributes, request_attributes
from kubeloop.server.auth.rbac.rules import (
    Rule,
    breakdown,
    compact,
    compact_string,
    missing_rules,
    rule_allows,
)


def _rule(**fields: Any) -> Rule:
    return Rule.of(fields)


POD_READER = _rule(verbs=["get", "list", "watch"], apiGroups=[""], resources=["pods"])
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


def _resource(verb: str, resource: str, group: str = "", subresource: str = "", name: str = "",
              namespace: str = "ns") -> RequestAttributes:
    return RequestAttributes(True, verb, "", group, "v1", namespace, resource, subresource, name)


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_is_allowed_only_by_a_rule_naming_it_or_star(verb: str) -> None:
    request = _resource(verb, "pods")
    assert rule_allows(request, _rule(verbs=[verb], apiGroups=[""], resources=["pods"]))
    assert rule_allows(request, _rule(verbs=["*"], apiGroups=[""], resources=["pods"]))
    others = [v for v in VERBS if v != verb]
    assert not rule_allows(request, _rule(verbs=others, apiGroups=[""], resources=["pods"]))


@pytest.mark.parametrize(("rule", "request_", "allowed"), [
    # API groups: exact or "*".
    (_rule(verbs=["get"], apiGroups=["apps"], resources=["deployments"]),
     _resource("get", "deployments", "apps"), True),
    (_rule(verbs=["get"], apiGroups=[""], resources=["deployments"]), _resource("get", "deployments", "apps"), False),
    (_rule(verbs=["get"], apiGroups=["*"], resources=["deployments"]), _resource("get", "deployments", "apps"), True),
    # Resources: "*" covers subresources too; a plain resource does not cover its subresources.
    (_rule(verbs=["get"], apiGroups=[""], resources=["*"]), _resource("get", "pods", subresource="log"), True),
    (POD_READER, _resource("get", "pods", subresource="log"), False),
    (_rule(verbs=["get"], apiGroups=[""], resources=["pods/log"]), _resource("get", "pods", subresource="log"), True),
    (_rule(verbs=["get"], apiGroups=[""], resources=["pods/log"]), _resource("get", "pods"), False),
    (_rule(verbs=["update"], apiGroups=["*"], resources=["*/status"]),
     _resource("update", "pods", subresource="status"), True),
    (_rule(verbs=["update"], apiGroups=["*"], resources=["*/status"]),
     _resource("update", "pods", subresource="statuses"), False),
    (_rule(verbs=["update"], apiGroups=["*"], resources=["*/status"]), _resource("update", "pods"), False),
    (_rule(verbs=["update"], apiGroups=["apps"], resources=["deployments/scale"]),
     _resource("update", "deployments", "apps", "scale", "web"), True),
    # resourceNames: the request must name one of them (a list has no name).
    (_rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
     _resource("get", "pods", name="a"), True),
    (_rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
     _resource("get", "pods", name="b"), False),
    (_rule(verbs=["list"], apiGroups=[""], resources=["pods"], resourceNames=["a"]), _resource("list", "pods"), False),
    # Resource rules never allow non-resource requests and the reverse.
    (_rule(verbs=["get"], nonResourceURLs=["*"]), _resource("get", "pods"), False),
    (_rule(verbs=["get"], apiGroups=["*"], resources=["*"]), RequestAttributes(False, "get", "/api"), False),
    # Non-resource URLs: exact, "*", or a prefix ending in "*".
    (_rule(verbs=["get"], nonResourceURLs=["/healthz"]), RequestAttributes(False, "get", "/healthz"), True),
    (_rule(verbs=["get"], nonResourceURLs=["/healthz"]), RequestAttributes(False, "get", "/healthz/ping"), False),
    (_rule(verbs=["get"], nonResourceURLs=["/healthz*"]), RequestAttributes(False, "get", "/healthz/ping"), True),
    (_rule(verbs=["get"], nonResourceURLs=["/apis/*"]), RequestAttributes(False, "get", "/apis/apps"), True),
    (_rule(verbs=["get"], nonResourceURLs=["/apis/*"]), RequestAttributes(False, "get", "/apis"), False),
    (_rule(verbs=["get"], nonResourceURLs=["*"]), RequestAttributes(False, "get", "/anything"), True),
    (_rule(verbs=["get"], nonResourceURLs=["/healthz"]), RequestAttributes(False, "post", "/healthz"), False),
])
def test_rule_allows(rule: Rule, request_: RequestAttributes, allowed: bool) -> None:
    assert rule_allows(request_, rule) is allowed


@pytest.mark.parametrize(("method", "path", "query", "allowed"), [
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, True),
    ("GET", "/api/v1/namespaces/ns/pods/p", {}, True),
    ("GET", "/api/v1/namespaces/ns/pods", {}, True),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", {}, False),
    ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, False),
    ("GET", "/api/v1/namespaces/ns/configmaps", {}, False),
])
def test_attributes_from_http_requests_meet_rules(method: str, path: str, query: dict[str, str],
                                                  allowed: bool) -> None:
    assert rule_allows(request_attributes(method, path, query), POD_READER) is allowed


def test_breakdown_splits_into_single_verb_resource_name_rules() -> None:
    rule = _rule(verbs=["get", "list"], apiGroups=["", "apps"], resources=["pods"], resourceNames=["a"])
    assert breakdown(rule) == [
        Rule(("get",), ("",), ("pods",), ("a",)), Rule(("list",), ("",), ("pods",), ("a",)),
        Rule(("get",), ("apps",), ("pods",), ("a",)), Rule(("list",), ("apps",), ("pods",), ("a",))]
    assert breakdown(_rule(verbs=["get"], nonResourceURLs=["/a", "/b"])) == [
        Rule(("get",), non_resource_urls=("/a",)), Rule(("get",), non_resource_urls=("/b",))]


@pytest.mark.parametrize(("owner", "requested", "missing"), [
    ([POD_READER], [_rule(verbs=["get"], apiGroups=[""], resources=["pods"])], []),
    ([POD_READER], [_rule(verbs=["get", "delete"], apiGroups=[""], resources=["pods"])],
     [Rule(("delete",), ("",), ("pods",))]),
    ([_rule(verbs=["*"], apiGroups=["*"], resources=["*"])],
     [_rule(verbs=["get"], apiGroups=["apps"], resources=["deployments/scale"])], []),
    ([_rule(verbs=["get"], apiGroups=[""], resources=["*/status"])],
     [_rule(verbs=["get"], apiGroups=[""], resources=["pods/status"])], []),
    ([_rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"])],
     [_rule(verbs=["get"], apiGroups=[""], resources=["pods"])], [Rule(("get",), ("",), ("pods",))]),
    ([_rule(verbs=["get"], apiGroups=[""], resources=["pods"])],
     [_rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"])], []),
    ([_rule(verbs=["get"], nonResourceURLs=["/api/*"])], [_rule(verbs=["get"], nonResourceURLs=["/api/v1"])], []),
    ([_rule(verbs=["get"], nonResourceURLs=["/api"])], [_rule(verbs=["get"], nonResourceURLs=["/apis"])],
     [Rule(("get",), non_resource_urls=("/apis",))]),
])
def test_missing_rules(owner: list[Rule], requested: list[Rule], missing: list[Rule]) -> None:
    assert missing_rules(owner, requested) == missing


def test_compact_merges_verbs_of_simple_rules_and_prints_as_go() -> None:
    parts = breakdown(_rule(verbs=["get", "list"], apiGroups=[""], resources=["pods"]))
    parts += [Rule(("get",), non_resource_urls=("/x",))]
    assert sorted(compact_string(r) for r in compact(parts)) == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}', '{NonResourceURLs:["/x"], Verbs:["get"]}']
