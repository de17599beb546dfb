"""A controller: a rate-limited work queue, N workers and a reconcile function.

The reconcile function is a plain async function of a :class:`Request` (``namespace/name``)
that reads current state from caches and acts to move it toward the desired state. It is
level-triggered: it is told *which* object to look at, never *what happened*.

Per request, as controller-runtime does:
- it raises :class:`TerminalError` -> logged, not retried;
- it raises anything else -> retried with the rate limiter's back-off;
- it returns ``Result(requeue_after=s)`` -> back-off forgotten, retried after ``s`` seconds;
- it returns ``Result(requeue=True)`` -> retried with back-off;
- otherwise -> back-off forgotten.
The work queue guarantees that one request is never reconciled by two workers at once, so
``max_concurrent_reconciles`` > 1 is safe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry

from kubeloop.client import ApiException, TransportError
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.handlers import BoundHandler, Handler, Mapper, Request, as_handler, requests_for_object
from kubeloop.runtime.informers.informer import HandlerRegistration, SharedIndexInformer, wait_for_cache_sync
from kubeloop.runtime.metrics import RESULTS, RuntimeMetrics
from kubeloop.runtime.predicates import Predicate
from kubeloop.runtime.workqueue import (
    MetricsProvider,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for next: nothing, a rate-limited retry, or a retry after a delay."""

    requeue: bool = False
    requeue_after: float | None = None


class TerminalError(Exception):
    """A reconcile failure that retrying cannot fix (logged and counted, never requeued)."""


Reconciler = Callable[[Request], Awaitable[Result | None]]


class Controller:
    """Runs ``reconcile`` for requests produced by the watches declared on it."""

    def __init__(
        self,
        name: str,
        reconcile: Reconciler,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        clock: Clock = REAL_CLOCK,
        registry: CollectorRegistry | None = None,
        queue_metrics: MetricsProvider | None = None,
        cache_sync_timeout: float = 120.0,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconcile = reconcile
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.cache_sync_timeout = cache_sync_timeout
        self.queue: RateLimitingQueue[Request] = RateLimitingQueue(
            rate_limiter or default_controller_rate_limiter(), name, clock=clock, metrics_provider=queue_metrics
        )
        self._clock = clock
        self._sources: list[tuple[SharedIndexInformer, HandlerRegistration]] = []
        self._workers: list[asyncio.Task[None]] = []
        self._started = False
        self.reconciles = 0
        metrics = RuntimeMetrics.for_registry(registry if registry is not None else REGISTRY)
        self._total = {r: metrics.reconcile_total.labels(name, r) for r in RESULTS}
        self._errors = metrics.reconcile_errors.labels(name)
        self._terminal = metrics.terminal_errors.labels(name)
        self._time = metrics.reconcile_time.labels(name)
        self._active = metrics.active_workers.labels(name)
        metrics.max_concurrent.labels(name).set(max_concurrent_reconciles)

    # -- wiring ---------------------------------------------------------------------------
    def watch(
        self,
        informer: SharedIndexInformer,
        handler: Handler | Mapper = requests_for_object,
        predicates: Iterable[Predicate] = (),
    ) -> None:
        """Give every event of ``informer`` passing ``predicates`` to ``handler`` with this
        controller's queue (a mapper function enqueues the requests it gives)."""
        bound = BoundHandler(as_handler(handler), self.queue, predicates)
        self._sources.append((informer, informer.add_event_handler(bound)))

    # -- running --------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the sources, wait for their caches (bounded), then start the workers."""
        if self._started:
            raise RuntimeError(f"controller {self.name} was already started")
        self._started = True
        for informer, _ in self._sources:
            await informer.start()
        checks = [informer.has_synced for informer, _ in self._sources]
        checks += [registration.has_synced for _, registration in self._sources]
        try:
            async with asyncio.timeout(self.cache_sync_timeout):
                await wait_for_cache_sync(*checks)
        except TimeoutError as exc:
            raise TimeoutError(f"controller {self.name}: timed out waiting for caches to sync") from exc
        log.info("controller %s: caches synced, starting %d workers", self.name, self.max_concurrent_reconciles)
        loop = asyncio.get_running_loop()
        self._workers = [
            loop.create_task(self._worker(), name=f"{self.name}-worker-{i}")
            for i in range(self.max_concurrent_reconciles)
        ]

    def has_synced(self) -> bool:
        """Started, every watched cache listed, and every handler handed its initial list
        (upstream's ``Kind.WaitForSync`` waits on the registration's ``HasSynced``)."""
        return self._started and all(
            informer.has_synced() and registration.has_synced() for informer, registration in self._sources
        )

    async def stop(self, grace: float | None = None) -> None:
        """Stop taking new work, let in-flight reconciles finish, and wait for the workers.

        With ``grace``, reconciles still running after that many seconds are cancelled (their
        requests are lost with the queue; the next process lists everything again), as
        controller-runtime abandons its runnables after ``GracefulShutdownTimeout``: a reconcile
        retrying against an API server that is down must not hold the process.
        """
        try:
            async with asyncio.timeout(grace):
                await self.queue.shutdown_with_drain()
        except TimeoutError:
            self.queue.shutdown()
            for worker in self._workers:
                worker.cancel()
        if self._workers:
            await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    async def _worker(self) -> None:
        while True:
            result = await self.queue.get()
            if result[1]:
                return
            await self.process(result[0])

    async def process(self, request: Request) -> None:
        """Reconcile one request and record the outcome in the queue and the metrics."""
        started = self._clock.now()
        self._active.inc()
        self.reconciles += 1
        try:
            outcome = await self.reconcile(request)
        except asyncio.CancelledError:
            self.queue.add_rate_limited(request)
            raise
        except TerminalError as exc:
            self._errors.inc()
            self._terminal.inc()
            self._total["error"].inc()
            log.error("controller %s: %s: terminal error: %s", self.name, request, exc)
        except (ApiException, TransportError) as exc:
            # An API answer or a connection failure is expected in a cluster (an object deleted
            # mid-sync, a conflict, a server restarting): one line, as upstream's
            # "error syncing ..., requeuing", not a traceback.
            self._errors.inc()
            self._total["error"].inc()
            log.error("controller %s: error syncing %s, requeuing: %s", self.name, request, exc)
            self.queue.add_rate_limited(request)
        except Exception:
            self._errors.inc()
            self._total["error"].inc()
            log.exception("controller %s: reconcile of %s failed; retrying with back-off", self.name, request)
            self.queue.add_rate_limited(request)
        else:
            if outcome is not None and outcome.requeue_after is not None and outcome.requeue_after > 0:
                self.queue.forget(request)
                self.queue.add_after(request, outcome.requeue_after)
                self._total["requeue_after"].inc()
            elif outcome is not None and outcome.requeue:
                self.queue.add_rate_limited(request)
                self._total["requeue"].inc()
            else:
                self.queue.forget(request)
                self._total["success"].inc()
        finally:
            self.queue.done(request)
            self._active.dec()
            self._time.observe(self._clock.now() - started)
