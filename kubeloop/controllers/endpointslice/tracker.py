"""Staleness guard of the EndpointSlice controller, as upstream's ``EndpointSliceTracker``.

A sync plans from the informer cache; right after the controller wrote slices, the cache may
not show them yet, and planning from it would create duplicates or fight its own updates. The
tracker remembers, per Service, the resourceVersion of each slice the controller wrote (and the
slices it deleted); :meth:`SliceTracker.stale` says whether the cache is behind any of them.
A slice deleted by someone else is forgotten (:meth:`SliceTracker.deleted`), so it cannot hold
the Service back forever.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api.meta import name_of, resource_version_of

Lookup = Callable[[str], Mapping[str, Any] | None]
_DELETED = -1


class SliceTracker:
    """Expected slice states per Service key (``namespace/name``)."""

    def __init__(self) -> None:
        self._expected: dict[str, dict[str, int]] = {}

    def wrote(self, service_key: str, slice_: Mapping[str, Any]) -> None:
        rv = resource_version_of(slice_)
        if rv.isdigit():
            self._expected.setdefault(service_key, {})[name_of(slice_)] = int(rv)

    def removed(self, service_key: str, name: str) -> None:
        self._expected.setdefault(service_key, {})[name] = _DELETED

    def deleted(self, service_key: str, name: str) -> None:
        """The cache saw the slice go: nothing more to wait for about it."""
        expected = self._expected.get(service_key)
        if expected is not None:
            expected.pop(name, None)

    def stale(self, service_key: str, lookup: Lookup) -> bool:
        """Whether the cache (``lookup(name)``) is behind a write of the controller; entries the
        cache has caught up with are dropped."""
        expected = self._expected.get(service_key)
        if not expected:
            return False
        behind = False
        for name, rv in list(expected.items()):
            cached = lookup(name)
            if rv == _DELETED:
                caught_up = cached is None
            else:
                cached_rv = resource_version_of(cached) if cached is not None else ""
                caught_up = cached_rv.isdigit() and int(cached_rv) >= rv
            if caught_up:
                del expected[name]
            else:
                behind = True
        return behind

    def forget(self, service_key: str) -> None:
        self._expected.pop(service_key, None)
