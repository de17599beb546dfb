"""admissionregistration.k8s.io/v1: webhook configurations and ValidatingAdmissionPolicies.

Defaults as upstream's ``pkg/apis/admissionregistration/v1/defaults.go`` (v1 values): every
webhook fails closed (``failurePolicy: Fail``), matches ``Equivalent`` requests, selects every
namespace and object (``{}`` selectors) and times out after 10 seconds; mutating webhooks are
not reinvoked (``Never``); rules cover every scope (``*``); Service references use port 443.
A ValidatingAdmissionPolicy fails closed and its match constraints default like a webhook's;
a binding's ``matchResources`` too.

Validation as ``pkg/apis/admissionregistration/validation``: fully qualified, unique webhook
names; rules with operations, groups, versions and resources; ``sideEffects`` ``None`` or
``NoneOnDryRun``; recognised ``admissionReviewVersions``; a client config with exactly one of
an ``https`` URL or a Service; timeouts of 1 to 30 seconds. The CEL checks of admission
policies are not done (there is no CEL here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kubeloop.api import names
from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import duplicate, invalid, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    child,
    index,
    int_at,
    list_at,
    mapping_at,
    objects_at,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.syntax import port_number_errors

GROUP = "admissionregistration.k8s.io"
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SIDE_EFFECTS = ("None", "NoneOnDryRun")
REINVOCATION_POLICIES = ("IfNeeded", "Never")
SCOPES = ("*", "Cluster", "Namespaced")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
REVIEW_VERSIONS = ("v1", "v1beta1")
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
_URL_FORM = "; desired format: https://host[/path]"


# ---------------------------------------------------------------------------------- defaults


def _default_rules(rules: Any) -> None:
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict) and rule.get("scope") is None:
            rule["scope"] = "*"


def _default_match(match: dict[str, Any]) -> None:
    """``SetDefaults_MatchResources``."""
    if match.get("matchPolicy") is None:
        match["matchPolicy"] = "Equivalent"
    for selector in ("namespaceSelector", "objectSelector"):
        if match.get(selector) is None:
            match[selector] = {}
    _default_rules(match.get("resourceRules"))
    _default_rules(match.get("excludeResourceRules"))


def _default_webhook(hook: dict[str, Any], mutating: bool) -> None:
    for name, value in (("failurePolicy", "Fail"), ("matchPolicy", "Equivalent"), ("timeoutSeconds", 10)):
        if hook.get(name) is None:
            hook[name] = value
    for selector in ("namespaceSelector", "objectSelector"):
        if hook.get(selector) is None:
            hook[selector] = {}
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    _default_rules(hook.get("rules"))
    client_config = hook.get("clientConfig")
    service = client_config.get("service") if isinstance(client_config, dict) else None
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def _default_webhooks(configuration: dict[str, Any], mutating: bool) -> None:
    hooks = configuration.get("webhooks")
    for hook in hooks if isinstance(hooks, list) else []:
        if isinstance(hook, dict):
            _default_webhook(hook, mutating)


def default_validating_webhook_configuration(configuration: dict[str, Any]) -> None:
    _default_webhooks(configuration, False)


def default_mutating_webhook_configuration(configuration: dict[str, Any]) -> None:
    _default_webhooks(configuration, True)


def default_validating_admission_policy(policy: dict[str, Any]) -> None:
    spec = policy.get("spec")
    if spec is None:
        spec = policy["spec"] = {}
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    if isinstance(spec.get("matchConstraints"), dict):
        _default_match(spec["matchConstraints"])


def default_validating_admission_policy_binding(binding: dict[str, Any]) -> None:
    spec = binding.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("matchResources"), dict):
        _default_match(spec["matchResources"])


# -------------------------------------------------------------------------------- validation


def fully_qualified_name_errors(name: str, path: str) -> Errors:
    """``IsFullyQualifiedName``."""
    if not name:
        return [required(path)]
    messages = names.dns1123_subdomain_errors(name)
    if messages:
        return [invalid(path, name, ",".join(messages))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _wildcard_list_errors(rule: Mapping[str, Any], name: str, what: str, path: str, errs: Errors) -> list[str]:
    values = str_list_at(rule, name, path, errs)
    if not values:
        errs.append(required(child(path, name)))
    elif len(values) > 1 and "*" in values:
        errs.append(invalid(child(path, name), values, f"if '*' is present, must not specify other {what}"))
    return values


def rule_errors(rule: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateRuleWithOperations``."""
    operations = _wildcard_list_errors(rule, "operations", "operations", path, errs)
    for position, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(not_supported(index(child(path, "operations"), position), operation, OPERATIONS))
    _wildcard_list_errors(rule, "apiGroups", "API groups", path, errs)
    versions = _wildcard_list_errors(rule, "apiVersions", "API versions", path, errs)
    for position, version in enumerate(versions):
        if not version:
            errs.append(required(index(child(path, "apiVersions"), position)))
    if not list_at(rule, "resources", path, errs):
        errs.append(required(child(path, "resources")))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, SCOPES))


