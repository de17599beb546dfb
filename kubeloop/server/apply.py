"""Server-side apply: field sets, ``managedFields`` bookkeeping, merge and conflicts.

Pure functions on plain JSON objects, following upstream's structured-merge-diff semantics
(restated here, not copied):

* a *field set* holds the paths an object sets. A path is a tuple of elements in the FieldsV1
  spelling: ``f:<field>``, ``k:<json of the key fields>`` (an element of a list that is a map
  keyed by some fields), ``v:<json value>`` (an element of a list that is a set) and ``i:<n>``.
  Maps contribute their fields (an empty map is a leaf), keyed lists contribute each element
  and its fields, set lists each value, and every other list is atomic (one leaf);
* each manager (name, operation, subresource, and for updates the apiVersion) owns a set;
* an **update** gives its manager the fields it added or changed and takes changed and removed
  fields away from everyone else;
* an **apply** merges the configuration into the live object; fields whose value it changes
  and that another manager owns are conflicts (409) unless ``force`` moves them to the applier;
  the applier then owns exactly the configuration's fields, and fields it owned before but no
  longer applies are removed from the object when nobody owns them nor a field below them;
* ``null`` in a configuration removes the field (it is never stored) and the applier owns
  its absence; an applied empty keyed or set list owns nothing.

Which lists are keyed comes from a :class:`Shape`: for built-in kinds the strategic-merge
schema (a ``merge`` list with a merge key is keyed by it, one without a key of scalars is a
set), for custom resources the CRD's ``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.api.status import ApiError, invalid_error, required
from kubeloop.server.fieldsv1 import decode_fields as decode_fields
from kubeloop.server.fieldsv1 import document_of, fields_of
from kubeloop.server.fieldsv1 import encode_fields as encode_fields
from kubeloop.server.patch import FieldMeta, PatchSchema, patch_schema_for
from kubeloop.server.patch.kinds import object_meta_schema
from kubeloop.server.patch.schema import MERGE, NO_META

Obj = dict[str, Any]
Path = tuple[str, ...]
FieldSet = frozenset[Path]

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
MAX_MANAGER_LENGTH = 128

_UNTRACKED_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                       "selfLink", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds")
"""Metadata only the server sets; nobody owns it (upstream strips these before tracking)."""
_UNTRACKED_TOP = ("apiVersion", "kind", "status")
"""Type fields, and ``status``, which main-endpoint writes never change."""


class Shape:
    """How one value's children are tracked; the default shape has open maps and atomic lists."""

    def child(self, name: str) -> Shape:
        """The shape of field ``name`` of a map (or of a keyed list's elements)."""
        return OPEN_SHAPE

    def list_keys(self) -> tuple[str, ...]:
        """The key fields when this value is a list that is a map (empty otherwise)."""
        return ()

    def is_set(self) -> bool:
        """Whether this value is a list of scalars that is a set."""
        return False


OPEN_SHAPE = Shape()


class _PatchShape(Shape):
    """A shape read from a strategic-merge :class:`PatchSchema` field.

    Patch schemas are built once per definition and never change, so there is one shape per
    declared field (:data:`_SHAPES`, bounded by the schemas, however deep a document nests
    recursive types), each keeping its children's shapes by name, and knowing its keys from the
    start: walking a pod then allocates no shapes and reads no strategies. Map keys and unknown
    fields, which could be anything, share :data:`_UNDECLARED` and are not remembered.
    """

    __slots__ = ("_children", "_declared", "_is_set", "_keys", "_meta")

    def __init__(self, meta: FieldMeta) -> None:
        self._meta = meta
        self._declared = meta.schema.fields()
        self._children: dict[str, Shape] = {}
        merging = meta.strategy == MERGE
        self._keys: tuple[str, ...] = (meta.merge_key,) if merging and meta.merge_key else ()
        self._is_set = merging and not meta.merge_key

    def child(self, name: str) -> Shape:
        found = self._children.get(name)
        if found is not None:
            return found
        meta = self._declared.get(name)
        if meta is None or meta is NO_META:
            return _UNDECLARED
        found = _SHAPES.get(id(meta))
        if found is None:
            # The shape holds ``meta``, so the id stays that field's for as long as it is a key.
            found = _SHAPES[id(meta)] = _PatchShape(meta)
        self._children[name] = found
        return found

    def list_keys(self) -> tuple[str, ...]:
        return self._keys

    def is_set(self) -> bool:
        return self._is_set


