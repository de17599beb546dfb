import asyncio
import contextlib
from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.runtime.leaderelection import LeaderElectionConfig, LeaderElector

Obj = dict[str, Any]


class Conflict(Exception):
    pass


class VirtualClock:
    """Monotonic time that only moves when someone sleeps on it (one shared timeline)."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        target = self.t + seconds
        while self.t < target:
            await asyncio.sleep(0)
            # The earliest sleeper advances time; others wait for it.
            self.t = min(target, self.t + 0.05)

    def call_at(self, deadline: float, callback: Any) -> Any:
        raise AssertionError("unused")


class MemoryLease:
    """A Lease 'server': resourceVersion checks on update, like a PUT."""

    def __init__(self) -> None:
        self.obj: Obj | None = None
        self.rv = 0
        self.writes: list[Obj] = []
        self.down = False

    def lock(self, identity: str) -> "MemoryLock":
        return MemoryLock(self, identity)


class MemoryLock:
    def __init__(self, store: MemoryLease, identity: str) -> None:
        self.store = store
        self.identity = identity

    def describe(self) -> str:
        return "ns/lease"

    async def get(self) -> Obj | None:
        if self.store.down:
            raise ConnectionError("down")
        return None if self.store.obj is None else {**self.store.obj}

    async def create(self, spec: Obj) -> Obj:
        if self.store.down:
            raise ConnectionError("down")
        if self.store.obj is not None:
            raise Conflict("exists")
        return self._write(spec)

    async def update(self, lease: Obj, spec: Obj) -> Obj:
        if self.store.down:
            raise ConnectionError("down")
        current = self.store.obj
        if current is None or lease["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
            raise Conflict("stale")
        return self._write(spec)

    def _write(self, spec: Obj) -> Obj:
        self.store.rv += 1
        self.store.obj = {"metadata": {"name": "lease", "resourceVersion": str(self.store.rv)}, "spec": dict(spec)}
        self.store.writes.append(dict(spec))
        return {**self.store.obj}


def wall() -> datetime:
    return datetime(2030, 1, 1, tzinfo=UTC)


def config(**kwargs: Any) -> LeaderElectionConfig:
    return LeaderElectionConfig(**kwargs)


async def test_first_candidate_creates_the_lease() -> None:
    store = MemoryLease()
    elector = LeaderElector(store.lock("a"), config(), clock=VirtualClock(), wall=wall)
    assert await elector.try_acquire_or_renew()
    assert store.obj is not None
    spec = store.obj["spec"]
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15
    assert spec["renewTime"] == "2030-01-01T00:00:00.000000Z"
    assert spec["leaseTransitions"] == 0


async def test_other_candidate_waits_a_full_observed_lease_duration() -> None:
    store = MemoryLease()
    clock = VirtualClock()
    a = LeaderElector(store.lock("a"), config(), clock=clock, wall=wall)
    b = LeaderElector(store.lock("b"), config(), clock=clock, wall=wall)
    assert await a.try_acquire_or_renew()
    clock.t = 100.0  # b's first observation happens now, whatever renewTime says
    assert not await b.try_acquire_or_renew()
    clock.t = 114.9
    assert not await b.try_acquire_or_renew()
    clock.t = 115.1
    assert await b.try_acquire_or_renew()
    assert store.obj is not None and store.obj["spec"]["holderIdentity"] == "b"
    assert store.obj["spec"]["leaseTransitions"] == 1


async def test_renewal_keeps_acquire_time_and_transitions() -> None:
    store = MemoryLease()
    clock = VirtualClock()
    times = iter([datetime(2030, 1, 1, 0, 0, s, tzinfo=UTC) for s in range(10)])
    a = LeaderElector(store.lock("a"), config(), clock=clock, wall=lambda: next(times))
    assert await a.try_acquire_or_renew()
    clock.t = 2
    assert await a.try_acquire_or_renew()
    assert store.obj is not None
    assert store.obj["spec"]["acquireTime"] == "2030-01-01T00:00:00.000000Z"
    assert store.obj["spec"]["renewTime"] == "2030-01-01T00:00:01.000000Z"
    assert len(store.writes) == 2


async def test_hand_over_when_the_leader_dies() -> None:
    store = MemoryLease()
    clock = VirtualClock()
    events: list[str] = []

    async def lead(name: str) -> None:
        events.append(f"start {name}")
        await asyncio.Event().wait()

    def ticking_wall() -> datetime:
        return datetime.fromtimestamp(1_900_000_000 + clock.t, UTC)

    a = LeaderElector(
        store.lock("a"),
        config(release_on_cancel=False, on_started_leading=lambda: lead("a")),
        clock=clock,
        wall=ticking_wall,
    )
    b = LeaderElector(store.lock("b"), config(on_started_leading=lambda: lead("b")), clock=clock, wall=ticking_wall)
    run_a = asyncio.create_task(a.run())
    async with asyncio.timeout(5):
        while "start a" not in events:
            await asyncio.sleep(0)
    run_b = asyncio.create_task(b.run())
    while clock.t < 60:  # a renews (renewTime changes), so b keeps waiting
        await asyncio.sleep(0)
    assert "start b" not in events
    killed_at = clock.t
    run_a.cancel()  # killed: no release
    with contextlib.suppress(asyncio.CancelledError):
        await run_a
    async with asyncio.timeout(5):
        while "start b" not in events:
            await asyncio.sleep(0)
    assert clock.t - killed_at >= 13  # b waited about a lease duration after its last observation
    assert store.obj is not None and store.obj["spec"]["holderIdentity"] == "b"
    run_b.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await run_b
    # b released on cancel: holder cleared, duration 1 s, transitions kept.
    assert store.obj["spec"]["holderIdentity"] == "" and store.obj["spec"]["leaseDurationSeconds"] == 1
    assert store.obj["spec"]["leaseTransitions"] == 1


async def test_leader_steps_down_when_it_cannot_renew() -> None:
    store = MemoryLease()
    clock = VirtualClock()
    stopped: list[bool] = []
    a = LeaderElector(store.lock("a"), config(on_stopped_leading=lambda: stopped.append(True)), clock=clock, wall=wall)
    run = asyncio.create_task(a.run())
    async with asyncio.timeout(5):
        while not a.leading:
            await asyncio.sleep(0)
    store.down = True
    start = clock.t
    async with asyncio.timeout(5):
        await run
    assert stopped == [True]
    assert 10 <= clock.t - start <= 14


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        LeaderElectionConfig(lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError):
        LeaderElectionConfig(renew_deadline=2, retry_period=2)
