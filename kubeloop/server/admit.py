"""Defaulting and validation of every write, before it reaches the store.

Custom resources are first pruned, defaulted and checked against their CRD's schema
(:mod:`kubeloop.server.crd`); then every kind goes through the admission package (per-kind
defaults and validation of the built-ins and of CloneSets). Failures become one 422 Invalid.

Between defaulting and validation runs the caller's ``mutate``, if any: kube-apiserver's
built-in mutating admission plugins, which need the server's state (for Pods,
:mod:`kubeloop.server.podplugins`). Each ``admit_*`` is the composition of a ``default_*`` and a
``validate_*`` phase, so a caller can run admission webhooks in between
(:mod:`kubeloop.server.objects`); :func:`redefault` re-runs defaulting on a webhook's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeloop.api.status import FieldError, invalid_error
from kubeloop.server import admission
from kubeloop.server.registry import ResourceInfo

Obj = dict[str, Any]
Mutation = Callable[[Obj], None]


def _raise_if(info: ResourceInfo, obj: Obj, errors: list[FieldError]) -> None:
    if errors:
        name = str((obj.get("metadata") or {}).get("name") or "")
        raise invalid_error(info.kind, info.group, name, errors)


def _custom_errors(info: ResourceInfo, obj: Obj, old: Obj | None) -> list[FieldError]:
    if info.custom is None:
        return []
    info.custom.prepare(obj)
    errors: list[FieldError] = info.custom.validate(obj, old)
    return errors


def default_create(info: ResourceInfo, obj: Obj, mutate: Mutation | None = None,
                   defaulted: Callable[[Obj], None] | None = None) -> list[FieldError]:
    """The first phase of :func:`admit_create`: default and mutate ``obj`` in place.

    Returns the schema errors of a custom resource, which :func:`validate_created` reports.
    """
    errors = _custom_errors(info, obj, None)
    admission.default_object(info.group, info.version, info.kind, obj, rules=info.rules)
    if defaulted is not None:
        defaulted(obj)
    if mutate is not None:
        mutate(obj)
    return errors


def redefault(info: ResourceInfo, obj: Obj, old: Obj | None, status: bool = False) -> list[FieldError]:
    """Default ``obj`` again after an admission webhook changed it (upstream re-runs the
    defaulter on the patched object); returns the custom resource's schema errors anew."""
    errors = _custom_errors(info, obj, old)
    if old is not None:
        admission.prepare_update(info.group, info.kind, obj, old, status=status, rules=info.rules)
    admission.default_object(info.group, info.version, info.kind, obj, rules=info.rules)
    return errors


def validate_created(info: ResourceInfo, obj: Obj, errors: list[FieldError]) -> None:
    """The second phase of :func:`admit_create`: validate ``obj`` as a new object; 422 on failure."""
    errors = errors + admission.validate_create(info.group, info.version, info.kind, obj,
                                                namespaced=info.namespaced, rules=info.rules)
    _raise_if(info, obj, errors)


def admit_create(info: ResourceInfo, obj: Obj, mutate: Mutation | None = None,
                 defaulted: Callable[[Obj], None] | None = None) -> None:
    """Default ``obj`` in place, mutate it, and validate it as a new object; 422 on failure.

    ``defaulted`` sees the object once defaulted, before the kind's create-time mutations
    (admission plugins, Job selectors, mutating admission): what upstream's field manager records
    for the request.
    """
    validate_created(info, obj, default_create(info, obj, mutate, defaulted))


def default_update(info: ResourceInfo, new: Obj, old: Obj, mutate: Mutation | None = None) -> list[FieldError]:
    """The first phase of :func:`admit_update`: prepare, default and mutate ``new`` in place."""
    errors = _custom_errors(info, new, old)
    admission.prepare_update(info.group, info.kind, new, old, status=False, rules=info.rules)
    admission.default_object(info.group, info.version, info.kind, new, rules=info.rules)
    if mutate is not None:
        mutate(new)
    return errors


def validate_updated(info: ResourceInfo, new: Obj, old: Obj, errors: list[FieldError]) -> None:
    """The second phase of :func:`admit_update`; 422 on failure."""
    errors = errors + admission.validate_update(
        info.group, info.version, info.kind, new, old, namespaced=info.namespaced, rules=info.rules)
    _raise_if(info, new, errors)


def admit_update(info: ResourceInfo, new: Obj, old: Obj, extra: list[FieldError],
                 mutate: Mutation | None = None) -> None:
    """Default ``new`` in place, mutate it, and validate it as a replacement of ``old``; 422 on failure."""
    errors = default_update(info, new, old, mutate)
    validate_updated(info, new, old, extra + errors)


def default_status_update(info: ResourceInfo, new: Obj, old: Obj) -> list[FieldError]:
    """The first phase of :func:`admit_status_update`."""
    errors = _custom_errors(info, new, old)
    admission.prepare_update(info.group, info.kind, new, old, status=True, rules=info.rules)
    admission.default_object(info.group, info.version, info.kind, new, rules=info.rules)
    return errors


def validate_status_updated(info: ResourceInfo, new: Obj, old: Obj, errors: list[FieldError]) -> None:
    """The second phase of :func:`admit_status_update`; 422 on failure."""
    errors = errors + admission.validate_status_update(
        info.group, info.version, info.kind, new, old, namespaced=info.namespaced, rules=info.rules)
    _raise_if(info, new, errors)


def admit_status_update(info: ResourceInfo, new: Obj, old: Obj, extra: list[FieldError]) -> None:
    """Validate a ``/status`` write (no defaulting of the desired state)."""
    validate_status_updated(info, new, old, extra + default_status_update(info, new, old))