_SHAPES: dict[int, _PatchShape] = {}
"""The shape of each declared field met so far, by the identity of its (immutable, cached)
:class:`FieldMeta`."""

_UNDECLARED = _PatchShape(NO_META)
"""The shape of every field a patch schema does not declare (open maps, atomic lists)."""


class _SchemaShape(Shape):
    """A shape read from a CRD's structural OpenAPI v3 schema."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema

    def child(self, name: str) -> Shape:
        schema = self._schema
        if schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
            schema = schema["items"]
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and isinstance(properties.get(name), Mapping):
            return _SchemaShape(properties[name])
        extra = schema.get("additionalProperties")
        return _SchemaShape(extra) if isinstance(extra, Mapping) else OPEN_SHAPE

    def list_keys(self) -> tuple[str, ...]:
        keys = self._schema.get("x-kubernetes-list-map-keys")
        if self._schema.get("x-kubernetes-list-type") == "map" and isinstance(keys, list) and keys:
            return tuple(str(k) for k in keys)
        return ()

    def is_set(self) -> bool:
        return self._schema.get("x-kubernetes-list-type") == "set"


@functools.cache
def builtin_shape(group: str, kind: str) -> Shape:
    """The shape of a built-in kind (open maps and atomic lists when it has no patch schema);
    one per kind, so that its children's shapes are built once (see :class:`_PatchShape`)."""
    schema = patch_schema_for(group, kind)
    return _PatchShape(FieldMeta(schema=schema)) if schema is not None else OPEN_SHAPE


class _CustomShape(_SchemaShape):
    """A custom resource's root: its schema, but ``metadata`` is always an ObjectMeta (whose
    ``finalizers`` are a set and ``ownerReferences`` keyed by ``uid``), as upstream, where
    every custom resource's metadata has the ObjectMeta schema whatever the CRD declares."""

    def child(self, name: str) -> Shape:
        if name == "metadata":
            return _PatchShape(FieldMeta(schema=object_meta_schema()))
        return super().child(name)


def schema_shape(schema: Mapping[str, Any] | None) -> Shape:
    """The shape of a custom resource from its version's ``openAPIV3Schema``."""
    return _CustomShape(schema or {})


def patch_shape(schema: PatchSchema) -> Shape:
    """The shape of any strategic-merge schema (used by tests and callers with their own schema)."""
    return _PatchShape(FieldMeta(schema=schema))


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        # Integers beyond 64 bits (YAML allows them); validation rejects them later.
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _key_element(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    return "k:" + _json({k: item[k] for k in keys})


def _keyed(items: list[Any], keys: tuple[str, ...]) -> bool:
    return bool(keys) and all(isinstance(i, dict) and all(k in i for k in keys) for i in items)


def _scalars(items: list[Any]) -> bool:
    return all(not isinstance(i, (dict, list)) for i in items)


_MEMBER = object()
"""The value recorded for a keyed-list element, whose content is compared field by field."""


def _walk(value: Any, shape: Shape, prefix: Path, out: dict[Path, Any], applied: bool = False) -> None:
    # Each type is tested once (most values are scalar leaves, walked on every write).
    if isinstance(value, dict):
        if value:
            for name, child in value.items():
                _walk(child, shape.child(str(name)), (*prefix, f"f:{name}"), out, applied)
            return
    elif isinstance(value, list) and value:
        keys = shape.list_keys()
        if keys and _keyed(value, keys):
            for item in value:
                element = (*prefix, _key_element(item, keys))
                out[element] = _MEMBER
                for name, child in item.items():
                    _walk(child, shape.child(str(name)), (*element, f"f:{name}"), out, applied)
            return
        if shape.is_set() and _scalars(value):
            for item in value:
                out[(*prefix, "v:" + _json(item))] = item
            return
    if applied and value == [] and (shape.list_keys() or shape.is_set()):
        # An applied empty keyed or set list owns nothing (upstream's ToFieldSet visits its
        # items and there are none); an empty map, an empty atomic list and null are leaves.
        return
    if prefix:
        out[prefix] = value


def _tracked(obj: Mapping[str, Any]) -> Obj:
    tracked = {k: v for k, v in obj.items() if k not in _UNTRACKED_TOP}
    meta = tracked.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _UNTRACKED_METADATA}
        if meta:
            tracked["metadata"] = meta
        else:
            tracked.pop("metadata")
    return tracked


def _values(obj: Mapping[str, Any], shape: Shape, applied: bool = False) -> dict[Path, Any]:
    out: dict[Path, Any] = {}
    _walk(_tracked(obj), shape, (), out, applied)
    return out


