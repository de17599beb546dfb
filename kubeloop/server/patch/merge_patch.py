"""JSON merge patch (RFC 7386) with the behaviour of the library kube-apiserver uses.

``application/merge-patch+json`` goes through evanphx/json-patch v4 ``MergePatch``:

* objects merge recursively, a ``null`` member deletes the key, anything else replaces;
* a value taken from the patch where the document has no object to merge into loses its
  ``null`` members, also inside objects nested in arrays (RFC 7386 would keep them in
  arrays);
* a ``null`` in the document counts as absent;
* a ``null`` or scalar patch is "Invalid JSON Patch" (400); an array patch replaces the whole
  document, which then cannot decode as an object: 422 ``Invalid`` on field ``patch``.
"""

from __future__ import annotations

from typing import Any

import orjson

from kubeloop.server.patch.errors import PatchError, bad_request
from kubeloop.server.patch.json_patch import not_an_object_message
from kubeloop.server.patch.values import copy_json

INVALID_JSON_PATCH = "Invalid JSON Patch"


def apply_merge_patch(doc: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Merge ``patch`` into a copy of ``doc`` and return it; neither input is modified.

    Raises :class:`PatchError`: 400 for a ``null`` or scalar patch, 422 for an array patch.
    """
    if isinstance(patch, list):
        replaced = _pruned_array(copy_json(patch))
        raise PatchError(422, not_an_object_message("array"), invalid_patch=orjson.dumps(replaced).decode())
    if not isinstance(patch, dict):
        raise bad_request(INVALID_JSON_PATCH)
    result: dict[str, Any] = copy_json(doc)
    _merge_into(result, copy_json(patch))
    return result


def _merge_into(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if not isinstance(current, dict):
            doc[key] = _pruned(value)
        elif isinstance(value, dict):
            _merge_into(current, value)
        else:
            # The library returns a non-object patch value as is when the document holds an
            # object there: no null pruning in that case.
            doc[key] = value


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for nested in value.values():
            _pruned(nested)
    elif isinstance(value, list):
        _pruned_array(value)
    return value


def _pruned_array(values: list[Any]) -> list[Any]:
    for item in values:
        if item is not None:
            _pruned(item)
    return values
