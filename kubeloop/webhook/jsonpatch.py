"""An RFC 6902 JSON Patch that turns one JSON document into another.

A mutating webhook answers with the difference between the object it was sent and the object it
wants (controller-runtime's ``PatchResponseFromRaw``, which diffs with gomodules.xyz/jsonpatch's
``CreatePatch``). Contract: ``apply(doc, create_patch(doc, wanted)) == wanted`` for any two JSON
documents whose roots are objects. The operations need not be upstream's byte for byte (no client
compares them), only correct and small: objects are diffed member by member, lists of equal
length element by element, a list that only grows gets ``add`` operations, and any other list
change replaces the whole list.
"""

from __future__ import annotations

from typing import Any

Operation = dict[str, Any]


def _escape(key: str) -> str:
    """A JSON Pointer reference token (RFC 6901): ``~`` then ``/`` escaped."""
    return key.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``, and ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _diff(before: Any, after: Any, path: str, ops: list[Operation]) -> None:
    if _same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in after.items():
            if key in before:
                _diff(before[key], value, f"{path}/{_escape(key)}", ops)
            else:
                ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})
        return
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after):
            for position, (a, b) in enumerate(zip(before, after, strict=True)):
                _diff(a, b, f"{path}/{position}", ops)
            return
        if len(after) > len(before) and all(_same(a, b) for a, b in zip(before, after, strict=False)):
            for position in range(len(before), len(after)):
                ops.append({"op": "add", "path": f"{path}/{position}", "value": after[position]})
            return
    ops.append({"op": "replace", "path": path, "value": after})


def create_patch(before: dict[str, Any], after: dict[str, Any]) -> list[Operation]:
    """The operations that turn ``before`` into ``after`` (empty when they are equal)."""
    ops: list[Operation] = []
    _diff(before, after, "", ops)
    return ops
