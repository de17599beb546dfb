"""The current objects of one resource type, in memory, in key order.

A dict gives O(1) reads by key; a sorted list of the keys gives lists in (namespace, name) order,
the order etcd returns, without sorting on every request, and O(log n) namespace ranges and page
starts. Inserting or removing a key costs O(log n) too (``SortedList`` keeps short sublists).

Keys are strings ``namespace + "\\0" + name`` rather than tuples: a string caches its hash and
compares in C, which makes reads and ordered scans cheaper than with tuple keys, and
since "\\0" sorts before every other character (and never occurs in a namespace or a name, see
``object_key``), string order is exactly (namespace, name) order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from sortedcontainers import SortedList

from kubeloop.server.storage._model import ObjectKey, Page

Predicate = Callable[[dict[str, Any]], bool]
SEPARATOR = "\0"
Entry = list[Any]
"""``[key, object]``: see ``Collection``."""


def flat_key(namespace: str, name: str) -> str:
    return namespace + SEPARATOR + name


def split_key(key: str) -> ObjectKey:
    namespace, _, name = key.partition(SEPARATOR)
    return namespace, name


class Collection:
    """Current objects of one resource type. The dicts it holds belong to the store.

    Each object sits in an entry ``[key, object]`` that is both the value of a dict (reads by
    key) and an element of a sorted list (ordered scans): a list then walks the sorted entries
    without a dict lookup per object, twice as fast at 50,000 objects. Entries compare by key
    first, and keys are unique, so two different objects are never compared.
    """

    __slots__ = ("_entries", "_sorted")

    def __init__(self, objects: Iterable[tuple[ObjectKey, dict[str, Any]]] = ()) -> None:
        """A collection holding ``objects`` (taken over, not copied), sorted once."""
        self._entries: dict[str, Entry] = {flat_key(*key): [flat_key(*key), obj] for key, obj in objects}
        self._sorted = SortedList(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        entry = self._entries.get(namespace + SEPARATOR + name)
        return None if entry is None else entry[1]

    def put(self, namespace: str, name: str, obj: dict[str, Any]) -> None:
        """Insert or replace the object stored under (namespace, name)."""
        key = namespace + SEPARATOR + name
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = [key, obj]
            self._sorted.add(entry)
        else:
            entry[1] = obj

    def remove(self, namespace: str, name: str) -> None:
        self._sorted.remove(self._entries.pop(namespace + SEPARATOR + name))

    def count(self, namespace: str | None) -> int:
        low, high = self._range(namespace)
        return high - low

    def list(
        self,
        namespace: str | None,
        predicate: Predicate | None,
        start_after: ObjectKey | None,
        limit: int | None,
    ) -> Page:
        """See ``Storage.list``; this is its implementation for one collection."""
        low, high = self._range(namespace)
        if start_after is not None:
            # The first key after start_after: appending the smallest character makes a key
            # that sorts after start_after itself and before everything larger.
            low = max(low, self._index(flat_key(*start_after) + "\0"))
        low = min(low, high)
        page_size = limit if limit is not None and limit > 0 else None
        if predicate is None:
            stop = high if page_size is None else min(high, low + page_size)
            items = [entry[1] for entry in self._sorted.islice(low, stop)]
            if stop < high:
                return items, split_key(self._sorted[stop - 1][0]), high - stop
            return items, None, 0
        return self._filtered(self._sorted.islice(low, high), predicate, page_size)

    def _filtered(self, entries: Iterator[Entry], predicate: Predicate, limit: int | None) -> Page:
        matching = (entry for entry in entries if predicate(entry[1]))
        page = list(islice(matching, limit))
        items = [entry[1] for entry in page]
        # Another match beyond the page is what makes a continuation worth offering.
        if limit is not None and len(page) == limit and next(matching, None) is not None:
            return items, split_key(page[-1][0]), -1
        return items, None, -1

    def _range(self, namespace: str | None) -> tuple[int, int]:
        """Index range of the keys in ``namespace`` (all keys when None).

        ``namespace + "\\0"`` sorts before every key of the namespace, and ``namespace + "\\1"``
        after all of them and before any other namespace's keys.
        """
        if namespace is None:
            return 0, len(self._sorted)
        return self._index(namespace + SEPARATOR), self._index(namespace + "\1")

    def _index(self, key: str) -> int:
        """Index of the first entry whose key is not smaller than ``key``."""
        # A one-element probe sorts before any entry with an equal key, after any smaller one.
        return int(self._sorted.bisect_left([key]))

    def objects(self) -> Iterator[dict[str, Any]]:
        """Every object, in no particular order."""
        return (entry[1] for entry in self._entries.values())