def _url_errors(url: str, path: str) -> Errors:
    """``ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [required(path, f"url must be a valid URL: {exc}{_URL_FORM}")]
    errs: Errors = []
    if parts.scheme != "https":
        errs.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    host = parts.netloc.rpartition("@")[2]
    if not host:
        errs.append(invalid(path, host, "host must be specified" + _URL_FORM))
    if "@" in parts.netloc:
        errs.append(invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _service_errors(service: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``ValidateWebhookService``."""
    if not str_at(service, "name", path, errs):
        errs.append(required(child(path, "name"), "service name is required"))
    if not str_at(service, "namespace", path, errs):
        errs.append(required(child(path, "namespace"), "service namespace is required"))
    port = int_at(service, "port", path, errs)
    if port is not None:
        messages = port_number_errors(port)
        if messages:
            errs.append(invalid(child(path, "port"), port, "port is not valid: " + ", ".join(messages)))
    url_path = str_at(service, "path", path, errs)
    if url_path in ("", "/"):
        return
    if url_path == "//":
        errs.append(invalid(child(path, "path"), url_path, "segment[0] may not be empty"))
    elif not url_path.startswith("/"):
        errs.append(invalid(child(path, "path"), url_path, "must start with a '/'"))


def _client_config_errors(hook: Mapping[str, Any], path: str, errs: Errors) -> None:
    config_path = child(path, "clientConfig")
    config = mapping_at(hook, "clientConfig", path, errs)
    url = config.get("url")
    service = config.get("service")
    if (url is None) == (service is None):
        errs.append(required(config_path, "exactly one of url or service is required"))
    elif url is not None:
        errs.extend(_url_errors(str_at(config, "url", config_path, errs), child(config_path, "url")))
    else:
        _service_errors(mapping_at(config, "service", config_path, errs), child(config_path, "service"), errs)


def _review_versions_errors(hook: Mapping[str, Any], path: str, errs: Errors) -> None:
    versions_path = child(path, "admissionReviewVersions")
    versions = str_list_at(hook, "admissionReviewVersions", path, errs)
    if not versions:
        errs.append(required(versions_path, f"must specify one of {', '.join(REVIEW_VERSIONS)}"))
        return
    seen: set[str] = set()
    for position, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(index(versions_path, position), version, "duplicate version"))
            continue
        seen.add(version)
        errs.extend(invalid(index(versions_path, position), version, m) for m in names.dns1035_label_errors(version))
    if not seen & set(REVIEW_VERSIONS):
        errs.append(invalid(versions_path, versions, f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))


def _webhook_errors(hook: Mapping[str, Any], path: str, mutating: bool, errs: Errors) -> None:
    errs.extend(fully_qualified_name_errors(str_at(hook, "name", path, errs), child(path, "name")))
    for rule_path, rule in objects_at(hook, "rules", path, errs):
        rule_errors(rule, rule_path, errs)
    for name, supported in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = hook.get(name)
        if value is not None and value not in supported:
            errs.append(not_supported(child(path, name), value, supported))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(required(child(path, "sideEffects"), f"must specify one of {', '.join(SIDE_EFFECTS)}"))
    elif side_effects not in SIDE_EFFECTS:
        errs.append(not_supported(child(path, "sideEffects"), side_effects, SIDE_EFFECTS))
    timeout = int_at(hook, "timeoutSeconds", path, errs)
    if timeout is not None and not 1 <= timeout <= 30:
        errs.append(invalid(child(path, "timeoutSeconds"), timeout, "the timeout value must be between 1 and 30 "
                                                                    "seconds"))
    for selector in ("namespaceSelector", "objectSelector"):
        errs.extend(validate_label_selector(hook.get(selector), child(path, selector)))
    if mutating:
        policy = hook.get("reinvocationPolicy")
        if policy is not None and policy not in REINVOCATION_POLICIES:
            errs.append(not_supported(child(path, "reinvocationPolicy"), policy, REINVOCATION_POLICIES))
    _client_config_errors(hook, path, errs)


