"""Shared helpers of the part-B kinds' admission tests: run the package's entry points."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.server.admission import (
    default_object,
    prepare_update,
    validate_create,
    validate_status_update,
    validate_update,
)


def create(group: str, kind: str, obj: dict[str, Any], namespaced: bool = False) -> list[str]:
    """Default ``obj`` in place and return its create errors as ``path: message`` strings."""
    default_object(group, "v1", kind, obj)
    return [str(e) for e in validate_create(group, "v1", kind, obj, namespaced=namespaced)]


def stored(group: str, kind: str, obj: dict[str, Any], namespaced: bool = False) -> dict[str, Any]:
    """``obj`` as it would be stored (defaulted, valid) with the identity the store adds."""
    errors = create(group, kind, obj, namespaced)
    assert errors == []
    obj["metadata"].update({"uid": "u", "resourceVersion": "2", "creationTimestamp": "2026-01-01T00:00:00Z"})
    return obj


def update(group: str, kind: str, old: dict[str, Any], change: Any, namespaced: bool = False,
           status: bool = False) -> list[str]:
    """Errors of replacing ``old`` by a copy that ``change`` edits (in place)."""
    new = copy.deepcopy(old)
    change(new)
    prepare_update(group, kind, new, old, status=status)
    default_object(group, "v1", kind, new)
    check = validate_status_update if status else validate_update
    return [str(e) for e in check(group, "v1", kind, new, old, namespaced=namespaced)]
