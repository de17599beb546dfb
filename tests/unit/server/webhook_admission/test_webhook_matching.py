"""Which webhooks a request calls (kubeloop.server.webhook_admission.matching), as tables."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.webhook_admission.matching import (
    GVK,
    GVR,
    Attributes,
    Invocation,
    SelectorFailure,
    invocation_for,
    is_exempt,
    needs_namespace_labels,
    rule_matches,
)

DEPLOYMENTS = GVR("apps", "v1", "deployments")
DEPLOYMENT = GVK("apps", "v1", "Deployment")
PODS = GVR("", "v1", "pods")
POD = GVK("", "v1", "Pod")
NAMESPACES = GVR("", "v1", "namespaces")
NAMESPACE = GVK("", "v1", "Namespace")


def attrs(operation: str = "CREATE", resource: GVR = DEPLOYMENTS, kind: GVK = DEPLOYMENT, subresource: str = "",
          namespace: str = "default", obj: dict[str, Any] | None = None, old: dict[str, Any] | None = None
          ) -> Attributes:
    return Attributes(operation, resource, subresource, kind, namespace, "x", obj, old)


def rule(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                            "resources": ["deployments"], "scope": "*"}
    base.update(overrides)
    return base


RULE_CASES = [
    ("exact", rule(), attrs(), True),
    ("other operation", rule(), attrs("UPDATE"), False),
    ("operation wildcard", rule(operations=["*"]), attrs("DELETE"), True),
    ("other group", rule(apiGroups=[""]), attrs(), False),
    ("group wildcard", rule(apiGroups=["*"]), attrs(), True),
    ("other version", rule(apiVersions=["v1beta1"]), attrs(), False),
    ("resource wildcard", rule(resources=["*"]), attrs(), True),
    ("resource wildcard skips subresources", rule(resources=["*"]), attrs(subresource="scale"), False),
    ("main resource skips subresources", rule(), attrs(subresource="scale"), False),
    ("resource/subresource", rule(resources=["deployments/scale"]), attrs(subresource="scale"), True),
    ("resource/subresource skips main", rule(resources=["deployments/scale"]), attrs(), False),
    ("resource/*", rule(resources=["deployments/*"]), attrs(subresource="status"), True),
    ("resource/* matches the main resource", rule(resources=["deployments/*"]), attrs(), True),
    ("*/*", rule(resources=["*/*"]), attrs(subresource="status"), True),
    ("*/scale", rule(resources=["*/scale"]), attrs(subresource="scale"), True),
    ("Namespaced scope, namespaced object", rule(scope="Namespaced"), attrs(), True),
    ("Namespaced scope, cluster object", rule(scope="Namespaced"), attrs(namespace=""), False),
    ("Cluster scope, cluster object", rule(scope="Cluster"), attrs(namespace=""), True),
    ("Cluster scope, namespaced object", rule(scope="Cluster"), attrs(), False),
    ("Cluster scope, a namespace (which has its own name as namespace)",
     rule(apiGroups=[""], resources=["namespaces"], scope="Cluster"),
     attrs(resource=NAMESPACES, kind=NAMESPACE, namespace="team"), True),
    ("Namespaced scope never matches namespaces",
     rule(apiGroups=[""], resources=["namespaces"], scope="Namespaced"),
     attrs(resource=NAMESPACES, kind=NAMESPACE, namespace="team"), False),
]


@pytest.mark.parametrize(("case", "the_rule", "attributes", "expected"), RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rules(case: str, the_rule: dict[str, Any], attributes: Attributes, expected: bool) -> None:
    assert rule_matches(the_rule, attributes) is expected


def hook(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "h.example.com", "rules": [rule()], "matchPolicy": "Equivalent",
                            "namespaceSelector": {}, "objectSelector": {}}
    base.update(overrides)
    return base


def labelled(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "x", "labels": labels}}


TEAM = {"matchLabels": {"team": "a"}}
SELECTOR_CASES: list[tuple[str, dict[str, Any], Attributes, dict[str, str] | None, bool]] = [
    ("no selectors", hook(), attrs(), None, True),
    ("namespace labels match", hook(namespaceSelector=TEAM), attrs(), {"team": "a"}, True),
    ("namespace labels differ", hook(namespaceSelector=TEAM), attrs(), {"team": "b"}, False),
    ("expression NotIn", hook(namespaceSelector={"matchExpressions": [
        {"key": "team", "operator": "NotIn", "values": ["a"]}]}), attrs(), {}, True),
    ("cluster-scoped objects ignore the namespace selector",
     hook(namespaceSelector=TEAM, rules=[rule(scope="*")]), attrs(namespace=""), None, True),
    ("a namespace's create matches its own labels",
     hook(namespaceSelector=TEAM, rules=[rule(apiGroups=[""], resources=["namespaces"])]),
     attrs(resource=NAMESPACES, kind=NAMESPACE, namespace="n", obj=labelled({"team": "a"})), {"team": "b"}, True),
    ("a namespace's delete matches the stored labels",
     hook(namespaceSelector=TEAM, rules=[rule(operations=["DELETE"], apiGroups=[""], resources=["namespaces"])]),
     attrs("DELETE", resource=NAMESPACES, kind=NAMESPACE, namespace="n", old=labelled({"team": "a"})),
     {"team": "b"}, False),
    ("object labels match", hook(objectSelector=TEAM), attrs(obj=labelled({"team": "a"})), None, True),
    ("object labels differ", hook(objectSelector=TEAM), attrs(obj=labelled({})), None, False),
    ("old object labels match", hook(objectSelector=TEAM, rules=[rule(operations=["UPDATE"])]),
     attrs("UPDATE", obj=labelled({}), old=labelled({"team": "a"})), None, True),
    ("delete: only the old object", hook(objectSelector=TEAM, rules=[rule(operations=["DELETE"])]),
     attrs("DELETE", old=labelled({"team": "a"})), None, True),
]


@pytest.mark.parametrize(("case", "the_hook", "attributes", "namespace_labels", "expected"), SELECTOR_CASES,
                         ids=[c[0] for c in SELECTOR_CASES])
def test_selectors(case: str, the_hook: dict[str, Any], attributes: Attributes,
                   namespace_labels: dict[str, str] | None, expected: bool) -> None:
    assert (invocation_for(the_hook, attributes, namespace_labels) is not None) is expected


def test_namespace_labels_are_read_only_when_needed() -> None:
    assert not needs_namespace_labels(hook(), attrs())
    assert needs_namespace_labels(hook(namespaceSelector=TEAM), attrs())
    assert not needs_namespace_labels(hook(namespaceSelector=TEAM), attrs(namespace=""))
    namespace_create = attrs(resource=NAMESPACES, kind=NAMESPACE, namespace="n")
    assert not needs_namespace_labels(hook(namespaceSelector=TEAM), namespace_create)


def test_a_bad_selector_is_reported() -> None:
    bad = hook(objectSelector={"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
    with pytest.raises(SelectorFailure):
        invocation_for(bad, attrs(obj=labelled({})), None)


HPA_V2 = GVR("autoscaling", "v2", "horizontalpodautoscalers")
HPA_V1 = GVR("autoscaling", "v1", "horizontalpodautoscalers")
HPA_V2_KIND = GVK("autoscaling", "v2", "HorizontalPodAutoscaler")
HPA_V1_KIND = GVK("autoscaling", "v1", "HorizontalPodAutoscaler")
V1_ONLY = rule(apiGroups=["autoscaling"], apiVersions=["v1"], resources=["horizontalpodautoscalers"])


def test_equivalent_match_policy_calls_at_the_matching_version() -> None:
    request = attrs(resource=HPA_V2, kind=HPA_V2_KIND)
    equivalents = [(HPA_V1, HPA_V1_KIND), (HPA_V2, HPA_V2_KIND)]
    assert invocation_for(hook(rules=[V1_ONLY]), request, None, equivalents) == Invocation(HPA_V1, "", HPA_V1_KIND)
    assert invocation_for(hook(rules=[V1_ONLY], matchPolicy="Exact"), request, None, equivalents) is None


def test_a_direct_match_wins_over_equivalents() -> None:
    request = attrs(resource=HPA_V1, kind=HPA_V1_KIND)
    found = invocation_for(hook(rules=[V1_ONLY]), request, None, [(HPA_V2, HPA_V2_KIND)])
    assert found == Invocation(HPA_V1, "", HPA_V1_KIND)


@pytest.mark.parametrize(("kind", "exempt"), [
    (GVK("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"), True),
    (GVK("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"), True),
    (GVK("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding"), True),
    (POD, False),
])
def test_exemptions(kind: GVK, exempt: bool) -> None:
    assert is_exempt(kind) is exempt
