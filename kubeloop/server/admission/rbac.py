"""rbac.authorization.k8s.io/v1: Roles, ClusterRoles and their bindings.

Defaults as upstream's ``pkg/apis/rbac/v1/defaults.go`` (``SetDefaults_RoleBinding``,
``SetDefaults_ClusterRoleBinding``, ``SetDefaults_Subject``): a binding's ``roleRef.apiGroup``
and a User or Group subject's ``apiGroup`` become ``rbac.authorization.k8s.io``.
Validation as ``pkg/apis/rbac/validation/validation.go``: names are path segments, every rule
has verbs and either resources (with API groups) or non-resource URLs (cluster roles only),
aggregation rules have selectors, bindings point at a Role or ClusterRole of this group and
``roleRef`` never changes. The escalation checks of the RBAC registry, which need the requesting
user, live in :mod:`kubeloop.server.auth.rbac.escalation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import go_quote, invalid, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    index,
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

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


# ---------------------------------------------------------------------------------- defaults


def _default_subjects(binding: dict[str, Any]) -> None:
    subjects = binding.get("subjects")
    for subject in subjects if isinstance(subjects, list) else []:
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


def default_binding(binding: dict[str, Any]) -> None:
    """``roleRef.apiGroup`` and User/Group subjects' ``apiGroup`` default to the RBAC group."""
    role_ref = binding.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = GROUP
    _default_subjects(binding)


# -------------------------------------------------------------------------------- validation


def _rule_errors(rule: Mapping[str, Any], namespaced: bool, path: str, errs: Errors) -> None:
    """``ValidatePolicyRule``."""
    verbs = str_list_at(rule, "verbs", path, errs)
    urls = str_list_at(rule, "nonResourceURLs", path, errs)
    groups = list_at(rule, "apiGroups", path, errs)
    resources = list_at(rule, "resources", path, errs)
    resource_names = list_at(rule, "resourceNames", path, errs)
    if not verbs:
        errs.append(required(child(path, "verbs"), "verbs must contain at least one value"))
    if urls:
        urls_path = child(path, "nonResourceURLs")
        if namespaced:
            errs.append(invalid(urls_path, urls, "namespaced rules cannot apply to non-resource URLs"))
        if groups or resources or resource_names:
            errs.append(invalid(urls_path, urls, "rules cannot apply to both regular resources and non-resource URLs"))
        return
    if not groups:
        errs.append(required(child(path, "apiGroups"), "resource rules must supply at least one api group"))
    if not resources:
        errs.append(required(child(path, "resources"), "resource rules must supply at least one resource"))


def _rules_errors(role: Mapping[str, Any], namespaced: bool, errs: Errors) -> None:
    for item_path, rule in objects_at(role, "rules", "", errs):
        _rule_errors(rule, namespaced, item_path, errs)


def validate_role_create(role: Mapping[str, Any]) -> Errors:
    """``ValidateRole``."""
    errs = validate_object_meta(role, True, name_is_path_segment)
    _rules_errors(role, True, errs)
    return errs


def validate_role_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_role_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def validate_cluster_role_create(role: Mapping[str, Any]) -> Errors:
    """``ValidateClusterRole``: rules without a namespace; an aggregation rule needs selectors."""
    errs = validate_object_meta(role, False, name_is_path_segment)
    _rules_errors(role, False, errs)
    if role.get("aggregationRule") is not None:
        aggregation = mapping_at(role, "aggregationRule", "", errs)
        selectors = list_at(aggregation, "clusterRoleSelectors", "aggregationRule", errs)
        selectors_path = "aggregationRule.clusterRoleSelectors"
        if not selectors:
            errs.append(required(selectors_path, "at least one clusterRoleSelector required if aggregationRule is "
                                                 "non-nil"))
        for position, selector in enumerate(selectors):
            errs.extend(validate_label_selector(selector, index(selectors_path, position)))
    return errs


def validate_cluster_role_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_cluster_role_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def _subject_errors(subject: Mapping[str, Any], namespaced: bool, path: str, errs: Errors) -> None:
    """``ValidateRoleBindingSubject``."""
    name = str_at(subject, "name", path, errs)
    kind = str_at(subject, "kind", path, errs)
    api_group = str_at(subject, "apiGroup", path, errs)
    if not name:
        errs.append(required(child(path, "name")))
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid(child(path, "name"), name, m) for m in names.dns1123_subdomain_errors(name))
        if api_group:
            errs.append(not_supported(child(path, "apiGroup"), api_group, [""]))
        if not namespaced and not str_at(subject, "namespace", path, errs):
            errs.append(required(child(path, "namespace")))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            errs.append(not_supported(child(path, "apiGroup"), api_group, [GROUP]))
    else:
        errs.append(not_supported(child(path, "kind"), kind, SUBJECT_KINDS))


def _binding_errors(binding: Mapping[str, Any], namespaced: bool) -> Errors:
    errs = validate_object_meta(binding, namespaced, name_is_path_segment)
    role_ref = mapping_at(binding, "roleRef", "", errs)
    api_group = str_at(role_ref, "apiGroup", "roleRef", errs)
    kind = str_at(role_ref, "kind", "roleRef", errs)
    name = str_at(role_ref, "name", "roleRef", errs)
    if api_group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", api_group, [GROUP]))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if kind not in kinds:
        errs.append(not_supported("roleRef.kind", kind, kinds))
    if not name:
        errs.append(required("roleRef.name"))
    else:
        errs.extend(invalid("roleRef.name", name, m) for m in name_is_path_segment(name, False))
    for item_path, subject in objects_at(binding, "subjects", "", errs):
        _subject_errors(subject, namespaced, item_path, errs)
    return errs


def _go_role_ref(role_ref: Mapping[str, Any]) -> GoLiteral:
    parts = ", ".join(f"{field}:{go_quote(str(role_ref.get(key) or ''))}"
                      for field, key in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name")))
    return GoLiteral(f"rbac.RoleRef{{{parts}}}")


def _role_ref_errors(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    new_ref = mapping_at(new, "roleRef", "", [])
    old_ref = mapping_at(old, "roleRef", "", [])
    fields = ("apiGroup", "kind", "name")
    if any((new_ref.get(f) or "") != (old_ref.get(f) or "") for f in fields):
        return [invalid("roleRef", _go_role_ref(new_ref), "cannot change roleRef")]
    return []


def validate_role_binding_create(binding: Mapping[str, Any]) -> Errors:
    return _binding_errors(binding, True)


def validate_role_binding_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_role_binding_create(new)
    errs.extend(validate_object_meta_update(new, old))
    errs.extend(_role_ref_errors(new, old))
    return errs


def validate_cluster_role_binding_create(binding: Mapping[str, Any]) -> Errors:
    return _binding_errors(binding, False)


def validate_cluster_role_binding_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_cluster_role_binding_create(new)
    errs.extend(validate_object_meta_update(new, old))
    errs.extend(_role_ref_errors(new, old))
    return errs
