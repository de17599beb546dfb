"""scheduling.k8s.io/v1 PriorityClasses and node.k8s.io/v1 RuntimeClasses.

PriorityClass defaults and rules as upstream's ``pkg/apis/scheduling/v1/defaults.go``
(``SetDefaults_PriorityClass``: ``preemptionPolicy: PreemptLowerPriority``) and
``pkg/apis/scheduling/validation``: names starting with ``system-`` are reserved for the two
built-in classes (with their exact value and ``globalDefault``), user classes may not exceed
one billion, ``value`` and ``preemptionPolicy`` never change. :data:`SYSTEM_PRIORITY_CLASSES`
are the objects kube-apiserver creates at start (``pkg/apis/scheduling/types.go`` and
``pkg/registry/scheduling/rest``), and they cannot be deleted one by one.

RuntimeClass rules as ``pkg/apis/node/validation``: ``handler`` is a DNS label and immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import forbidden, forbidden_error, invalid, not_supported
from kubeloop.server.admission.fields import Errors, int_at, str_at
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)

SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"

# name -> (value, globalDefault, description)
_SYSTEM_CLASSES: dict[str, tuple[int, bool, str]] = {
    SYSTEM_NODE_CRITICAL: (2_000_001_000, False,
                           "Used for system critical pods that must not be moved from their current node."),
    SYSTEM_CLUSTER_CRITICAL: (2_000_000_000, False,
                              "Used for system critical pods that must run in the cluster, but can be moved to "
                              "another node if necessary."),
}


def system_priority_classes() -> list[dict[str, Any]]:
    """The built-in PriorityClasses, as bodies to create (defaults applied at create)."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
         "value": value, "globalDefault": global_default, "description": description}
        for name, (value, global_default, description) in _SYSTEM_CLASSES.items()
    ]


def refuse_system_priority_class_delete(group: str, kind: str, name: str) -> None:
    """403 for deleting a built-in class, as the PriorityClass REST storage's ``Delete`` does.

    (Upstream's collection delete goes around that override; so does this server's.)
    """
    if group == "scheduling.k8s.io" and kind == "PriorityClass" and name in _SYSTEM_CLASSES:
        raise forbidden_error("priorityclasses", "scheduling.k8s.io", name,
                              "this is a system priority class and cannot be deleted")


def default_priority_class(priority_class: dict[str, Any]) -> None:
    if priority_class.get("preemptionPolicy") is None:
        priority_class["preemptionPolicy"] = "PreemptLowerPriority"


def _known_system_class_error(name: str, value: int, global_default: bool) -> str | None:
    """``IsKnownSystemPriorityClass``: None when ``name`` is a built-in class with its settings."""
    known = _SYSTEM_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if known[0] != value:
        return f"value of {name} PriorityClass must be {known[0]}"
    if known[1] != global_default:
        return f"globalDefault of {name} PriorityClass must be {'true' if known[1] else 'false'}"
    return None


def validate_priority_class_create(priority_class: Mapping[str, Any]) -> Errors:
    """``ValidatePriorityClass``."""
    errs = validate_object_meta(priority_class, False, name_is_dns_subdomain)
    name = str_at(priority_class.get("metadata") or {}, "name", "metadata", [])
    value = int_at(priority_class, "value", "", errs) or 0
    if name.startswith(SYSTEM_PREFIX):
        problem = _known_system_class_error(name, value, priority_class.get("globalDefault") is True)
        if problem is not None:
            errs.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved "
                                                   f"for system use only. error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value", f"maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    policy = priority_class.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidatePriorityClassUpdate``: only metadata; ``value`` and ``preemptionPolicy`` are fixed."""
    errs = validate_object_meta_update(new, old)
    if (int_at(new, "value", "", errs) or 0) != (int_at(old, "value", "", []) or 0):
        errs.append(forbidden("value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), FIELD_IMMUTABLE))
    return errs


# ------------------------------------------------------------------------------ runtime classes


def validate_runtime_class_create(runtime_class: Mapping[str, Any]) -> Errors:
    """``ValidateRuntimeClass``: a DNS-label handler (required: an empty one is not a label)."""
    errs = validate_object_meta(runtime_class, False, name_is_dns_subdomain)
    handler = str_at(runtime_class, "handler", "", errs)
    errs.extend(invalid("handler", handler, m) for m in names.dns1123_label_errors(handler))
    return errs


def validate_runtime_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_runtime_class_create(new))
    if new.get("handler") != old.get("handler"):
        errs.append(invalid("handler", new.get("handler"), FIELD_IMMUTABLE))
    return errs