def field_set(obj: Mapping[str, Any], shape: Shape) -> FieldSet:
    """The paths ``obj`` sets, without the server-owned metadata, type fields and status."""
    return frozenset(_values(obj, shape))


def applied_field_set(config: Mapping[str, Any], shape: Shape) -> FieldSet:
    """The paths an applier of ``config`` owns: :func:`field_set`, where ``null`` is a leaf
    (the applier owns the field's absence) and an empty keyed or set list owns nothing, as
    upstream's ``TypedValue.ToFieldSet``."""
    return frozenset(_values(config, shape, applied=True))


@dataclass(frozen=True)
class Comparison:
    """How an object changed: paths that appeared, disappeared, or kept but changed value."""

    added: FieldSet
    removed: FieldSet
    modified: FieldSet

    @property
    def changed(self) -> FieldSet:
        """What a writer takes from others: added and modified paths."""
        return self.added | self.modified

    def empty(self) -> bool:
        return not (self.added or self.removed or self.modified)


def compare(old: Mapping[str, Any], new: Mapping[str, Any], shape: Shape) -> Comparison:
    """The paths added, removed and modified between ``old`` and ``new``.

    Equal to diffing the two objects' flat path maps, except that a map present on both sides
    is never itself added or removed (``{}`` becoming ``{"k": "v"}`` adds ``k`` and nothing
    else, as upstream's typed compare, which only promotes a map to a leaf when both sides are
    empty). Subtrees that compare equal are skipped without being walked (the paths under a
    value depend on that value alone): a status write or a label change does not walk the
    whole pod spec twice.
    """
    added: set[Path] = set()
    removed: set[Path] = set()
    modified: set[Path] = set()
    _diff(_tracked(old), _tracked(new), shape, (), added, removed, modified)
    return Comparison(frozenset(added), frozenset(removed), frozenset(modified))


def _diff(old: Any, new: Any, shape: Shape, prefix: Path, added: set[Path], removed: set[Path],
          modified: set[Path]) -> None:
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for name, value in old.items():
            child_prefix = (*prefix, f"f:{name}")
            if name in new:
                _diff(value, new[name], shape.child(str(name)), child_prefix, added, removed, modified)
            else:
                gone: dict[Path, Any] = {}
                _walk(value, shape.child(str(name)), child_prefix, gone)
                removed.update(gone)
        for name, value in new.items():
            if name not in old:
                came: dict[Path, Any] = {}
                _walk(value, shape.child(str(name)), (*prefix, f"f:{name}"), came)
                added.update(came)
        return
    if isinstance(old, list) and isinstance(new, list) and _diff_members(old, new, shape, prefix, added, removed,
                                                                         modified):
        return
    before: dict[Path, Any] = {}
    after: dict[Path, Any] = {}
    _walk(old, shape, prefix, before)
    _walk(new, shape, prefix, after)
    modified.update(p for p, v in after.items() if p in before and before[p] != v)
    for lost in before.keys() - after.keys():
        _sort_out(lost, before[lost], after, removed, modified)
    for new_path in after.keys() - before.keys():
        _sort_out(new_path, after[new_path], before, added, modified)


