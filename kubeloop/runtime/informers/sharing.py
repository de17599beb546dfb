"""Structural sharing for cached objects: equal parts of different objects become one object.

An informer caches every object it lists or watches as plain dicts. Objects of one collection
are mostly alike (pods of one template carry the same containers, tolerations, volumes' sources,
``managedFields`` entries and condition types; an update changes a few fields of the previous
version), and a freshly decoded dict repeats all of that: 50,000 pods as plain dicts take about
five times their JSON. :class:`SubtreeSharer` rebuilds each incoming object so that every part
equal to the same part of a *reference* object is that reference's own part, not a copy.

The reference is the object's previous cached version when there is one (a watch update or a
relist), otherwise the last object shared (list pages come sorted by namespace and name, so
neighbours are usually siblings of one owner). The walk is top-down and stops at the first equal
subtree, so its Python-level work follows only the parts that differ; equality itself is tested
in C. Leaf strings that differ from the reference go through a bounded table of recent strings
(node names, IPs, timestamps repeat across objects that are not neighbours).

Guarantees (the contract the informer relies on; see tests/unit/informers/test_sharing.py):

- the result is equal to the input *as JSON*: same keys in the same order, same values of the
  same JSON types (``True`` is never replaced by ``1``, nor ``1`` by ``1.0``), so encoding it
  gives the input's bytes;
- neither the input nor the reference is changed; the result's new containers are fresh, its
  shared ones belong to objects already cached, which nobody mutates (cache contract). The
  informer replaces whole objects and never edits one in place, so a shared part never changes
  under another object that holds it.

Python's ``==`` says ``True == 1 == 1.0`` and ignores key order, so a subtree is only reused
when its JSON encoding also matches (a second test in C, run only on subtrees already equal).

Upstream has no such sharing (Go's informers keep the decoded structs); client-go's
``SharedIndexInformer.SetTransform`` (tools/cache/shared_informer.go) is the hook for dropping
fields, which :class:`kubeloop.runtime.informers.informer.SharedIndexInformer` offers separately.
"""

from __future__ import annotations

from typing import Any

import orjson

Obj = dict[str, Any]

_MISSING: Any = object()
_dumps = orjson.dumps


def same_json(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` encode to the same JSON (types and key order included)."""
    if a is b:
        return True
    if a != b:
        return False
    try:
        return _dumps(a) == _dumps(b)
    except (TypeError, orjson.JSONEncodeError):
        return False  # not JSON (a test double's object): never shared


class SubtreeSharer:
    """Rebuilds objects so that parts equal to a reference's are the reference's own.

    ``strings`` bounds the table of recent leaf strings: two generations of at most that many
    entries each (a string seen in the younger generation stays; the older one is dropped when
    the younger fills), so the table never holds more than ``2 * strings`` strings.
    """

    def __init__(self, strings: int = 16384) -> None:
        self._limit = strings
        self._young: dict[str, str] = {}
        self._old: dict[str, str] = {}
        self._last: Obj | None = None

    def share(self, obj: Obj, previous: Obj | None = None) -> Obj:
        """``obj`` rebuilt against ``previous`` (its earlier version) or else the last result."""
        ref = previous if previous is not None else self._last
        out = self._dict(obj, ref) if type(ref) is dict else self._fresh(obj)
        self._last = out
        return out

    # -- the walk -----------------------------------------------------------------------------
    def _string(self, value: str) -> str:
        young = self._young
        found = young.get(value)
        if found is None:
            found = self._old.get(value, value)
            young[value] = found
            if len(young) >= self._limit:
                self._old = young
                self._young = {}
        return found

    def _value(self, value: Any, ref: Any) -> Any:
        kind = type(value)
        if kind is str:
            if value == ref and type(ref) is str:
                return ref
            return self._string(value)
        if kind is dict:
            if type(ref) is dict:
                return ref if same_json(value, ref) else self._dict(value, ref)
            return self._fresh(value)
        if kind is list:
            if type(ref) is list:
                return ref if same_json(value, ref) else self._list(value, ref)
            return self._fresh(value)
        return value  # numbers, booleans, None: small, and many are cached by Python already

    def _dict(self, value: dict[Any, Any], ref: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        get = ref.get
        for key, item in value.items():
            other = get(key, _MISSING)
            if type(item) is str:  # the commonest leaf, handled inline: this loop is the hot path
                if item == other and type(other) is str:
                    out[key] = other
                else:
                    out[key] = self._string(item)
            else:
                out[key] = self._value(item, other)
        return out

    def _list(self, value: list[Any], ref: list[Any]) -> list[Any]:
        # Lists are compared by position: an append or an in-place change keeps the others shared.
        n = len(ref)
        return [self._value(item, ref[i] if i < n else _MISSING) for i, item in enumerate(value)]

    def _fresh(self, value: Any) -> Any:
        """A copy with no reference: only its strings are shared."""
        kind = type(value)
        if kind is str:
            return self._string(value)
        if kind is dict:
            return {key: self._fresh(item) for key, item in value.items()}
        if kind is list:
            return [self._fresh(item) for item in value]
        return value
