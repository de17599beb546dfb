"""The informer's local cache: a key -> object map with secondary indexes.

A port of client-go's ``ThreadSafeStore``/``Indexer`` for one event loop (no locks needed).
Keys are ``namespace/name`` (``name`` for cluster-scoped objects). An *index function* maps
an object to the list of values it is indexed under; ``by_index(name, value)`` returns every
object indexed under that value. The namespace index is always present.

Objects held here are shared with every reader: callers must treat them as read-only and copy
before changing anything (the cache-mutation detector catches offenders in tests).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import namespace_of, object_key

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], list[str]]

NAMESPACE_INDEX = "namespace"


def namespace_index_func(obj: Obj) -> list[str]:
    """Index objects by namespace (``""`` for cluster-scoped ones)."""
    return [namespace_of(obj)]


_NO_KEYS: frozenset[str] = frozenset()

ChangeListener = Callable[[str, "Obj | None", "Obj | None"], None]
"""``listener(key, old, new)``: see :meth:`Indexer.add_change_listener`."""


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A tombstone: the object was deleted while the watch was down; ``obj`` is its last known state."""

    key: str
    obj: Obj | None


def key_of(obj: Obj | DeletedFinalStateUnknown) -> str:
    """The cache key of an object or of a tombstone."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return object_key(obj)


class Indexer:
    """Objects by key plus ``{index name: {value: set of keys}}`` kept current on every change."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index_func}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        self._listeners: builtins.list[ChangeListener] = []
        self.epoch = 0
        """Bumped by :meth:`replace`, which changes everything at once without telling listeners."""
        if indexers:
            self.add_indexers(indexers)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions; existing objects are indexed at once. Names must be new."""
        for name in indexers:
            if name in self._indexers:
                raise ValueError(f"indexer conflict: {name}")
        for name, func in indexers.items():
            self._indexers[name] = func
            index: dict[str, set[str]] = {}
            self._indices[name] = index
            for key, obj in self._items.items():
                for value in func(obj):
                    index.setdefault(value, set()).add(key)

    def indexer_names(self) -> builtins.list[str]:
        return list(self._indexers)

    def add_change_listener(self, listener: ChangeListener) -> None:
        """Call ``listener(key, old, new)`` synchronously on every upsert and delete, after the
        indices are updated (``old``/``new`` ``None`` for an addition/removal).

        Unlike event handlers, which run later and may lag behind the store, a listener sees
        each change as it is made, so state derived from it never disagrees with the store.
        Listeners must be quick and must not change the store; :meth:`replace` bumps
        :attr:`epoch` instead of calling them.
        """
        self._listeners.append(listener)

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, obj: Obj, key: str | None = None) -> Obj | None:
        """Add or replace the object under its key (``key``, when the caller has it already,
        must be ``object_key(obj)``); returns the previous object, if any."""
        if key is None:
            key = object_key(obj)
        old = self._items.get(key)
        self._items[key] = obj
        self._reindex(key, old, obj)
        for listener in self._listeners:
            listener(key, old, obj)
        return old

    def delete(self, key: str) -> Obj | None:
        """Remove the object with this key; returns it (``None`` if it was not cached)."""
        old = self._items.pop(key, None)
        if old is not None:
            self._reindex(key, old, None)
            for listener in self._listeners:
                listener(key, old, None)
        return old

    def replace(self, objects: Iterable[Obj]) -> None:
        """Replace the whole content (used by tests and by relists that bypass handlers)."""
        self._items = {object_key(o): o for o in objects}
        self._indices = {name: {} for name in self._indexers}
        self.epoch += 1
        for key, obj in self._items.items():
            self._reindex(key, None, obj)

    def _reindex(self, key: str, old: Obj | None, new: Obj | None) -> None:
        for name, func in self._indexers.items():
            old_values = func(old) if old is not None else []
            new_values = func(new) if new is not None else []
            if old_values == new_values:
                continue
            index = self._indices[name]
            for value in old_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values:
                index.setdefault(value, set()).add(key)

    # -- reads ----------------------------------------------------------------------------
    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def keys(self) -> builtins.list[str]:
        return list(self._items)

    def list(self) -> builtins.list[Obj]:
        return list(self._items.values())

    def items(self) -> builtins.list[tuple[str, Obj]]:
        return list(self._items.items())

    def index_count(self, index_name: str, value: str) -> int:
        """How many objects are indexed under ``value`` (O(1), no list built)."""
        return len(self._index(index_name).get(value, ()))

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        index = self._index(index_name)
        return sorted(index.get(value, ()))

    def index_key_view(self, index_name: str, value: str) -> AbstractSet[str]:
        """The keys indexed under ``value``: a live, read-only view, in no particular order.

        For synchronous passes over many objects (no list built, no sort); the view changes
        with the store, so do not keep it across an ``await``. Read objects with :meth:`get`.
        """
        return self._index(index_name).get(value, _NO_KEYS)

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        """Objects indexed under ``value`` by the named index (in key order)."""
        return [self._items[k] for k in self.index_keys(index_name, value)]

    def index(self, index_name: str, obj: Obj) -> builtins.list[Obj]:
        """Objects sharing any index value with ``obj`` under the named index."""
        func = self._indexers.get(index_name)
        if func is None:
            raise KeyError(f"index with name {index_name} does not exist")
        keys: set[str] = set()
        for value in func(obj):
            keys |= self._indices[index_name].get(value, set())
        return [self._items[k] for k in sorted(keys)]

    def list_index_values(self, index_name: str) -> builtins.list[str]:
        return sorted(self._index(index_name))

    def by_namespace(self, namespace: str) -> builtins.list[Obj]:
        return self.by_index(NAMESPACE_INDEX, namespace)

    def _index(self, index_name: str) -> dict[str, set[str]]:
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(f"index with name {index_name} does not exist")
        return index
