"""Strategic merge patch, applied the way kube-apiserver applies it.

The algorithm follows apimachinery's ``strategicpatch`` applied server-side (parallel lists
merged, unmatched nulls ignored):

* maps merge key by key; ``null`` deletes; a scalar, a type change or a key the document lacks
  takes the patch value (without its ``null`` members and directives);
* a list whose field has ``patchStrategy: merge`` merges element-wise: objects on the field's
  merge key (matching elements merge recursively, others are added), scalars as a union
  without duplicates; other lists are replaced;
* order of a merged list: the patch's elements in patch order, interleaved with the elements
  only the server had, each of those placed before the first patch element that followed it in
  the server's list; so an element new to the list lands before the server-only elements that
  come after the last element the patch shares with the server;
* directives: ``$patch: replace|delete`` on a map or as a list element (with the merge key for
  ``delete``), ``$retainKeys`` (drops every key of the server's map not listed),
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` (the final order of the
  listed elements; server-only elements interleave as above). Directives are never stored.

Errors carry the texts upstream produces. Upstream answers some of them with HTTP 500 (errors
its handler does not classify, such as an element without its merge key); this engine
classifies those as 422 so that no request makes the embedded server answer 500.
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.patch.errors import bad_request, unprocessable
from kubeloop.server.patch.list_order import (
    MAP_TYPE,
    bad_arg_type,
    find_by_key,
    no_merge_key,
    normalize_order,
    partition_maps,
    partition_scalars,
    same,
)
from kubeloop.server.patch.schema import MERGE, REPLACE, PatchSchema
from kubeloop.server.patch.values import copy_json, go_format, go_type_name, json_kind

DIRECTIVE = "$patch"
DELETE = "delete"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"

ERR_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
ERR_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"

_LIST_TYPE = "[]interface {}"
_SCALAR = "scalar"


def apply_strategic_merge_patch(doc: dict[str, Any], patch: Any, schema: PatchSchema) -> dict[str, Any]:
    """Apply ``patch`` to a copy of ``doc`` using ``schema``; neither input is modified.

    Raises :class:`~kubeloop.server.patch.errors.PatchError`: 400 for a patch that is not an
    object or a malformed directive, 422 for a patch that cannot apply to this document.
    """
    if patch is None:
        patch = {}
    if not isinstance(patch, dict):
        raise bad_request(f"json: cannot unmarshal {json_kind(patch)} into Go value of type map[string]interface {{}}")
    result: dict[str, Any] = copy_json(doc)
    return _merge_map(result, copy_json(patch), schema)


def _go_s(value: Any) -> str:
    """Go's ``%s`` of an interface value (non-strings print as ``%!s(type=value)``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    return f"%!s({go_type_name(value)}={go_format(value)})"


def _is_directive_key(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS) or key.startswith((SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST))


# --- cleaning values taken from the patch ------------------------------------------------------


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for nested in value.values():
            _discard_nulls(nested)
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """Upstream's ``removeDirectives`` (a map carrying ``$patch`` is dropped), extended to drop
    the other directive keys, which upstream's typed decoding discards as unknown fields."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            if _is_directive_key(key):
                del value[key]
                continue
            nested, keep = _remove_directives(value[key])
            if keep:
                value[key] = nested
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value:
            nested, keep = _remove_directives(item)
            if keep:
                kept.append(nested)
        return kept, True
    return value, True


def _cleaned(value: Any) -> Any:
    """A raw patch value as upstream's typed decoding stores it (in place): ``null`` members
    and directive keys disappear, every element stays."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None or _is_directive_key(k)]:
            del value[key]
        for nested in value.values():
            _cleaned(nested)
    elif isinstance(value, list):
        for item in value:
            _cleaned(item)
    return value


def _take_patch_value(original: dict[str, Any], key: str, value: Any) -> None:
    _discard_nulls(value)
    cleaned, keep = _remove_directives(value)
    if keep:
        original[key] = cleaned
    else:
        original.pop(key, None)


# --- maps --------------------------------------------------------------------------------------


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if same(directive, REPLACE):
            del patch[DIRECTIVE]
            return dict(_cleaned(patch))
        if same(directive, DELETE):
            return {}
        raise unprocessable(f"unknown patch type: {_go_s(directive)} in map: {go_format(patch)}")

    entries = list(patch.items())
    if any(key[:1] == "$" for key in patch):
        _apply_retain_keys(original, patch)
        _merge_ordered_lists(original, patch, schema)
        entries = list(patch.items())
        # Upstream walks the patch in Go's random map order, so a value both added and deleted
        # may end up either way; deleting first makes the patch's explicit additions win.
        entries.sort(key=lambda item: not item[0].startswith(DELETE_FROM_PRIMITIVE_LIST))
    for key, patch_value in entries:
        is_delete_list = key[:1] == "$" and key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if is_delete_list:
            key = _extract_key(key, DELETE_FROM_PRIMITIVE_LIST, ERR_BAD_PRIMITIVE_LIST)
        if patch_value is None:
            original.pop(key, None)
            continue
        # Python's JSON types map one to one onto the Go types upstream compares.
        if key not in original or type(original[key]) is not type(patch_value):
            if not is_delete_list:
                _take_patch_value(original, key, patch_value)
            continue
        current = original[key]
        if isinstance(current, dict):
            meta = schema.lookup(key)
            if meta.strategy == REPLACE:
                original[key] = _cleaned(patch_value)
            else:
                original[key] = _merge_map(current, patch_value, meta.schema)
        elif isinstance(current, list):
            meta = schema.lookup(key)
            original[key] = _merge_list_field(
                current, patch_value, meta.schema, meta.strategy, meta.merge_key, is_delete_list
            )
        else:
            original[key] = patch_value
    return original


def _extract_key(key: str, prefix: str, error: str) -> str:
    head, slash, rest = key.partition("/")
    if not slash or head != prefix:
        raise bad_request(error)
    return rest


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise bad_request(ERR_BAD_RETAIN_KEYS)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if not any(same(key, kept) for kept in retained):
            raise bad_request(ERR_BAD_RETAIN_KEYS)
    for key in list(original):
        if not any(same(key, kept) for kept in retained):
            del original[key]


# --- lists -------------------------------------------------------------------------------------


def _merge_list_field(
    original: list[Any],
    patch: list[Any],
    schema: PatchSchema,
    strategy: str,
    merge_key: str,
    is_delete_list: bool,
    server_view: list[Any] | None = None,
) -> list[Any]:
    if strategy == MERGE or is_delete_list:
        return _merge_list(original, patch, schema, merge_key, is_delete_list, server_view)
    return list(_cleaned(patch))


def _element_type(*lists: list[Any]) -> str:
    """The one Go type of every element (upstream's ``sliceElementType``)."""
    seen: type | None = None
    for values in lists:
        for value in values:
            if seen is None:
                seen = type(value)
                if seen is list:
                    raise unprocessable(ERR_NO_LIST_OF_LISTS, generic=True)
            elif type(value) is not seen:
                raise unprocessable(f"list element types are not identical: {go_format(list(lists))}")
    if seen is None:
        raise unprocessable("no elements in any of the given slices")
    return MAP_TYPE if seen is dict else _SCALAR


def _merge_list(
    original: list[Any],
    patch: list[Any],
    schema: PatchSchema,
    merge_key: str,
    is_delete_list: bool,
    server_view: list[Any] | None = None,
) -> list[Any]:
    """Merge a list with the merge strategy.

    ``server_view``, when given, is the caller's list, updated the way upstream's in-place
    slice operations update the array the caller still holds: deletions shift the elements
    left (leaving stale copies at the end) and elements added afterwards overwrite those
    positions. ``$setElementOrder`` orders server-only elements against that view, so this
    reproduces where upstream puts them.
    """
    if not original and not patch:
        return original
    is_map = _element_type(original, patch) == MAP_TYPE
    added: list[Any] = []
    if not is_map:
        if is_delete_list:
            return [v for v in original if not any(same(v, gone) for gone in patch)]
        merged = _unique(original + patch)
    else:
        if not merge_key:
            raise unprocessable(f"cannot merge lists without merge key for {schema.name}")
        original, patch, replaced = _apply_list_directives(original, patch, merge_key, server_view)
        if replaced:
            server_view = None
        merged, added = _merge_elements(original, patch, merge_key, schema, server_view)
        added.extend(replaced)
    if merge_key:
        in_patch, server_only = partition_maps(merged, patch, merge_key)
    else:
        in_patch, server_only = partition_scalars(merged, patch)
    result = normalize_order(in_patch, server_only, patch, original, merge_key, is_map)
    for item in added:
        _cleaned(item)
    return result


def _unique(values: list[Any]) -> list[Any]:
    unique: list[Any] = []
    for value in values:
        if not any(same(value, seen) for seen in unique):
            unique.append(value)
    return unique


def _apply_list_directives(
    original: list[Any], patch: list[Any], merge_key: str, server_view: list[Any] | None
) -> tuple[list[Any], list[Any], list[Any]]:
    """Handle ``$patch`` elements: returns the server list after deletions (or the patch's
    elements when one says ``replace``), the remaining patch elements, and the elements that
    came from a replacing patch (to be cleaned once ordered)."""
    current = list(original)
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if same(directive, DELETE):
            if merge_key not in item:
                raise no_merge_key(item, merge_key)
            _delete_matching(current, merge_key, item[merge_key], server_view)
        elif same(directive, REPLACE):
            replace = True
        elif same(directive, MERGE):
            raise unprocessable("merging lists cannot yet be specified in the patch")
        else:
            raise unprocessable(f"unknown patch type: {_go_s(directive)} in map: {go_format(item)}")
    if replace:
        return plain, [], plain
    return current, plain, []


def _delete_matching(items: list[Any], merge_key: str, value: Any, server_view: list[Any] | None) -> None:
    """Remove every element whose merge key equals ``value``, one at a time as upstream does."""
    while True:
        index = find_by_key(items, merge_key, value)
        if index < 0:
            return
        length = len(items)
        del items[index]
        if server_view is not None:
            server_view[index : length - 1] = server_view[index + 1 : length]


def _merge_elements(
    original: list[Any], patch: list[Any], merge_key: str, schema: PatchSchema, server_view: list[Any] | None
) -> tuple[list[Any], list[Any]]:
    merged = list(original)
    added: list[Any] = []
    for item in patch:
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
        index = find_by_key(merged, merge_key, item[merge_key])
        if index >= 0:
            merged[index] = _merge_map(merged[index], item, schema)
        else:
            if server_view is not None and len(merged) < len(server_view):
                server_view[len(merged)] = item
            merged.append(item)
            added.append(item)
    return merged, added


# --- $setElementOrder --------------------------------------------------------------------------


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema) -> None:
    """Process every ``$setElementOrder/<field>`` with its list, removing both from the patch."""
    for directive_key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(directive_key)
        if not isinstance(order, list):
            raise bad_arg_type(_LIST_TYPE, order)
        key = _extract_key(directive_key, SET_ELEMENT_ORDER, ERR_BAD_SET_ELEMENT_ORDER)
        found_original, found_patch = key in original, key in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[key], list):
                raise bad_arg_type(_LIST_TYPE, original[key])
            original_list = original[key]
        if found_patch:
            if not isinstance(patch[key], list):
                raise bad_arg_type(_LIST_TYPE, patch[key])
            patch_list = patch[key]
        meta = schema.lookup(key)
        merge_key = meta.merge_key
        _check_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            _discard_nulls(patch_list)
            merged = _remove_directives(patch_list)[0]
        elif found_original and found_patch:
            # ``original_list`` doubles as the server order below, updated as upstream's is.
            merged = _merge_list_field(
                original_list, patch_list, meta.schema, meta.strategy, merge_key, False, original_list
            )
        else:
            continue
        if merge_key:
            in_order, server_only = partition_maps(merged, order, merge_key)
        else:
            in_order, server_only = partition_scalars(merged, order)
        is_map = _element_type(original_list, patch_list) == MAP_TYPE
        original[key] = normalize_order(in_order, server_only, order, original_list, merge_key, is_map)
        patch.pop(key, None)


def _check_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """The patch's elements must appear in the order list, in the same relative order."""
    if not order or not patch_list:
        return
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise bad_arg_type(MAP_TYPE, item)
        remaining = [v for v in patch_list if not same(v.get(DIRECTIVE), DELETE)]
    else:
        remaining = patch_list
    i = j = 0
    while i < len(remaining) and j < len(order):
        if isinstance(remaining[i], dict) and DIRECTIVE in remaining[i]:
            i += 1
            continue
        if _key_equal(remaining[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(remaining) and j >= len(order):
        raise unprocessable(
            f"The order in patch list:\n{go_format(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} list:\n"
            f"{go_format(order)}\n"
        )


def _key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return same(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise bad_arg_type(MAP_TYPE, side)
        if merge_key not in side:
            raise no_merge_key(side, merge_key)
    return same(left[merge_key], right[merge_key])