def _configuration_errors(configuration: Mapping[str, Any], mutating: bool) -> Errors:
    errs = validate_object_meta(configuration, False, name_is_dns_subdomain)
    seen: set[str] = set()
    for hook_path, hook in objects_at(configuration, "webhooks", "", errs):
        _webhook_errors(hook, hook_path, mutating, errs)
        _review_versions_errors(hook, hook_path, errs)
        name = hook.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                errs.append(duplicate(child(hook_path, "name"), name))
            seen.add(name)
    return errs


def validate_validating_webhook_configuration_create(configuration: Mapping[str, Any]) -> Errors:
    return _configuration_errors(configuration, False)


def validate_validating_webhook_configuration_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = _configuration_errors(new, False)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def validate_mutating_webhook_configuration_create(configuration: Mapping[str, Any]) -> Errors:
    return _configuration_errors(configuration, True)


def validate_mutating_webhook_configuration_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = _configuration_errors(new, True)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def _match_errors(spec: Mapping[str, Any], field_name: str, errs: Errors, *, rules_required: bool) -> None:
    """``validateMatchResources`` (and, for a policy, at least one resource rule)."""
    match = mapping_at(spec, field_name, "spec", errs)
    match_path = child("spec", field_name)
    value = match.get("matchPolicy")
    if value is None:
        errs.append(required(child(match_path, "matchPolicy")))
    elif value not in MATCH_POLICIES:
        errs.append(not_supported(child(match_path, "matchPolicy"), value, MATCH_POLICIES))
    for selector in ("namespaceSelector", "objectSelector"):
        if match.get(selector) is None:
            errs.append(required(child(match_path, selector)))
        else:
            errs.extend(validate_label_selector(match.get(selector), child(match_path, selector)))
    for rules in ("resourceRules", "excludeResourceRules"):
        for rule_path, rule in objects_at(match, rules, match_path, errs):
            rule_errors(rule, rule_path, errs)
    if rules_required and not list_at(match, "resourceRules", match_path, errs):
        errs.append(required(child(match_path, "resourceRules")))


def validate_admission_policy_create(policy: Mapping[str, Any]) -> Errors:
    """``ValidateValidatingAdmissionPolicy`` without CEL: match constraints, something to check."""
    errs = validate_object_meta(policy, False, name_is_dns_subdomain)
    spec = mapping_at(policy, "spec", "", errs)
    value = spec.get("failurePolicy")
    if value is None:
        errs.append(required("spec.failurePolicy"))
    elif value not in FAILURE_POLICIES:
        errs.append(not_supported("spec.failurePolicy", value, FAILURE_POLICIES))
    if spec.get("matchConstraints") is None:
        errs.append(required("spec.matchConstraints"))
    else:
        _match_errors(spec, "matchConstraints", errs, rules_required=True)
    validations = objects_at(spec, "validations", "spec", errs)
    if not validations and not list_at(spec, "auditAnnotations", "spec", errs):
        for name in ("validations", "auditAnnotations"):
            errs.append(required(child("spec", name), "validations or auditAnnotations must contain at least one item"))
    for item_path, validation in validations:
        if not str_at(validation, "expression", item_path, errs).strip():
            errs.append(required(child(item_path, "expression"), "expression is not specified"))
    return errs


def validate_admission_policy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_admission_policy_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def validate_policy_binding_create(binding: Mapping[str, Any]) -> Errors:
    """``ValidateValidatingAdmissionPolicyBinding``: a policy name and validation actions."""
    errs = validate_object_meta(binding, False, name_is_dns_subdomain)
    spec = mapping_at(binding, "spec", "", errs)
    policy_name = str_at(spec, "policyName", "spec", errs)
    if not policy_name:
        errs.append(required("spec.policyName"))
    else:
        errs.extend(invalid("spec.policyName", policy_name, m) for m in names.dns1123_subdomain_errors(policy_name))
    if spec.get("matchResources") is not None:
        _match_errors(spec, "matchResources", errs, rules_required=False)
    actions = str_list_at(spec, "validationActions", "spec", errs)
    seen: set[str] = set()
    for position, action in enumerate(actions):
        action_path = index("spec.validationActions", position)
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(action_path, action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(duplicate(action_path, action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn (repeating the "
                            "same validation failure information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(required("spec.validationActions", "at least one validation action is required"))
    return errs


def validate_policy_binding_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_policy_binding_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs
