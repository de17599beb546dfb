"""Which admission webhooks a request calls: upstream's ``ShouldCallHook``, as pure functions.

Upstream: kubernetes/apiserver ``pkg/admission/plugin/webhook/generic/webhook.go``
(``ShouldCallHook``, ``Dispatch``), ``predicates/rules/rules.go`` (``Matcher``,
``IsExemptAdmissionConfigurationResource``), ``predicates/namespace/matcher.go`` and
``predicates/object/matcher.go``.

A webhook is called when its ``namespaceSelector`` matches the labels of the request's
namespace (a namespace's own labels for CREATE/UPDATE of a namespace; cluster-scoped requests
other than namespaces always match), its ``objectSelector`` matches the labels of the new or the
old object, and one of its ``rules`` matches the request's operation, group, version, resource,
subresource and scope. Failing that, with ``matchPolicy: Equivalent`` a rule matching another
served version of the same resource selects the webhook, which is then called with the
object at that version. Webhook and admission-policy configurations are exempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.labels import SelectorError, selector_from_label_selector

Obj = dict[str, Any]

_EXEMPT_KINDS = frozenset({
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
})


@dataclass(frozen=True)
class GVR:
    group: str
    version: str
    resource: str

    def as_review(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "resource": self.resource}


@dataclass(frozen=True)
class GVK:
    group: str
    version: str
    kind: str

    def as_review(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "kind": self.kind}


@dataclass(frozen=True)
class Attributes:
    """What admission knows of one request (upstream's ``admission.Attributes``)."""

    operation: str
    """CREATE, UPDATE, DELETE or CONNECT."""
    resource: GVR
    subresource: str
    kind: GVK
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None


@dataclass(frozen=True)
class Invocation:
    """A webhook selected for a request, with the resource and kind it is called at."""

    resource: GVR
    subresource: str
    kind: GVK


def is_exempt(kind: GVK) -> bool:
    """Requests on webhook and admission-policy configurations never reach webhooks."""
    return kind.group == "admissionregistration.k8s.io" and kind.kind in _EXEMPT_KINDS


def _exact_or_wildcard(items: Any, requested: str) -> bool:
    return isinstance(items, list) and any(item == "*" or item == requested for item in items)


def _is_namespace_resource(resource: GVR) -> bool:
    return resource == GVR("", "v1", "namespaces")


def _scope_matches(scope: Any, attributes: Attributes, resource: GVR) -> bool:
    if scope in (None, "*"):
        return True
    if scope == "Namespaced":
        return not _is_namespace_resource(resource) and attributes.namespace != ""
    if scope == "Cluster":
        return _is_namespace_resource(resource) or attributes.namespace == ""
    return False


def _resource_matches(patterns: Any, resource: str, subresource: str) -> bool:
    for pattern in patterns if isinstance(patterns, list) else []:
        if not isinstance(pattern, str):
            continue
        res, _, sub = pattern.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def rule_matches(rule: Mapping[str, Any], attributes: Attributes, resource: GVR | None = None) -> bool:
    """Upstream's ``rules.Matcher.Matches``; ``resource`` overrides the request's (equivalents)."""
    target = resource or attributes.resource
    operations = rule.get("operations")
    return (_scope_matches(rule.get("scope"), attributes, target)
            and isinstance(operations, list) and any(op in ("*", attributes.operation) for op in operations)
            and _exact_or_wildcard(rule.get("apiGroups"), target.group)
            and _exact_or_wildcard(rule.get("apiVersions"), target.version)
            and _resource_matches(rule.get("resources"), target.resource, attributes.subresource))


def _labels_of(obj: Obj | None) -> dict[str, str] | None:
    if not isinstance(obj, dict):
        return None
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


class SelectorFailure(Exception):
    """A selector that does not parse (upstream answers it with an internal error)."""


def _selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    try:
        return selector_from_label_selector(selector if selector is not None else {}).matches(labels)
    except SelectorError as error:
        raise SelectorFailure(str(error)) from None


def _selector_is_empty(selector: Any) -> bool:
    return not selector or not (selector.get("matchLabels") or selector.get("matchExpressions"))


def needs_namespace_labels(hook: Mapping[str, Any], attributes: Attributes) -> bool:
    """Whether matching ``hook`` reads the labels of a stored namespace."""
    if _selector_is_empty(hook.get("namespaceSelector")):
        return False
    if attributes.resource.resource == "namespaces":
        return attributes.subresource != "" or attributes.operation not in ("CREATE", "UPDATE")
    return attributes.namespace != ""


def namespace_matches(hook: Mapping[str, Any], attributes: Attributes, namespace_labels: Mapping[str, str] | None
                      ) -> bool:
    """``namespace.Matcher.MatchNamespaceSelector``; ``namespace_labels``: the stored namespace's."""
    if attributes.namespace == "" and attributes.resource.resource != "namespaces":
        return True
    selector = hook.get("namespaceSelector")
    if _selector_is_empty(selector):
        return True
    if (attributes.resource.resource == "namespaces" and attributes.subresource == ""
            and attributes.operation in ("CREATE", "UPDATE")):
        labels = _labels_of(attributes.obj) or {}
    else:
        labels = dict(namespace_labels or {})
    return _selector_matches(selector, labels)


def object_matches(hook: Mapping[str, Any], attributes: Attributes) -> bool:
    """``object.Matcher.MatchObjectSelector``: the new or the old object's labels match."""
    selector = hook.get("objectSelector")
    if _selector_is_empty(selector):
        return True
    for obj in (attributes.obj, attributes.old):
        labels = _labels_of(obj)
        if labels is not None and _selector_matches(selector, labels):
            return True
    return False


def invocation_for(hook: Mapping[str, Any], attributes: Attributes, namespace_labels: Mapping[str, str] | None,
                   equivalents: Sequence[tuple[GVR, GVK]] = ()) -> Invocation | None:
    """The call ``hook`` gets for ``attributes``, or None when it does not match.

    ``equivalents``: the other served versions of the request's resource with their kinds
    (``matchPolicy: Equivalent`` may select one of them).
    """
    if not namespace_matches(hook, attributes, namespace_labels) or not object_matches(hook, attributes):
        return None
    rules = [r for r in hook.get("rules") or [] if isinstance(r, dict)]
    for rule in rules:
        if rule_matches(rule, attributes):
            return Invocation(attributes.resource, attributes.subresource, attributes.kind)
    if hook.get("matchPolicy", "Equivalent") == "Equivalent":
        for rule in rules:
            for resource, kind in equivalents:
                if resource != attributes.resource and rule_matches(rule, attributes, resource):
                    return Invocation(resource, attributes.subresource, kind)
    return None
