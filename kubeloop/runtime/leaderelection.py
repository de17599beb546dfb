"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's algorithm.

Candidates race to write their identity into one Lease. The holder renews it every
``retry_period``; if it cannot renew within ``renew_deadline`` it stops leading. Another
candidate takes over only after it has *observed* the lease unchanged for
``leaseDurationSeconds`` by its own monotonic clock: the ``renewTime`` written in the object
is never compared with local time, so clock skew between machines does not matter.

The lock is a small protocol (get / create / update of the Lease object) so the algorithm is
tested without a server; :class:`ClientLeaseLock` implements it over ``kubeloop.client``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson

from kubeloop.api.meta import format_micro_time, now
from kubeloop.client import LEASES, ApiClient, NotFound
from kubeloop.runtime.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

Obj = dict[str, Any]
JITTER_FACTOR = 1.2


class LeaseLock(Protocol):
    """Reads and writes one Lease object. ``update`` must fail on a stale resourceVersion."""

    identity: str

    async def get(self) -> Obj | None:
        """The Lease, or None if it does not exist."""

    async def create(self, spec: Obj) -> Obj:
        """Create the Lease with this spec (fails if it exists)."""

    async def update(self, lease: Obj, spec: Obj) -> Obj:
        """Write ``spec`` into ``lease`` (a PUT carrying the lease's resourceVersion)."""

    def describe(self) -> str: ...


