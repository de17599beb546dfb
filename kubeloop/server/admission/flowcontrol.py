"""flowcontrol.apiserver.k8s.io/v1: FlowSchemas and PriorityLevelConfigurations.

Defaults as upstream's ``pkg/apis/flowcontrol/v1/defaults.go``: a FlowSchema's matching
precedence is 1000; a limited priority level has 30 nominal shares and lends nothing; queuing
uses 64 queues, hands of 8 and 50 requests per queue; an exempt level has 0 shares and lends 0.
Validation as ``pkg/apis/flowcontrol/validation`` (the rules users hit: precedence range,
a referenced priority level, subjects and rules, types and their sections).
:func:`mandatory_objects` are the configuration objects kube-apiserver always keeps
(``k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap``: ``exempt`` and ``catch-all``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import forbidden, invalid, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    child,
    int_at,
    list_at,
    mapping_at,
    objects_at,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    name_is_path_segment,
    validate_object_meta,
    validate_object_meta_update,
)

GROUP = "flowcontrol.apiserver.k8s.io"
MAX_PRECEDENCE = 10000
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
DISTINGUISHER_TYPES = ("ByNamespace", "ByUser")
LEVEL_TYPES = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
AUTOUPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"

_ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}
_ALL_URLS = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "annotations": {AUTOUPDATE_ANNOTATION: "true"}}


def _group(name: str) -> dict[str, Any]:
    return {"kind": "Group", "group": {"name": name}}


def mandatory_objects() -> list[dict[str, Any]]:
    """The ``exempt`` and ``catch-all`` priority levels and flow schemas (levels first)."""
    api_version = f"{GROUP}/v1"
    return [
        {"apiVersion": api_version, "kind": "PriorityLevelConfiguration", "metadata": _meta("exempt"),
         "spec": {"type": "Exempt", "exempt": {}}},
        {"apiVersion": api_version, "kind": "PriorityLevelConfiguration", "metadata": _meta("catch-all"),
         "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                 "limitResponse": {"type": "Reject"}}}},
        {"apiVersion": api_version, "kind": "FlowSchema", "metadata": _meta("exempt"),
         "spec": {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1,
                  "rules": [{"subjects": [_group("system:masters")], "resourceRules": [dict(_ALL_RESOURCES)],
                             "nonResourceRules": [dict(_ALL_URLS)]}]}},
        {"apiVersion": api_version, "kind": "FlowSchema", "metadata": _meta("catch-all"),
         "spec": {"priorityLevelConfiguration": {"name": "catch-all"}, "matchingPrecedence": 10000,
                  "distinguisherMethod": {"type": "ByUser"},
                  "rules": [{"subjects": [_group("system:unauthenticated"), _group("system:authenticated")],
                             "resourceRules": [dict(_ALL_RESOURCES)], "nonResourceRules": [dict(_ALL_URLS)]}]}},
    ]


# ---------------------------------------------------------------------------------- defaults


def default_flow_schema(schema: dict[str, Any]) -> None:
    spec = schema.get("spec")
    if spec is None:
        spec = schema["spec"] = {}
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def default_priority_level(level: dict[str, Any]) -> None:
    spec = level.get("spec")
    if not isinstance(spec, dict):
        return
    exempt = spec.get("exempt")
    if isinstance(exempt, dict):
        for name in ("nominalConcurrencyShares", "lendablePercent"):
            if exempt.get(name) is None:
                exempt[name] = 0
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = 30
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        response = limited.get("limitResponse")
        queuing = response.get("queuing") if isinstance(response, dict) else None
        if isinstance(queuing, dict):
            for name, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
                if not queuing.get(name):
                    queuing[name] = value


# ------------------------------------------------------------------------------ flow schemas


def _subject_errors(subject: Mapping[str, Any], path: str, errs: Errors) -> None:
    kind = str_at(subject, "kind", path, errs)
    sections = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}
    if kind not in sections:
        errs.append(not_supported(child(path, "kind"), kind, SUBJECT_KINDS))
        return
    section = sections[kind]
    if subject.get(section) is None:
        errs.append(required(child(path, section), f"{section} is required when subject kind is '{kind}'"))
        return
    body = mapping_at(subject, section, path, errs)
    if not str_at(body, "name", child(path, section), errs):
        errs.append(required(child(child(path, section), "name"), f"{section} name is required"))
    if kind == "ServiceAccount" and not str_at(body, "namespace", child(path, section), errs):
        errs.append(required(child(child(path, section), "namespace"), "must specify namespace for service account"))
    for other in sections.values():
        if other != section and subject.get(other) is not None:
            errs.append(forbidden(child(path, other), f"{other} is forbidden when subject kind is '{kind}'"))


def _rule_errors(rule: Mapping[str, Any], path: str, errs: Errors) -> None:
    subjects = objects_at(rule, "subjects", path, errs)
    if not subjects:
        errs.append(required(child(path, "subjects"), "subjects must contain at least one value"))
    for subject_path, subject in subjects:
        _subject_errors(subject, subject_path, errs)
    resource_rules = objects_at(rule, "resourceRules", path, errs)
    url_rules = objects_at(rule, "nonResourceRules", path, errs)
    if not resource_rules and not url_rules:
        errs.append(required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
    for item_path, item in resource_rules:
        if not list_at(item, "verbs", item_path, errs):
            errs.append(required(child(item_path, "verbs"), "verbs must contain at least one value"))
        if not list_at(item, "apiGroups", item_path, errs):
            errs.append(required(child(item_path, "apiGroups"), "resource rules must supply at least one api group"))
        if not list_at(item, "resources", item_path, errs):
            errs.append(required(child(item_path, "resources"), "resource rules must supply at least one resource"))
        if not str_list_at(item, "namespaces", item_path, errs) and item.get("clusterScope") is not True:
            errs.append(required(child(item_path, "namespaces"),
                                 "resource rules that are not cluster scoped must supply at least one namespace"))
    for item_path, item in url_rules:
        if not list_at(item, "verbs", item_path, errs):
            errs.append(required(child(item_path, "verbs"), "verbs must contain at least one value"))
        if not list_at(item, "nonResourceURLs", item_path, errs):
            errs.append(required(child(item_path, "nonResourceURLs"), "nonResourceURLs must contain at least one "
                                                                         "value"))


def validate_flow_schema_create(schema: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(schema, False, name_is_path_segment)
    spec = mapping_at(schema, "spec", "", errs)
    precedence = int_at(spec, "matchingPrecedence", "spec", errs) or 0
    if precedence <= 0:
        errs.append(invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
    elif precedence > MAX_PRECEDENCE:
        errs.append(invalid("spec.matchingPrecedence", precedence, f"must not be greater than {MAX_PRECEDENCE}"))
    level = mapping_at(spec, "priorityLevelConfiguration", "spec", errs)
    if not str_at(level, "name", "spec.priorityLevelConfiguration", errs):
        errs.append(required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
    if spec.get("distinguisherMethod") is not None:
        method = mapping_at(spec, "distinguisherMethod", "spec", errs).get("type")
        if method not in DISTINGUISHER_TYPES:
            errs.append(not_supported("spec.distinguisherMethod.type", method or "", DISTINGUISHER_TYPES))
    for rule_path, rule in objects_at(spec, "rules", "spec", errs):
        _rule_errors(rule, rule_path, errs)
    return errs


def validate_flow_schema_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_flow_schema_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs


# ------------------------------------------------------------------------- priority levels


def _percent_errors(section: Mapping[str, Any], path: str, errs: Errors) -> None:
    shares = int_at(section, "nominalConcurrencyShares", path, errs)
    if shares is not None and shares < 0:
        errs.append(invalid(child(path, "nominalConcurrencyShares"), shares, "must be a non-negative integer"))
    for name in ("lendablePercent", "borrowingLimitPercent"):
        value = int_at(section, name, path, errs)
        if name == "lendablePercent" and value is not None and not 0 <= value <= 100:
            errs.append(invalid(child(path, name), value, "must be between 0 and 100, inclusive"))
        if name == "borrowingLimitPercent" and value is not None and value < 0:
            errs.append(invalid(child(path, name), value, "if specified, must be a non-negative integer"))


def validate_priority_level_create(level: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(level, False, name_is_path_segment)
    name = str_at(mapping_at(level, "metadata", "", []), "name", "metadata", [])
    spec = mapping_at(level, "spec", "", errs)
    level_type = str_at(spec, "type", "spec", errs)
    if (level_type == "Exempt") != (name == "exempt"):
        errs.append(invalid("spec.type", level_type, "must be 'Exempt' if and only if name is 'exempt'"))
    if level_type == "Exempt":
        if spec.get("limited") is not None:
            errs.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        _percent_errors(mapping_at(spec, "exempt", "spec", errs), "spec.exempt", errs)
    elif level_type == "Limited":
        if spec.get("exempt") is not None:
            errs.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
        if spec.get("limited") is None:
            errs.append(required("spec.limited", "must not be empty when type is Limited"))
        else:
            limited = mapping_at(spec, "limited", "spec", errs)
            _percent_errors(limited, "spec.limited", errs)
            response = mapping_at(limited, "limitResponse", "spec.limited", errs)
            response_type = str_at(response, "type", "spec.limited.limitResponse", errs)
            if response_type not in LIMIT_RESPONSE_TYPES:
                errs.append(not_supported("spec.limited.limitResponse.type", response_type, LIMIT_RESPONSE_TYPES))
            elif response_type == "Queue" and response.get("queuing") is None:
                errs.append(required("spec.limited.limitResponse.queuing", "must not be empty if type is Queue"))
            elif response_type == "Reject" and response.get("queuing") is not None:
                errs.append(forbidden("spec.limited.limitResponse.queuing", "must be nil if limited.limitResponse.type"
                                                                            " is not Limited"))
    else:
        errs.append(not_supported("spec.type", level_type, LEVEL_TYPES))
    return errs


def validate_priority_level_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_priority_level_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs
