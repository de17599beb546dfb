"""Expectations: what a controller is waiting to see in its cache before acting again.

A controller that creates five pods must not create five more on its next sync just because
its informer has not delivered the first five yet. It records what it expects, the informer
handlers lower the count as the objects arrive, and the sync acts only when the expectations
are met (or have expired: five minutes, after which the controller trusts its cache again).

Four flavours, as upstream:
- :class:`ControllerExpectations`: counts of creations and deletions per controller key.
- :class:`UIDTrackingControllerExpectations`: also remembers *which* objects it expects to see
  deleted, so a graceful deletion seen twice (update with deletionTimestamp, then the delete)
  counts once.
- :class:`ScaleExpectations` (CloneSet): sets of object names per action, satisfied when all
  sets are empty.
- :class:`ResourceVersionExpectations` (CloneSet): after a write, the cache must show at least
  the written resourceVersion of that object.

All are plain bookkeeping with an injectable clock; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubeloop.runtime.clock import REAL_CLOCK, MonotonicTime

EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class ControlleeExpectations:
    """Outstanding creations (``add``) and deletions (``delete``) for one controller."""

    add: int
    delete: int
    timestamp: float

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Counts of expected creations and deletions, keyed by controller key (``ns/name``)."""

    def __init__(self, clock: MonotonicTime = REAL_CLOCK, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._records: dict[str, ControlleeExpectations] = {}

    def get(self, key: str) -> ControlleeExpectations | None:
        return self._records.get(key)

    def satisfied(self, key: str) -> bool:
        """True when nothing is pending for ``key``: no record, all observed, or expired."""
        record = self._records.get(key)
        if record is None or record.fulfilled():
            return True
        return self._clock.now() - record.timestamp > self._timeout

    def set_expectations(self, key: str, add: int, delete: int) -> None:
        """Replace the record for ``key`` with fresh counts (timestamp now)."""
        self._records[key] = ControlleeExpectations(add, delete, self._clock.now())

    def expect_creations(self, key: str, count: int) -> None:
        self.set_expectations(key, count, 0)

    def expect_deletions(self, key: str, count: int) -> None:
        self.set_expectations(key, 0, count)

    def lower(self, key: str, add: int, delete: int) -> None:
        """Lower the counts; does nothing when no record exists."""
        record = self._records.get(key)
        if record is not None:
            record.add -= add
            record.delete -= delete

    def raise_expectations(self, key: str, add: int, delete: int) -> None:
        """Raise the counts; does nothing when no record exists."""
        record = self._records.get(key)
        if record is not None:
            record.add += add
            record.delete += delete

    def creation_observed(self, key: str) -> None:
        self.lower(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        self.lower(key, 0, 1)

    def delete_expectations(self, key: str) -> None:
        self._records.pop(key, None)


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Controller expectations that track the keys of the objects expected to be deleted."""

    def __init__(self, clock: MonotonicTime = REAL_CLOCK, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        super().__init__(clock, timeout)
        self._deleting: dict[str, set[str]] = {}

    def expected_deletion_keys(self, key: str) -> set[str]:
        return set(self._deleting.get(key, ()))

    def expect_deletions_of(self, key: str, object_keys: Iterable[str]) -> None:
        """Expect these objects (``ns/name`` keys) to be deleted; replaces any earlier set."""
        keys = set(object_keys)
        self._deleting[key] = keys
        self.expect_deletions(key, len(keys))

    def deletion_observed_of(self, key: str, object_key: str) -> None:
        """Count the deletion only if this object was expected (and only once)."""
        keys = self._deleting.get(key)
        if keys is not None and object_key in keys:
            keys.discard(object_key)
            self.deletion_observed(key)

    def delete_expectations(self, key: str) -> None:
        super().delete_expectations(key)
        self._deleting.pop(key, None)


CREATE = "create"
DELETE = "delete"


@dataclass
class _ScaleRecord:
    names: dict[str, set[str]] = field(default_factory=lambda: {CREATE: set(), DELETE: set()})
    unsatisfied_since: float | None = None


class ScaleExpectations:
    """Per controller key, the names of objects whose creation or deletion is not yet seen."""

    def __init__(self, clock: MonotonicTime = REAL_CLOCK) -> None:
        self._clock = clock
        self._records: dict[str, _ScaleRecord] = {}

    def expect(self, key: str, action: str, name: str) -> None:
        self._records.setdefault(key, _ScaleRecord()).names[action].add(name)

    def observe(self, key: str, action: str, name: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.names[action].discard(name)

    def satisfied(self, key: str) -> tuple[bool, float, dict[str, list[str]]]:
        """``(satisfied, seconds unsatisfied, pending names by action)``.

        The unsatisfied duration counts from the first check that found something pending,
        as upstream does, so a caller can give up waiting after a while.
        """
        record = self._records.get(key)
        if record is None or not any(record.names.values()):
            if record is not None:
                record.unsatisfied_since = None
            return True, 0.0, {}
        now = self._clock.now()
        if record.unsatisfied_since is None:
            record.unsatisfied_since = now
        pending = {action: sorted(names) for action, names in record.names.items() if names}
        return False, now - record.unsatisfied_since, pending

    def delete(self, key: str) -> None:
        self._records.pop(key, None)


class ResourceVersionExpectations:
    """After writing an object, wait until the cache shows at least the written version."""

    def __init__(self) -> None:
        self._expected: dict[str, int] = {}

    def expect(self, uid: str, resource_version: str) -> None:
        try:
            version = int(resource_version)
        except ValueError:
            return
        if version > self._expected.get(uid, -1):
            self._expected[uid] = version

    def observe(self, uid: str, resource_version: str) -> None:
        """Clear the expectation once the cache holds the version (or an unparsable one)."""
        expected = self._expected.get(uid)
        if expected is None:
            return
        try:
            if int(resource_version) < expected:
                return
        except ValueError:
            pass
        del self._expected[uid]

    def satisfied(self, uid: str, resource_version: str) -> bool:
        self.observe(uid, resource_version)
        return uid not in self._expected

    def pending(self) -> list[str]:
        """UIDs with an expectation not yet observed (a snapshot)."""
        return list(self._expected)

    def delete(self, uid: str) -> None:
        self._expected.pop(uid, None)