def _members(items: list[Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """A keyed list's items by their path element, or None when it is not keyed or a key repeats."""
    if not items or not _keyed(items, keys):
        return None
    members = {_key_element(item, keys): item for item in items}
    return members if len(members) == len(items) else None


def _diff_members(old: list[Any], new: list[Any], shape: Shape, prefix: Path, added: set[Path],
                  removed: set[Path], modified: set[Path]) -> bool:
    """Diff two keyed lists member by member, as :func:`_diff` does maps (False: not both keyed
    with distinct keys, for the flat comparison to handle).

    The same paths as walking both lists whole: a member on both sides is its element path on
    both (unchanged) and its fields compared as a map (an item always holds its key fields, so
    it is never an empty map); a member on one side only is added or removed with everything
    below it. Members whose items are equal are skipped: an image change in a pod walks one
    container, not every container twice.
    """
    keys = shape.list_keys()
    if not keys:
        return False
    before, after = _members(old, keys), _members(new, keys)
    if before is None or after is None:
        return False
    for element, item in before.items():
        if element in after:
            _diff(item, after[element], shape, (*prefix, element), added, removed, modified)
        else:
            gone: dict[Path, Any] = {}
            _walk([item], shape, prefix, gone)
            removed.update(gone)
    for element, item in after.items():
        if element not in before:
            came: dict[Path, Any] = {}
            _walk([item], shape, prefix, came)
            added.update(came)
    return True


def _sort_out(path: Path, leaf: Any, other: dict[Path, Any], alone: set[Path], modified: set[Path]) -> None:
    """File a leaf that the other side lacks: alone, or modified when the other side holds a
    map or list there instead (upstream compares a scalar against a map as a changed leaf),
    or nowhere when both sides hold a map, or both a list (an empty one is the leaf)."""
    below = [p[len(path)] for p in other if len(p) > len(path) and p[:len(path)] == path]
    if not below:
        alone.add(path)
    elif not ((leaf == {} and below[0].startswith("f:")) or (leaf == [] and below[0].startswith(("k:", "v:")))):
        modified.add(path)


def path_text(path: Path) -> str:
    """A path as upstream prints it: ``.spec.containers[name="app"].image``, ``[="x"]``, ``[0]``."""
    parts: list[str] = []
    for element in path:
        kind, _, body = element.partition(":")
        if kind == "f":
            parts.append("." + body)
        elif kind == "k":
            key = orjson.loads(body)
            parts.append("[" + ",".join(f"{k}={_json(v)}" for k, v in key.items()) + "]")
        elif kind == "v":
            parts.append(f"[={body}]")
        else:
            parts.append(f"[{body}]")
    return "".join(parts)


@dataclass(frozen=True)
class Manager:
    """Who writes: the field manager's name, ``Apply`` or ``Update``, the apiVersion of the
    request and the subresource written (``""`` for the main resource)."""

    name: str
    operation: str
    api_version: str
    subresource: str = ""

    def identity(self) -> tuple[str, str, str, str]:
        # Appliers keep one entry whatever apiVersion they apply with; updaters have one per version.
        return (self.name, self.operation, self.subresource, "" if self.operation == APPLY else self.api_version)

    def described(self) -> str:
        """The manager as conflict messages name it."""
        text = _json(self.name)
        if self.subresource:
            text += f" with subresource {_json(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


@dataclass
class _Owned:
    manager: Manager
    time: str
    fields: FieldSet


def _read_entries(entries: Any) -> list[_Owned]:
    owned: list[_Owned] = []
    if not isinstance(entries, list):
        return owned
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        manager = Manager(str(entry.get("manager") or ""), str(entry.get("operation") or UPDATE),
                          str(entry.get("apiVersion") or ""), str(entry.get("subresource") or ""))
        owned.append(_Owned(manager, str(entry.get("time") or ""), fields_of(entry.get("fieldsV1"))))
    return owned


def _write_entries(owned: list[_Owned]) -> list[Obj]:
    kept = [o for o in owned if o.fields]
    kept.sort(key=lambda o: (o.manager.operation, o.time, o.manager.name, o.manager.api_version,
                             o.manager.subresource))
    entries: list[Obj] = []
    for o in kept:
        entry: Obj = {"manager": o.manager.name, "operation": o.manager.operation,
                      "apiVersion": o.manager.api_version, "time": o.time, "fieldsType": FIELDS_V1,
                      "fieldsV1": document_of(o.fields)}
        if o.manager.subresource:
            entry["subresource"] = o.manager.subresource
        entries.append(entry)
    return entries


def _entry_of(owned: list[_Owned], manager: Manager, now: str) -> _Owned:
    for o in owned:
        if o.manager.identity() == manager.identity():
            return o
    created = _Owned(manager, now, frozenset())
    owned.append(created)
    return created


def managed_fields_of(obj: Mapping[str, Any]) -> list[Any]:
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    return list(entries) if isinstance(entries, list) else []


def record_update(old: Mapping[str, Any] | None, new: Mapping[str, Any], shape: Shape, manager: Manager,
                  now: str, base: list[Any] | None = None) -> list[Obj]:
    """The ``managedFields`` after ``manager`` turned ``old`` (``None`` on create) into ``new``.

    ``base`` is the entries to start from (those of ``old`` when ``None``). An update that
    changes no tracked field returns the entries unchanged, so a no-op stays a no-op.
    """
    start = managed_fields_of(old or {})
    # Most writers send back the entries they read: equal entries are equal ownership.
    if base is not None and base != start and _ownership(base) != _ownership(start):
        # The writer sent other entries: they replace the old ones (as upstream, which compares
        # them decoded, so a client re-serialising timestamps differently changes nothing).
        start = base
    change = compare(old or {}, new, shape)
    if change.empty():
        return [dict(e) for e in start if isinstance(e, Mapping)]
    owned = _read_entries(start)
    taken = change.changed | change.removed
    for o in owned:
        # A set left as it was stays the same object: its hash is kept, and its document is
        # the memo's (kubeloop.server.fieldsv1).
        if o.manager.identity() != manager.identity() and not o.fields.isdisjoint(taken):
            o.fields = o.fields - taken
    mine = _entry_of(owned, manager, now)
    if not (change.changed <= mine.fields and mine.fields.isdisjoint(change.removed)):
        mine.fields = (mine.fields | change.changed) - change.removed
    mine.time = now
    return _write_entries(owned)


def _ownership(entries: list[Any]) -> set[tuple[tuple[str, str, str, str], FieldSet]]:
    return {(o.manager.identity(), o.fields) for o in _read_entries(entries)}


@dataclass(frozen=True)
class Conflict:
    manager: Manager
    path: Path


class ApplyConflicts(Exception):
    """The apply would change fields other managers own; :meth:`api_error` is the 409."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(conflict_message(conflicts))
        self.conflicts = conflicts

    def api_error(self) -> ApiError:
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {c.manager.described()}",
                   "field": path_text(c.path)} for c in self.conflicts]
        return ApiError(409, "Conflict", conflict_message(self.conflicts), {"causes": causes})


def conflict_message(conflicts: list[Conflict]) -> str:
    """Upstream's text: one conflict on one line, several grouped by manager."""
    if len(conflicts) == 1:
        only = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {only.manager.described()}: {path_text(only.path)}"
    by_manager: dict[str, list[str]] = {}
    for c in conflicts:
        by_manager.setdefault(c.manager.described(), []).append(path_text(c.path))
    lines: list[str] = []
    for described in sorted(by_manager):
        lines.append(f"conflicts with {described}:")
        lines += [f"- {p}" for p in by_manager[described]]
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def require_field_manager(field_manager: str | None) -> str:
    """The ``fieldManager`` of an apply request; 422 like upstream's PatchOptions validation."""
    if not field_manager:
        errors = [required("fieldManager", "is required for apply patch")]
        raise invalid_error("PatchOptions", "meta.k8s.io", "", errors)
    return field_manager


def manager_from_user_agent(user_agent: str | None) -> str:
    """The default field manager of updates: the user agent up to its first ``/``."""
    name = (user_agent or "").split("/", 1)[0]
    return name[:MAX_MANAGER_LENGTH]


def _without_nulls(value: Any) -> Any:
    """A copy of a configuration value without its ``null`` map entries (they mean "absent"),
    nor the maps that only held nulls (``{}`` as written stays: it is an owned empty map)."""
    if isinstance(value, dict):
        kept = {k: _without_nulls(v) for k, v in value.items() if v is not None}
        return {k: v for k, v in kept.items() if v != {} or value[k] == {}}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _merge(live: Any, config: Any, shape: Shape) -> Any:
    if isinstance(live, dict) and isinstance(config, dict):
        merged = dict(live)
        for name, value in config.items():
            if value is None:
                merged.pop(name, None)
            elif name in merged:
                merged[name] = _merge(merged[name], value, shape.child(name))
            elif (cleaned := _without_nulls(value)) != {} or value == {}:
                # A new subtree loses its nulls, and is not created when it only held nulls.
                merged[name] = cleaned
        return merged
    if isinstance(live, list) and isinstance(config, list):
        keys = shape.list_keys()
        if _keyed(live, keys) and _keyed(config, keys):
            by_key = {_key_element(item, keys): item for item in live}
            result = [copy.deepcopy(item) for item in live]
            index = {_key_element(item, keys): i for i, item in enumerate(live)}
            for item in config:
                element = _key_element(item, keys)
                if element in by_key:
                    result[index[element]] = _merge(by_key[element], item, shape)
                else:
                    result.append(_without_nulls(item))
            return result
        if shape.is_set() and _scalars(live) and _scalars(config):
            return live + [v for v in config if v not in live]
    return _without_nulls(config)


def _remove(obj: Obj, path: Path) -> None:
    node: Any = obj
    for element in path[:-1]:
        node = _step(node, element)
        if node is None:
            return
    last = path[-1]
    kind, _, body = last.partition(":")
    if kind == "f" and isinstance(node, dict):
        node.pop(body, None)
    elif kind == "k" and isinstance(node, list):
        key = orjson.loads(body)
        node[:] = [i for i in node if not (isinstance(i, dict) and all(i.get(k) == v for k, v in key.items()))]
    elif kind == "v" and isinstance(node, list):
        value = orjson.loads(body)
        node[:] = [i for i in node if i != value]


def _step(node: Any, element: str) -> Any:
    kind, _, body = element.partition(":")
    if kind == "f":
        return node.get(body) if isinstance(node, dict) else None
    if kind == "k" and isinstance(node, list):
        key = orjson.loads(body)
        for item in node:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in key.items()):
                return item
    if kind == "v" and isinstance(node, list):
        value = orjson.loads(body)
        for item in node:
            if item == value:
                return item
    return None


def _lookup(obj: Any, path: Path) -> Any:
    """The value at ``path`` (``None`` when absent: stored objects hold no nulls)."""
    node = obj
    for element in path:
        node = _step(node, element)
        if node is None:
            return None
    return node


def _prune(merged: Obj, stale: Iterable[Path], held: FieldSet) -> None:
    """Remove the ``stale`` paths from ``merged``, keeping every path ``held`` or above one.

    A path above a held one is a map or list whose members someone owns (upstream's
    ``EnsureNamedFieldsAreMembers`` before pruning): removing it would take them along. A map
    or list that a removal leaves empty goes too unless it is held itself (upstream sets it to
    null, which the typed objects drop).
    """
    above = {path[:i] for path in held for i in range(1, len(path))}
    # Shortest first: a list element goes whole, before its key fields could be taken from it.
    for path in sorted(stale, key=len):
        if path in held or path in above:
            continue
        _remove(merged, path)
        for depth in range(len(path) - 1, 0, -1):
            parent = path[:depth]
            if parent in held or _lookup(merged, parent) not in ({}, []):
                break
            _remove(merged, parent)


def apply_configuration(live: Mapping[str, Any] | None, config: Mapping[str, Any], shape: Shape,
                        manager: Manager, now: str, *, force: bool) -> Obj:
    """The object after ``manager`` applies ``config`` to ``live`` (``None``: create).

    Returns a new object with its ``managedFields`` set; raises :class:`ApplyConflicts` when
    the configuration changes fields other managers own and ``force`` is off. As upstream's
    ``merge.Updater.Apply``: merge, prune what the applier owned before and nobody owns now,
    then compare the result with ``live`` for conflicts and ownership.
    """
    before: Obj = copy.deepcopy(dict(live)) if live is not None else {}
    applied = _tracked(config)
    merged: Obj = _merge(before, applied, shape)
    merged["apiVersion"] = config.get("apiVersion", before.get("apiVersion"))
    merged["kind"] = config.get("kind", before.get("kind"))
    owned = _read_entries(managed_fields_of(before))
    mine = _entry_of(owned, manager, now)
    previous = mine.fields
    mine.fields = applied_field_set(applied, shape)
    held = frozenset().union(*(o.fields for o in owned))
    _prune(merged, previous - held, held)
    change = compare(before, merged, shape)
    nulled = {p for p, v in _values(applied, shape, applied=True).items() if v is None}
    conflicts = [Conflict(o.manager, p) for o in owned if o is not mine
                 for p in sorted(o.fields) if _conflicts(p, change, nulled, before, merged)]
    if conflicts and not force:
        raise ApplyConflicts(conflicts)
    for o in owned:
        if o is not mine:
            # Everyone loses what changed or went (upstream takes away added, modified, removed).
            o.fields = frozenset(p for p in o.fields if p not in change.removed
                                 and not _conflicts(p, change, set(), before, merged))
    mine.time = now
    entries = _write_entries(owned)
    old_entries = managed_fields_of(before)
    if change.empty() and _ownership(entries) == _ownership(old_entries):
        # A re-apply that changes nothing keeps the old timestamps, so it stays a no-op (as
        # upstream, which ignores timestamp-only changes of managedFields).
        entries = old_entries
    merged.setdefault("metadata", {})["managedFields"] = entries
    return merged


def _conflicts(path: Path, change: Comparison, nulled: set[Path], before: Obj, merged: Obj) -> bool:
    """Whether applying changes the value at ``path``, which another manager owns.

    As upstream, where conflicts are the owned paths the typed compare of live and applied
    objects reports added or modified: a leaf added or changed, a leaf the configuration
    nulls (compared as a value, it changed), and a map or list appearing where the owner
    holds the field's absence. A leaf that goes because its parent changed type does not
    conflict (the compare reports it removed).
    """
    if path in change.changed:
        return True
    if path in nulled and path in change.removed:
        return True
    return _lookup(before, path) is None and _lookup(merged, path) is not None
