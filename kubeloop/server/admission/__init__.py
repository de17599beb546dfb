"""Admission for the embedded API server: defaulting and validation as kube-apiserver does them.

The HTTP layer calls, for every write:

* :func:`default_object` on the decoded body (on create, and again on every update or patch,
  so that patched objects look exactly like freshly created ones);
* :func:`validate_create`, :func:`validate_update` or :func:`validate_status_update`, and
  turns a non-empty error list into a 422 ``Invalid`` (``kubeloop.api.status.invalid_error``).

:func:`validate_create` first runs the kind's create-time mutating admission (for Pods,
OpenKruise's container launch priority, :mod:`.launchpriority`): upstream, mutating admission
follows defaulting and precedes validation, and sees creations only. It is the one place where
this package changes an object outside of defaulting, and it may raise an ``ApiError``.

Validation follows upstream's order: the kind's own rules (``pkg/apis/*/validation`` and the
registry strategies), and the generic registry's metadata pass — on create only when the kind's
rules passed, on update before them. Validation itself never mutates an object.

Update validation expects what the storage layer upstream has already done by then: the old
``generation``, ``uid``, ``creationTimestamp`` and ``deletionTimestamp`` carried over into the
new object, and for an unconditional update (no ``resourceVersion`` in the request) the current
``resourceVersion`` filled in; otherwise those fields are reported as changed or missing.

``autoscaling/v1`` ``Scale`` bodies (the scale subresource) are validated with
:func:`validate_create` or :func:`validate_update` under group ``autoscaling``, kind ``Scale``.
"""

from __future__ import annotations

from typing import Any

from kubeloop.api.status import FieldError
from kubeloop.server.admission.apps import validate_scale
from kubeloop.server.admission.deletioncost import allowed_by_stored_costs
from kubeloop.server.admission.kinds import BUILTIN_RULES, KindRules, rules_for
from kubeloop.server.admission.metadata import (
    dedupe,
    name_is_dns_subdomain,
    validate_common_create,
    validate_common_update,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec

__all__ = [
    "BUILTIN_RULES",
    "KindRules",
    "default_object",
    "default_pod_template_spec",
    "prepare_update",
    "validate_create",
    "validate_pod_template_spec",
    "validate_status_update",
    "validate_update",
]

_SCALE = ("autoscaling", "Scale")


def _rules(group: str, kind: str, given: KindRules | None) -> KindRules | None:
    return given if given is not None else rules_for(group, kind)


def default_object(group: str, version: str, kind: str, obj: dict[str, Any], *, rules: KindRules | None = None) -> None:
    """Apply the kind's defaults to ``obj`` in place (nothing for kinds without defaults).

    ``rules`` are the served kind's own (from the registry); without them the built-in table's.
    """
    del version  # every served version of a kind shares its defaults
    rules = _rules(group, kind, rules)
    if rules is not None:
        rules.default(obj)


def prepare_update(group: str, kind: str, new: dict[str, Any], old: dict[str, Any], *, status: bool,
                   rules: KindRules | None = None) -> None:
    """The kind's ``PrepareForUpdate`` on ``new`` (before defaulting; nothing for most kinds)."""
    rules = _rules(group, kind, rules)
    if rules is not None:
        rules.prepare_update(new, old, status)


def validate_create(group: str, version: str, kind: str, obj: dict[str, Any], *, namespaced: bool,
                    rules: KindRules | None = None) -> list[FieldError]:
    """Field errors for ``obj`` as a new object of the kind (already defaulted, name generated).

    The kind's create-time mutation is applied to ``obj`` (in place) before it is validated;
    a refusal by that mutation propagates as its ``ApiError``.
    """
    del version
    if (group, kind) == _SCALE:
        return dedupe(validate_scale(obj, namespaced))
    rules = _rules(group, kind, rules)
    if rules is not None:
        rules.mutate_on_create(obj)
        errs = rules.create(obj)
    else:
        errs = validate_object_meta(obj, namespaced, name_is_dns_subdomain, builtin=False)
    if not errs:
        errs = validate_common_create(obj, namespaced)
    return dedupe(errs)


def validate_update(
    group: str, version: str, kind: str, new: dict[str, Any], old: dict[str, Any], *, namespaced: bool,
    rules: KindRules | None = None,
) -> list[FieldError]:
    """Field errors for replacing ``old`` by ``new`` through the main endpoint (or a patch)."""
    del version
    if (group, kind) == _SCALE:
        return dedupe(validate_scale(new, namespaced))
    errs = validate_common_update(new, old, namespaced)
    rules = _rules(group, kind, rules)
    if rules is not None:
        errs.extend(rules.update(new, old))
    else:
        errs.extend(validate_object_meta(new, namespaced, name_is_dns_subdomain, builtin=False))
        errs.extend(validate_object_meta_update(new, old, builtin=False))
    return dedupe(allowed_by_stored_costs(errs, old))


def validate_status_update(
    group: str, version: str, kind: str, new: dict[str, Any], old: dict[str, Any], *, namespaced: bool,
    rules: KindRules | None = None,
) -> list[FieldError]:
    """Field errors for a write through ``/status`` (``new`` carries the old spec already)."""
    del version
    errs = validate_common_update(new, old, namespaced)
    rules = _rules(group, kind, rules)
    if rules is not None:
        errs.extend(rules.status_update(new, old))
    else:
        errs.extend(validate_object_meta_update(new, old, builtin=False))
    return dedupe(allowed_by_stored_costs(errs, old))
