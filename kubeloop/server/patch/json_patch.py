"""JSON patch (RFC 6902) with the behaviour of the library kube-apiserver uses.

kube-apiserver applies ``application/json-patch+json`` with evanphx/json-patch v4, whose
behaviour differs from a strict RFC 6902 reading in ways clients can observe, so this module
follows the library rather than the RFC (which is why no RFC 6902 package is used):

* ``add`` needs the parent container; it cannot target the root (``""``);
* ``replace`` of a missing object member adds it (arrays still need the index);
* ``copy`` from a missing object member copies ``null``;
* ``test`` of a missing member passes when the expected value is ``null`` or absent, and
  numbers compare by their JSON text (``1`` differs from ``1.0``);
* array indexes accept a sign and negative values count from the end; ``-`` appends (``add``
  only);
* a path without the leading ``/`` addresses the root container by its last segment;
* an ``add`` without ``value`` adds ``null``.

Error texts are the library's; :class:`~kubeloop.server.patch.errors.PatchError` carries them
with the status code kube-apiserver answers (400 undecodable, 413 over 10000 operations, 422 not
applicable).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from kubeloop.server.patch.errors import PatchError, bad_request, unprocessable
from kubeloop.server.patch.values import copy_json, json_kind

MAX_OPERATIONS = 10000
_MISSING = "missing value"
_INVALID_INDEX = "invalid index referenced"
_ATOI = re.compile(r"^[+-]?[0-9]+$")
_INT_MAX = 2**63 - 1


def not_an_object_message(kind: str) -> str:
    """What decoding a patched document that is not an object into a typed object reports."""
    return (
        f"couldn't get version/kind; json parse error: json: cannot unmarshal {kind} into Go value of type "
        'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
    )


Container = dict[str, Any] | list[Any]


class _OpError(Exception):
    """An application failure inside one operation (becomes a 422)."""


def apply_json_patch(doc: dict[str, Any], ops: Any) -> dict[str, Any]:
    """Apply the decoded JSON patch ``ops`` to a copy of ``doc`` and return the copy.

    ``doc`` and ``ops`` are never modified. Raises :class:`PatchError`.
    """
    operations = _decode(ops)
    if len(operations) > MAX_OPERATIONS:
        raise PatchError(
            413, f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(operations)}"
        )
    root: Any = copy_json(doc)
    holder = [root]
    try:
        for op in operations:
            _apply_one(holder, op)
    except _OpError as exc:
        raise unprocessable(str(exc), generic=True) from None
    result = holder[0]
    if not isinstance(result, dict):
        raise PatchError(
            422,
            not_an_object_message(json_kind(result)),
            invalid_patch=orjson.dumps(result).decode(),
        )
    return result


def _decode(ops: Any) -> list[dict[str, Any] | None]:
    if ops is None:
        return []
    if not isinstance(ops, list):
        raise bad_request(f"json: cannot unmarshal {json_kind(ops)} into Go value of type jsonpatch.Patch")
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise bad_request(f"json: cannot unmarshal {json_kind(op)} into Go value of type jsonpatch.Operation")
    return ops


def _apply_one(holder: list[Any], op: dict[str, Any] | None) -> None:
    kind = op.get("op") if op is not None else None
    if not isinstance(kind, str):
        kind = "unknown"
    operation = op or {}
    if kind == "add":
        _add(holder, operation)
    elif kind == "remove":
        _remove(holder, operation)
    elif kind == "replace":
        _replace(holder, operation)
    elif kind == "move":
        _move(holder, operation)
    elif kind == "test":
        _test(holder, operation)
    elif kind == "copy":
        _copy(holder, operation)
    else:
        raise _OpError(f"Unexpected kind: {kind}")


class _FieldError(Exception):
    """A ``path`` / ``from`` member that is absent (or null) or not a string."""


def _string_member(op: dict[str, Any], name: str, missing: str) -> str:
    value = op.get(name)
    if value is None:
        raise _FieldError(missing)
    if not isinstance(value, str):
        raise _FieldError(f"json: cannot unmarshal {json_kind(value)} into Go value of type string")
    return value


def _path(op: dict[str, Any]) -> str:
    return _string_member(op, "path", f"operation missing path field: {_MISSING}")


def _decoded_path(op: dict[str, Any], operation: str, *, with_reason: bool) -> str:
    """The op's ``path``, or the operation's decode error (upstream words it per operation:
    some name the reason, others say only that a value is missing)."""
    try:
        return _path(op)
    except _FieldError as exc:
        detail = str(exc) if with_reason else _MISSING
        raise _OpError(f"{operation} operation failed to decode path: {detail}") from None


def _from(op: dict[str, Any]) -> str:
    return _string_member(op, "from", f"operation, missing from field: {_MISSING}")


def _value(op: dict[str, Any]) -> Any:
    return copy_json(op["value"]) if "value" in op else None


def _decode_key(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _atoi(key: str) -> int:
    if not _ATOI.match(key):
        raise _OpError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    value = int(key)
    if not -_INT_MAX - 1 <= value <= _INT_MAX:
        raise _OpError(f'strconv.Atoi: parsing "{key}": value out of range')
    return value


def _find(holder: list[Any], path: str) -> tuple[Container, str] | None:
    """The container holding the last segment of ``path``, and that segment (decoded)."""
    parts = path.split("/")
    if len(parts) < 2:
        return None
    node: Any = holder[0]
    for part in parts[1:-1]:
        try:
            node = _get(node, _decode_key(part))
        except _OpError:
            return None
        if not isinstance(node, dict | list):
            return None
    return node, _decode_key(parts[-1])


def _get(container: Container, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    index = _atoi(key)
    size = len(container)
    if index < 0:
        if index < -size:
            raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
        index += size
    if index >= size:
        raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
    return container[index]


def _set(container: Container, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    index = _atoi(key)
    if index < 0:
        if index < -len(container):
            raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
        index += len(container)
    container[index] = value


def _insert(container: Container, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _OpError as exc:
        raise _OpError(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(container) + 1
    if index >= size:
        raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
    if index < 0:
        if index < -size:
            raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
        index += size
    container.insert(index, value)


def _delete(container: Container, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: {_MISSING}")
        del container[key]
        return
    index = _atoi(key)
    size = len(container)
    if index >= size:
        raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
    if index < 0:
        if index < -size:
            raise _OpError(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
        index += size
    del container[index]


def _add(holder: list[Any], op: dict[str, Any]) -> None:
    path = _decoded_path(op, "add", with_reason=False)
    found = _find(holder, path)
    if found is None:
        raise _OpError(f'add operation does not apply: doc is missing path: "{path}": {_MISSING}')
    try:
        _insert(*found, _value(op))
    except _OpError as exc:
        raise _OpError(f"error in add for path: '{path}': {exc}") from None


def _remove(holder: list[Any], op: dict[str, Any]) -> None:
    path = _decoded_path(op, "remove", with_reason=False)
    found = _find(holder, path)
    if found is None:
        raise _OpError(f'remove operation does not apply: doc is missing path: "{path}": {_MISSING}')
    try:
        _delete(*found)
    except _OpError as exc:
        raise _OpError(f"error in remove for path: '{path}': {exc}") from None


def _replace(holder: list[Any], op: dict[str, Any]) -> None:
    path = _decoded_path(op, "replace", with_reason=True)
    if path == "":
        value = _value(op)
        if not isinstance(value, dict | list):
            raise _OpError("replace operation value must be object or array: %!w(<nil>)")
        holder[0] = value
        return
    found = _find(holder, path)
    if found is None:
        raise _OpError(f"replace operation does not apply: doc is missing path: {path}: {_MISSING}")
    container, key = found
    try:
        _get(container, key)
    except _OpError:
        raise _OpError(f"replace operation does not apply: doc is missing key: {path}: {_MISSING}") from None
    try:
        _set(container, key, _value(op))
    except _OpError as exc:
        raise _OpError(f"error in remove for path: '{path}': {exc}") from None


def _move(holder: list[Any], op: dict[str, Any]) -> None:
    try:
        source = _from(op)
    except _FieldError as exc:
        raise _OpError(f"move operation failed to decode from: {exc}") from None
    found = _find(holder, source)
    if found is None:
        raise _OpError(f"move operation does not apply: doc is missing from path: {source}: {_MISSING}")
    container, key = found
    try:
        value = _get(container, key)
        _delete(container, key)
    except _OpError as exc:
        raise _OpError(f"error in move for path: '{key}': {exc}") from None
    path = _decoded_path(op, "move", with_reason=True)
    found = _find(holder, path)
    if found is None:
        raise _OpError(f"move operation does not apply: doc is missing destination path: {path}: {_MISSING}")
    try:
        _insert(*found, value)
    except _OpError as exc:
        raise _OpError(f"error in move for path: '{path}': {exc}") from None


def _copy(holder: list[Any], op: dict[str, Any]) -> None:
    try:
        source = _from(op)
    except _FieldError as exc:
        raise _OpError(f"copy operation failed to decode from: {exc}") from None
    found = _find(holder, source)
    if found is None:
        raise _OpError(f"copy operation does not apply: doc is missing from path: {source}: {_MISSING}")
    try:
        value = _get(*found)
    except _OpError as exc:
        raise _OpError(f"error in copy for from: '{source}': {exc}") from None
    path = _decoded_path(op, "copy", with_reason=False)
    target = _find(holder, path)
    if target is None:
        raise _OpError(f"copy operation does not apply: doc is missing destination path: {path}: {_MISSING}")
    try:
        _insert(*target, copy_json(value))
    except _OpError as exc:
        raise _OpError(f"error while adding value during copy: {exc}") from None


def _test(holder: list[Any], op: dict[str, Any]) -> None:
    path = _decoded_path(op, "test", with_reason=True)
    failed = _OpError(f"testing value {path} failed: test failed")
    expected = op.get("value")
    if path == "":
        if "value" not in op or not json_equal(holder[0], expected):
            raise failed
        return
    found = _find(holder, path)
    if found is None:
        raise _OpError(f"test operation does not apply: is missing path: {path}: {_MISSING}")
    try:
        actual = _get(*found)
    except _OpError as exc:
        raise _OpError(f"error in test for path: '{path}': {exc}") from None
    if actual is None:
        if expected is None:
            return
        raise failed
    if "value" not in op or not json_equal(actual, expected):
        raise failed


def json_equal(a: Any, b: Any) -> bool:
    """Structural equality of decoded JSON; scalars compare by their JSON text, so ``1`` and
    ``1.0`` differ and ``true`` never equals ``1``."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b:
                return False
            other = b[key]
            if (value is None) != (other is None):
                return False
            if value is not None and not json_equal(value, other):
                return False
        return True
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(b, dict | list):
        return False
    if isinstance(a, str) or isinstance(b, str):
        return a == b and type(a) is type(b)
    return orjson.dumps(a) == orjson.dumps(b)
