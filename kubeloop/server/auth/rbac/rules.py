"""One PolicyRule against one request, and whether some rules cover others.

Matching as upstream's ``RuleAllows`` (``plugin/pkg/auth/authorizer/rbac/rbac.go``) with the
helpers of ``pkg/apis/rbac/v1/evaluation_helpers.go``: ``*`` matches any verb, group,
resource or URL; a resource request's resource is ``resource/subresource`` when it names a
subresource, which ``*/subresource`` also matches; ``resourceNames`` (when set) must contain the
request's name; a non-resource URL rule ending in ``*`` matches every path with that prefix.

Coverage as ``pkg/registry/rbac/validation/policy_comparator.go`` (``Covers``,
``BreakdownRule``, ``ruleCovers``), with ``CompactRules`` and ``CompactString`` for the texts
of escalation errors (``pkg/registry/rbac/validation/rule.go``, ``internal_version``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.status import go_quote
from kubeloop.server.auth.attributes import RequestAttributes

ALL = "*"


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class Rule:
    """A PolicyRule, its lists as tuples (empty when absent)."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def of(cls, rule: Mapping[str, Any]) -> Rule:
        return cls(_strings(rule.get("verbs")), _strings(rule.get("apiGroups")), _strings(rule.get("resources")),
                   _strings(rule.get("resourceNames")), _strings(rule.get("nonResourceURLs")))

    def as_json(self) -> dict[str, Any]:
        """The rule as the API writes it (empty lists left out, as Go's ``omitempty``)."""
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        for key, value in (("apiGroups", self.api_groups), ("resources", self.resources),
                           ("resourceNames", self.resource_names), ("nonResourceURLs", self.non_resource_urls)):
            if value:
                out[key] = list(value)
        return out


FULL_RULES = (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))
"""Everything: what ``system:masters`` and ``AlwaysAllow`` hold (and ``cluster-admin`` grants)."""


def rules_of(role: Mapping[str, Any] | None) -> tuple[Rule, ...]:
    rules = None if role is None else role.get("rules")
    return tuple(Rule.of(rule) for rule in rules if isinstance(rule, Mapping)) if isinstance(rules, list) else ()


def verb_matches(rule: Rule, verb: str) -> bool:
    return ALL in rule.verbs or verb in rule.verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    return ALL in rule.api_groups or group in rule.api_groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """``combined`` is ``resource`` or ``resource/subresource``."""
    for resource in rule.resources:
        if resource in (ALL, combined):
            return True
        # "*/status" names the status subresource of every resource.
        if subresource and len(resource) == len(subresource) + 2 and resource.startswith("*/") \
                and resource.endswith(subresource):
            return True
    return False


def resource_name_matches(rule: Rule, name: str) -> bool:
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url in (ALL, path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(attributes: RequestAttributes, rule: Rule) -> bool:
    """Whether ``rule`` allows the request (upstream's ``RuleAllows``)."""
    if not verb_matches(rule, attributes.verb):
        return False
    if not attributes.resource_request:
        return non_resource_url_matches(rule, attributes.path)
    combined = attributes.resource
    if attributes.subresource:
        combined = f"{combined}/{attributes.subresource}"
    return (api_group_matches(rule, attributes.group) and resource_matches(rule, combined, attributes.subresource)
            and resource_name_matches(rule, attributes.name))


# ------------------------------------------------------------------------------ coverage


def breakdown(rule: Rule) -> list[Rule]:
    """One rule per (group, resource, verb[, name]) and per (URL, verb): ``BreakdownRule``."""
    out: list[Rule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    out.extend(Rule((verb,), (group,), (resource,), (name,)) for name in rule.resource_names)
                else:
                    out.append(Rule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        out.extend(Rule((verb,), non_resource_urls=(url,)) for verb in rule.verbs)
    return out


def _resources_cover(owner: Sequence[str], requested: Sequence[str]) -> bool:
    if ALL in owner or all(r in owner for r in requested):
        return True
    for resource in requested:
        if resource in owner:
            continue
        if "/" not in resource:
            return False
        if "*/" + resource.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, requested: str) -> bool:
    return owner == requested or (owner.endswith("*") and requested.startswith(owner.rstrip("*")))


def _urls_cover(owner: Sequence[str], requested: Sequence[str]) -> bool:
    return all(any(_url_covers(o, r) for o in owner) for r in requested)


def rule_covers(owner: Rule, requested: Rule) -> bool:
    """``ruleCovers``: ``owner`` grants everything ``requested`` (a broken-down rule) does."""
    verbs = ALL in owner.verbs or all(v in owner.verbs for v in requested.verbs)
    groups = ALL in owner.api_groups or all(g in owner.api_groups for g in requested.api_groups)
    names = not owner.resource_names or (
        bool(requested.resource_names) and all(n in owner.resource_names for n in requested.resource_names))
    return (verbs and groups and _resources_cover(owner.resources, requested.resources) and names
            and _urls_cover(owner.non_resource_urls, requested.non_resource_urls))


def missing_rules(owner: Iterable[Rule], requested: Iterable[Rule]) -> list[Rule]:
    """The broken-down parts of ``requested`` no rule of ``owner`` covers (``Covers``)."""
    owned = list(owner)
    return [part for rule in requested for part in breakdown(rule)
            if not any(rule_covers(o, part) for o in owned)]


def compact(rules: Iterable[Rule]) -> list[Rule]:
    """``CompactRules``: simple rules (one group, one resource, at most one name) of the same
    target merged into one with all their verbs."""
    out: list[Rule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], list[Rule]] = {}
    for rule in rules:
        if (not rule.non_resource_urls and len(rule.api_groups) == 1 and len(rule.resources) == 1
                and len(rule.resource_names) <= 1):
            simple.setdefault((rule.api_groups[0], rule.resources[0], rule.resource_names), []).append(rule)
        else:
            out.append(rule)
    for (group, resource, names), merged in simple.items():
        out.append(Rule(tuple(v for r in merged for v in r.verbs), (group,), (resource,), names))
    return out


def _go_list(values: Sequence[str]) -> str:
    return "[" + " ".join(go_quote(value) for value in values) + "]"


def compact_string(rule: Rule) -> str:
    """``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    parts = [f"{label}:{_go_list(values)}" for label, values in (
        ("APIGroups", rule.api_groups), ("Resources", rule.resources), ("NonResourceURLs", rule.non_resource_urls),
        ("ResourceNames", rule.resource_names), ("Verbs", rule.verbs)) if values]
    return "{" + ", ".join(parts) + "}"
