"""Predicates: which cache events are worth a reconcile.

A :class:`Predicate` answers per event kind; a watch enqueues only when every predicate it
was given agrees. The update predicates compare the old and new objects (upstream's
``GenerationChangedPredicate`` and friends); they return False when either side is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import annotations_of, labels_of, metadata, resource_version_of

Obj = dict[str, Any]


@dataclass(frozen=True)
class Predicate:
    """Per-event filters; ``None`` lets every event of that kind through."""

    create: Callable[[Obj], bool] | None = None
    update: Callable[[Obj, Obj], bool] | None = None
    delete: Callable[[Obj], bool] | None = None

    def on_create(self, obj: Obj) -> bool:
        return self.create is None or self.create(obj)

    def on_update(self, old: Obj, new: Obj) -> bool:
        return self.update is None or self.update(old, new)

    def on_delete(self, obj: Obj) -> bool:
        return self.delete is None or self.delete(obj)


def from_filter(keep: Callable[[Obj], bool]) -> Predicate:
    """Apply one filter to the object of every event (the new object for updates)."""
    return Predicate(create=keep, update=lambda _old, new: keep(new), delete=keep)


def _changed(read: Callable[[Obj], Any]) -> Callable[[Obj, Obj], bool]:
    def changed(old: Obj, new: Obj) -> bool:
        if not old or not new:
            return False
        return bool(read(old) != read(new))

    return changed


resource_version_changed = Predicate(update=_changed(resource_version_of))
"""Skip resync updates (same resourceVersion)."""

generation_changed = Predicate(update=_changed(lambda o: metadata(o).get("generation")))
"""Skip updates that did not bump ``metadata.generation`` (status-only writes)."""

labels_changed = Predicate(update=_changed(lambda o: dict(labels_of(o))))
annotations_changed = Predicate(update=_changed(lambda o: dict(annotations_of(o))))


def label_selector(matches: Callable[[Mapping[str, str]], bool]) -> Predicate:
    """Keep events whose object's labels satisfy ``matches`` (e.g. ``Selector.matches``)."""
    return from_filter(lambda o: matches(labels_of(o)))


def all_of(*predicates: Predicate) -> Predicate:
    return Predicate(
        create=lambda o: all(p.on_create(o) for p in predicates),
        update=lambda a, b: all(p.on_update(a, b) for p in predicates),
        delete=lambda o: all(p.on_delete(o) for p in predicates),
    )


def any_of(*predicates: Predicate) -> Predicate:
    return Predicate(
        create=lambda o: any(p.on_create(o) for p in predicates),
        update=lambda a, b: any(p.on_update(a, b) for p in predicates),
        delete=lambda o: any(p.on_delete(o) for p in predicates),
    )


def negate(predicate: Predicate) -> Predicate:
    return Predicate(
        create=lambda o: not predicate.on_create(o),
        update=lambda a, b: not predicate.on_update(a, b),
        delete=lambda o: not predicate.on_delete(o),
    )