@dataclass
class LeaderElectionConfig:
    """Timing and callbacks of one elector (client-go's and controller-runtime's defaults)."""

    lease_duration: float = 15.0
    """Seconds a non-leader waits, after it last saw the lease change, before taking it."""
    renew_deadline: float = 10.0
    """Seconds the leader keeps retrying a failed renewal before it gives up leading."""
    retry_period: float = 2.0
    """Seconds between two attempts to acquire or renew."""
    release_on_cancel: bool = True
    """On shutdown, hand the lease back (holder cleared, duration 1 s) so a successor need not wait."""
    on_started_leading: Callable[[], Coroutine[Any, Any, None]] | None = None
    """Run (as a task) once leadership is acquired; cancelled when it is lost."""
    on_stopped_leading: Callable[[], None] | None = None
    """Called whenever the elector stops, leader or not."""
    on_new_leader: Callable[[str], None] | None = None
    """Called when the observed holder changes (including to ourselves)."""
    name: str = ""
    """Label for logs and metrics."""

    def __post_init__(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renew_deadline must be greater than retry_period*JITTER_FACTOR")
        if min(self.lease_duration, self.renew_deadline, self.retry_period) <= 0:
            raise ValueError("lease_duration, renew_deadline and retry_period must be positive")


@dataclass
class _Observation:
    record: Obj = field(default_factory=dict)
    raw: bytes = b""
    time: float = float("-inf")
    lease: Obj | None = None


class LeaderElector:
    """One candidate. ``await run()`` returns when leadership is lost or the task is cancelled."""

    def __init__(
        self,
        lock: LeaseLock,
        config: LeaderElectionConfig,
        *,
        clock: Clock = REAL_CLOCK,
        wall: Callable[[], datetime] = now,
        rng: random.Random | None = None,
    ) -> None:
        self.lock = lock
        self.config = config
        self._clock = clock
        self._wall = wall
        self._rng = rng or random.Random()
        self._observed = _Observation()
        self._reported_leader = ""
        self.leading = False

    @property
    def identity(self) -> str:
        return self.lock.identity

    def observed_leader(self) -> str:
        return str(self._observed.record.get("holderIdentity") or "")

    def is_leader(self) -> bool:
        return self.observed_leader() == self.identity

    async def run(self) -> None:
        task: asyncio.Task[None] | None = None
        try:
            await self._acquire()
            self.leading = True
            log.info("%s: %s became leader", self.lock.describe(), self.identity)
            if self.config.on_started_leading is not None:
                task = asyncio.get_running_loop().create_task(self.config.on_started_leading())
            await self._renew()
            log.info("%s: %s stopped leading", self.lock.describe(), self.identity)
        finally:
            self.leading = False
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if self.config.release_on_cancel and self.is_leader():
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.release())
            if self.config.on_stopped_leading is not None:
                self.config.on_stopped_leading()

    async def _acquire(self) -> None:
        while not await self.try_acquire_or_renew():
            await self._clock.sleep(self.config.retry_period * (1 + (JITTER_FACTOR - 1) * self._rng.random()))

    async def _renew(self) -> None:
        while True:
            await self._clock.sleep(self.config.retry_period)
            deadline = self._clock.now() + self.config.renew_deadline
            while not await self.try_acquire_or_renew():
                if self._clock.now() + self.config.retry_period > deadline:
                    return
                await self._clock.sleep(self.config.retry_period)

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards."""
        moment = format_micro_time(self._wall())
        desired: Obj = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": moment,
            "renewTime": moment,
            "leaseTransitions": 0,
        }
        observed = self._observed
        now_mono = self._clock.now()
        # Fast path: we lead and our own last write is still valid.
        if self.is_leader() and observed.lease is not None and self._valid(now_mono):
            desired["acquireTime"] = observed.record.get("acquireTime", moment)
            desired["leaseTransitions"] = observed.record.get("leaseTransitions", 0)
            try:
                written = await self.lock.update(observed.lease, desired)
            except Exception as exc:
                log.debug("%s: fast renew failed: %s", self.lock.describe(), exc)
            else:
                self._observe(written, desired, now_mono)
                return True
        try:
            lease = await self.lock.get()
        except Exception as exc:
            log.warning("%s: cannot read lease: %s", self.lock.describe(), exc)
            return False
        if lease is None:
            try:
                created = await self.lock.create(desired)
            except Exception as exc:
                log.debug("%s: cannot create lease: %s", self.lock.describe(), exc)
                return False
            self._observe(created, desired, self._clock.now())
            return True
        record = dict(lease.get("spec") or {})
        raw = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
        if raw != observed.raw:
            self._observe(lease, record, self._clock.now())
        else:
            observed.lease = lease
        holder = str(record.get("holderIdentity") or "")
        duration = float(record.get("leaseDurationSeconds") or 0)
        if holder and holder != self.identity and self._observed.time + duration > self._clock.now():
            return False
        if holder == self.identity:
            desired["acquireTime"] = record.get("acquireTime", moment)
            desired["leaseTransitions"] = record.get("leaseTransitions", 0)
        else:
            desired["leaseTransitions"] = int(record.get("leaseTransitions") or 0) + 1
        try:
            written = await self.lock.update(lease, desired)
        except Exception as exc:
            log.debug("%s: cannot take lease: %s", self.lock.describe(), exc)
            return False
        self._observe(written, desired, self._clock.now())
        return True

    async def release(self) -> None:
        """Give the lease up: empty holder, 1 s duration, transitions kept."""
        lease = self._observed.lease
        if lease is None:
            return
        record = {
            "leaseDurationSeconds": 1,
            "leaseTransitions": self._observed.record.get("leaseTransitions", 0),
            "renewTime": format_micro_time(self._wall()),
            "acquireTime": format_micro_time(self._wall()),
            "holderIdentity": "",
        }
        written = await self.lock.update(lease, record)
        self._observe(written, record, self._clock.now())

    def _valid(self, now_mono: float) -> bool:
        duration = float(self._observed.record.get("leaseDurationSeconds") or 0)
        return self._observed.time + duration > now_mono

    def _observe(self, lease: Obj, record: Obj, at: float) -> None:
        self._observed = _Observation(dict(record), orjson.dumps(record, option=orjson.OPT_SORT_KEYS), at, lease)
        holder = str(record.get("holderIdentity") or "")
        if holder != self._reported_leader:
            self._reported_leader = holder
            if holder and self.config.on_new_leader is not None:
                self.config.on_new_leader(holder)


class ClientLeaseLock:
    """A :class:`LeaseLock` on ``coordination.k8s.io/v1`` Leases through ``kubeloop.client``."""

    def __init__(self, client: ApiClient, namespace: str, name: str, identity: str) -> None:
        self._client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> Obj | None:
        try:
            lease: Obj = await self._client.get(LEASES, self.name, namespace=self.namespace)
        except NotFound:
            return None
        return lease

    async def create(self, spec: Obj) -> Obj:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }
        created: Obj = await self._client.create(LEASES, body, namespace=self.namespace)
        return created

    async def update(self, lease: Obj, spec: Obj) -> Obj:
        body = {**lease, "spec": spec}
        updated: Obj = await self._client.update(LEASES, body, namespace=self.namespace)
        return updated
