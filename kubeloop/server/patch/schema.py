"""Strategic-merge metadata: which fields merge, on which key, and the types below them.

Upstream reads ``patchStrategy`` / ``patchMergeKey`` from the Go struct tags of the typed
object. Here a :class:`PatchSchema` describes one object type by the fields that carry
metadata or lead to fields that do; every other field has no strategy (maps merge, lists and
scalars are replaced), which is what the tags say for them too.

Upstream fails on a field its struct does not declare when both sides hold an object or a
list there (an internal error, HTTP 500); this schema has no such list of known fields, so
unknown fields simply merge without strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MERGE = "merge"
REPLACE = "replace"
RETAIN_KEYS = "retainKeys"


class PatchSchema:
    """The strategic-merge metadata of one object type (``name`` is used in error texts)."""

    __slots__ = ("_fields", "name")

    def __init__(self, fields: Mapping[str, FieldMeta] | None = None, name: str = "struct") -> None:
        self._fields: dict[str, FieldMeta] = dict(fields or {})
        self.name = name

    def lookup(self, key: str) -> FieldMeta:
        """The metadata of field ``key`` (no strategy and an open schema when undeclared)."""
        return self._fields.get(key, NO_META)

    def fields(self) -> Mapping[str, FieldMeta]:
        return self._fields

    def fields_mut(self) -> dict[str, FieldMeta]:
        """The field table itself, for builders that fill a schema after creating it (recursion)."""
        return self._fields

    def extended(self, fields: Mapping[str, FieldMeta]) -> PatchSchema:
        """A copy with ``fields`` added or overriding, e.g. a kind's ``spec`` on top of metadata."""
        return PatchSchema({**self._fields, **fields}, self.name)

    def __repr__(self) -> str:
        return f"PatchSchema({sorted(self._fields)})"


_OPEN_SCHEMA = PatchSchema(name="struct")


@dataclass(frozen=True, slots=True)
class FieldMeta:
    """One field's tags: ``strategies`` (``merge``, ``retainKeys``, ``replace``; at most two,
    as in ``merge,retainKeys``), the ``merge_key`` of a list of objects, and ``schema``, the
    type of the value (for a list, of its elements)."""

    strategies: tuple[str, ...] = ()
    merge_key: str = ""
    schema: PatchSchema = field(default_factory=lambda: _OPEN_SCHEMA)

    @property
    def strategy(self) -> str:
        """The strategy other than ``retainKeys`` (``""`` when none), as upstream extracts it."""
        others = [s for s in self.strategies if s != RETAIN_KEYS]
        return others[0] if others else ""

    @property
    def retains_keys(self) -> bool:
        return RETAIN_KEYS in self.strategies


OPEN = _OPEN_SCHEMA
NO_META = FieldMeta()


def obj(**fields: FieldMeta) -> PatchSchema:
    """A schema from keyword fields (field names that are Python keywords use :func:`PatchSchema`)."""
    return PatchSchema(fields)


def nested(schema: PatchSchema) -> FieldMeta:
    """A field without strategy that leads to an object type with metadata of its own."""
    return FieldMeta(schema=schema)


def merge_list(merge_key: str = "", schema: PatchSchema = OPEN, *, retain_keys: bool = False) -> FieldMeta:
    """A list with ``patchStrategy: merge`` (``merge,retainKeys`` with ``retain_keys``)."""
    strategies = (MERGE, RETAIN_KEYS) if retain_keys else (MERGE,)
    return FieldMeta(strategies, merge_key, schema)


def retain_keys(schema: PatchSchema = OPEN) -> FieldMeta:
    """A map with ``patchStrategy: retainKeys`` (e.g. Deployment ``spec.strategy``)."""
    return FieldMeta((RETAIN_KEYS,), "", schema)
