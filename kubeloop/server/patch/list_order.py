"""Order and membership of merged lists, as upstream's strategic merge computes them.

Elements are identified by their merge key (objects) or their value (scalars), compared as Go
compares interface values: same type and same value, so ``1``, ``1.0`` and ``True`` differ.
After a merge, the patch's elements take the patch's (or ``$setElementOrder``'s) order and the
server-only elements keep theirs; :func:`interleave` then places each server-only element
before the first patch element that followed it in the server's list.
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.patch.errors import PatchError, unprocessable
from kubeloop.server.patch.values import go_format, go_type_name

DIRECTIVE = "$patch"
DELETE = "delete"
MAP_TYPE = "map[string]interface {}"


def same(a: Any, b: Any) -> bool:
    """Equality of two decoded values as Go compares interfaces: same type, same value."""
    return type(a) is type(b) and bool(a == b)


def no_merge_key(item: dict[str, Any], merge_key: str) -> PatchError:
    return unprocessable(f"map: {go_format(item)} does not contain declared merge key: {merge_key}")


def bad_arg_type(expected: str, actual: Any) -> PatchError:
    return unprocessable(f"expected a {expected}, but received a {go_type_name(actual)}")


def find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise unprocessable(f"value for key {index} is not a map")
        if merge_key in item and same(item[merge_key], value):
            return index
    return -1


def partition_maps(merged: list[Any], partition_by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise bad_arg_type(MAP_TYPE, item)
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
        if find_by_key(partition_by, merge_key, item[merge_key]) >= 0:
            in_patch.append(item)
        else:
            server_only.append(item)
    return in_patch, server_only


def partition_scalars(merged: list[Any], partition_by: list[Any]) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        (in_patch if any(same(item, p) for p in partition_by) else server_only).append(item)
    return in_patch, server_only


def key_of(item: Any, merge_key: str, is_map: bool) -> Any:
    if not is_map:
        return item
    return item.get(merge_key) if isinstance(item, dict) else None


class Positions:
    """First position of each key in a list (upstream's ``index``), looked up by type and value."""

    __slots__ = ("_keys", "_table")

    def __init__(self, order: list[Any], merge_key: str, is_map: bool) -> None:
        self._keys = [key_of(item, merge_key, is_map) for item in order]
        table: dict[tuple[type, Any], int] = {}
        try:
            for index, key in enumerate(self._keys):
                table.setdefault((type(key), key), index)
        except TypeError:
            self._table: dict[tuple[type, Any], int] | None = None
        else:
            self._table = table

    def of(self, key: Any) -> int:
        if self._table is not None:
            try:
                return self._table.get((type(key), key), -1)
            except TypeError:
                pass
        for index, candidate in enumerate(self._keys):
            if same(candidate, key):
                return index
        return -1


def sorted_by(items: list[Any], order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """Stable sort of ``items`` by their position in ``order``; with maps, every element on both
    sides needs the merge key and ``$patch: delete`` elements go last."""
    deleted: list[Any] = []
    if is_map:
        for values in (items, order):
            for value in values:
                if not isinstance(value, dict):
                    raise bad_arg_type(MAP_TYPE, value)
                if merge_key not in value:
                    raise no_merge_key(value, merge_key)
        if any(DIRECTIVE in v for v in items):
            deleted = [v for v in items if same(v.get(DIRECTIVE), DELETE)]
            items = [v for v in items if not same(v.get(DIRECTIVE), DELETE)]
    if len(items) < 2:
        return items + deleted
    positions = Positions(order, merge_key, is_map)
    limit = len(order)

    def rank(item: Any) -> int:
        position = positions.of(key_of(item, merge_key, is_map))
        return position if position >= 0 else limit

    return sorted(items, key=rank) + deleted


def normalize_order(
    in_patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    is_map: bool,
) -> list[Any]:
    in_patch = sorted_by(in_patch, patch_order, merge_key, is_map)
    server_only = sorted_by(server_only, server_order, merge_key, is_map)
    return interleave(server_only, in_patch, server_order, merge_key, is_map)


def interleave(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """Upstream's ``mergeSortedSlice``: take the server-only element first only when both it
    and the next patch element are in the server's list and it came first there."""
    if not left:
        return right
    if not right:
        return left
    positions = Positions(server_order, merge_key, is_map)
    left_at = [positions.of(key_of(item, merge_key, is_map)) for item in left]
    right_at = [positions.of(key_of(item, merge_key, is_map)) for item in right]
    result: list[Any] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if 0 <= left_at[i] < right_at[j]:
            result.append(left[i])
            i += 1
        else:
            result.append(right[j])
            j += 1
    result.extend(left[i:])
    result.extend(right[j:])
    return result
