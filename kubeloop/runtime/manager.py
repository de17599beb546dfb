"""The manager: runs many controllers over one shared informer factory.

It owns what controllers share: the client, the informer factory (one cache per collection),
the event recorders, the metrics registry, the health/metrics HTTP server and, optionally,
leader election. Controllers are declared with :meth:`Manager.controller`, a builder in
controller-runtime's spirit::

    await (mgr.controller("replicaset")
           .for_(REPLICA_SETS)
           .owns(PODS)
           .watches(NODES, Funcs(update=on_node_update))
           .with_options(max_concurrent_reconciles=5)
           .complete(reconcile))

``watches`` takes a mapper function or a :class:`~kubeloop.runtime.handlers.Handler` (such as
:class:`~kubeloop.runtime.handlers.Funcs`) that is given each event with the controller's queue;
every watch counts in the controller's cache-sync checks.

``/readyz`` answers 200 only once every controller's caches have synced. Stopping drains
in-flight reconciles before the caches go away.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from kubeloop.client import ApiClient, Resource
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.controller import Controller, Reconciler
from kubeloop.runtime.events import ClientEventSink, EventRecorder
from kubeloop.runtime.handlers import Handler, Mapper, requests_for_object, requests_for_owner
from kubeloop.runtime.health import HealthServer
from kubeloop.runtime.informers.factory import SharedInformerFactory
from kubeloop.runtime.leaderelection import ClientLeaseLock, LeaderElectionConfig, LeaderElector
from kubeloop.runtime.predicates import Predicate
from kubeloop.runtime.workqueue import PrometheusMetricsProvider, RateLimiter

log = logging.getLogger(__name__)

Runnable = Callable[[], Coroutine[Any, Any, None]]


_CANCEL_ROUNDS = 5
_CANCEL_ROUND_SECONDS = 0.1
"""After the shutdown deadline, runnables still running are cancelled again, this often, this far apart."""


@dataclass
class ManagerOptions:
    """Settings of a manager; every field has the default controller-runtime uses or a safer one."""

    name: str = "kubeloop"
    """Component name for Events and the default lease name."""
    health_host: str = "127.0.0.1"
    health_port: int | None = None
    """Port for /healthz, /readyz and /metrics; None serves nothing, 0 picks a free port."""
    leader_election: bool = False
    lease_namespace: str = "kube-system"
    lease_name: str = ""
    """Defaults to ``<name>-leader``."""
    identity: str = ""
    """Defaults to ``<hostname>_<uuid>``."""
    leader_election_config: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    resync_period: float = 0.0
    """Informer resync; 0 disables it (controllers here requeue for time-based work)."""
    cache_sync_timeout: float = 120.0
    shutdown_timeout: float = 2.0
    """Seconds :meth:`Manager.stop` gives in-flight work before abandoning it (controller-runtime's
    ``GracefulShutdownTimeout``, 30 s there; short here so a process stops within 5 s of SIGTERM
    even with the API server down)."""
    detect_cache_mutations: bool | None = None
    """None follows ``KUBELOOP_CACHE_MUTATION_DETECTOR``."""
    max_concurrent_reconciles: int = 1
    """Workers of every controller built here that does not set its own (``with_options``).
    1, as controller-runtime's ``config.Controller.MaxConcurrentReconciles``
    (``pkg/config/controller.go``: the manager-wide value a controller without its own takes,
    then 1): reconciles of
    one controller never interleave unless asked. A controller whose reconciles wait on API
    writes is bound by round trips with one worker; 8 is the recommended setting then (B1 in
    bench/README.md, "Reconcile workers" in docs/decisions.md)."""


class Manager:
    """Shared caches, recorders, probes and leader election for a set of controllers."""

    def __init__(
        self,
        client: ApiClient,
        options: ManagerOptions | None = None,
        *,
        registry: CollectorRegistry | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.client = client
        self.options = options or ManagerOptions()
        if self.options.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        # A registry of its own by default: several managers may live in one process (tests).
        self.registry = registry if registry is not None else CollectorRegistry()
        self.clock = clock
        self.factory = SharedInformerFactory(
            client,
            resync_period=self.options.resync_period,
            clock=clock,
            detect_mutations=self.options.detect_cache_mutations,
        )
        self.queue_metrics = PrometheusMetricsProvider(self.registry, label_names=("name", "controller"))
        self.controllers: list[Controller] = []
        self._runnables: list[tuple[Runnable, bool]] = []
        self._recorders: dict[str, EventRecorder] = {}
        self.health = HealthServer(self.registry)
        self.health.add_check("readyz", "informers", self._check_synced)
        self._tasks: list[asyncio.Task[None]] = []
        self._elector: LeaderElector | None = None
        self._leading_started = asyncio.Event()
        self._started = False

    # -- building -------------------------------------------------------------------------
    def controller(self, name: str) -> ControllerBuilder:
        return ControllerBuilder(self, name)

    def recorder(self, component: str) -> EventRecorder:
        recorder = self._recorders.get(component)
        if recorder is None:
            # As kube-controller-manager's recorders: the component only, no host (so Events carry
            # no source.host and an empty reportingInstance).
            recorder = EventRecorder(ClientEventSink(self.client), component, clock=self.clock)
            self._recorders[component] = recorder
        return recorder

    def add(self, controller: Controller) -> None:
        if any(c.name == controller.name for c in self.controllers):
            raise ValueError(f"a controller named {controller.name!r} already exists")
        self.controllers.append(controller)

    def add_runnable(self, runnable: Runnable, *, needs_leader: bool = True) -> None:
        """Run ``runnable()`` while the manager runs (only while leading if ``needs_leader``)."""
        self._runnables.append((runnable, needs_leader))

    # -- running --------------------------------------------------------------------------
    def _check_synced(self) -> None:
        if not self._started:
            raise RuntimeError("not started")
        pending = [c.name for c in self.controllers if not c.has_synced()]
        if pending:
            raise RuntimeError(f"caches not synced: {', '.join(pending)}")

    def ready(self) -> bool:
        try:
            self._check_synced()
        except RuntimeError:
            return False
        return True

    async def start(self) -> None:
        """Start probes, recorders and (when leading, or without election) the controllers."""
        if self._started:
            raise RuntimeError("manager already started")
        self._started = True
        if self.options.health_port is not None:
            port = await self.health.start(self.options.health_host, self.options.health_port)
            log.info("manager %s: probes and metrics on %s:%d", self.options.name, self.options.health_host, port)
        for recorder in self._recorders.values():
            await recorder.start()
        loop = asyncio.get_running_loop()
        for runnable, needs_leader in self._runnables:
            if not needs_leader:
                self._tasks.append(loop.create_task(runnable()))
        if self.options.leader_election:
            identity = self.options.identity or f"{socket.gethostname()}_{uuid.uuid4()}"
            lock = ClientLeaseLock(
                self.client, self.options.lease_namespace, self.options.lease_name or f"{self.options.name}-leader",
                identity,
            )
            config = self.options.leader_election_config
            config.on_started_leading = self._lead
            self._elector = LeaderElector(lock, config, clock=self.clock)
            self._tasks.append(loop.create_task(self._elector.run()))
        else:
            await self._start_leader_work()

    @property
    def elector(self) -> LeaderElector | None:
        return self._elector

    async def _lead(self) -> None:
        await self._start_leader_work()
        await asyncio.Event().wait()

    async def _start_leader_work(self) -> None:
        for controller in self.controllers:
            await controller.start()
        loop = asyncio.get_running_loop()
        for runnable, needs_leader in self._runnables:
            if needs_leader:
                self._tasks.append(loop.create_task(runnable()))
        self._leading_started.set()

    async def wait_leading(self) -> None:
        await self._leading_started.wait()

    async def stop(self) -> None:
        """Drain the controllers, then stop everything else (in reverse order of start).

        Bounded by ``options.shutdown_timeout``: the controllers drain together, runnables and
        event recorders get what is left of it, and whatever still runs then is cancelled.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.shutdown_timeout

        def left() -> float:
            return max(0.0, deadline - loop.time())

        await asyncio.gather(*(controller.stop(left()) for controller in self.controllers))
        for task in self._tasks:
            task.cancel()
        pending: set[asyncio.Task[None]] = set(self._tasks)
        if pending:
            # A cancelled runnable may still clean up (a recorder flushing): until the deadline.
            _, pending = await asyncio.wait(pending, timeout=left())
        for _ in range(_CANCEL_ROUNDS):
            if not pending:
                break
            # Past the deadline, cancel again: the first cancel may have landed before the task
            # even resumed, and a cleanup that awaits (a flush) needs a cancel of its own.
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=_CANCEL_ROUND_SECONDS)
        if pending:
            log.warning("manager %s: abandoning %d runnables that ignore cancellation", self.options.name,
                        len(pending))
        for task in self._tasks:
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: a runnable's failure at shutdown is not news
        self._tasks.clear()
        await asyncio.gather(*(recorder.stop(flush_timeout=left()) for recorder in self._recorders.values()))
        await self.factory.shutdown()
        await self.health.stop()
        self._started = False


class ControllerBuilder:
    """Declares a controller's watches and options, then builds and registers it."""

    def __init__(self, manager: Manager, name: str) -> None:
        self._manager = manager
        self._name = name
        self._for: Resource | str | None = None
        self._for_predicates: tuple[Predicate, ...] = ()
        self._owns: list[tuple[Resource | str, tuple[Predicate, ...]]] = []
        self._watches: list[tuple[Resource | str, Handler | Mapper, tuple[Predicate, ...]]] = []
        self._global_predicates: tuple[Predicate, ...] = ()
        self._max_concurrent = manager.options.max_concurrent_reconciles
        self._rate_limiter: RateLimiter[Any] | None = None
        self._namespace: str | None = None

    def for_(self, resource: Resource | str, predicates: Iterable[Predicate] = ()) -> ControllerBuilder:
        if self._for is not None:
            raise ValueError("for_() may only be called once")
        self._for = resource
        self._for_predicates = tuple(predicates)
        return self

    def owns(self, resource: Resource | str, predicates: Iterable[Predicate] = ()) -> ControllerBuilder:
        self._owns.append((resource, tuple(predicates)))
        return self

    def watches(
        self, resource: Resource | str, handler: Handler | Mapper, predicates: Iterable[Predicate] = ()
    ) -> ControllerBuilder:
        """Watch ``resource``: its events go to ``handler`` (a :class:`Handler`, e.g.
        :class:`~kubeloop.runtime.handlers.Funcs`) or enqueue what a mapper function gives."""
        self._watches.append((resource, handler, tuple(predicates)))
        return self

    def with_event_filter(self, *predicates: Predicate) -> ControllerBuilder:
        self._global_predicates = predicates
        return self

    def in_namespace(self, namespace: str | None) -> ControllerBuilder:
        self._namespace = namespace
        return self

    def with_options(
        self, *, max_concurrent_reconciles: int | None = None, rate_limiter: RateLimiter[Any] | None = None
    ) -> ControllerBuilder:
        if max_concurrent_reconciles is not None:
            self._max_concurrent = max_concurrent_reconciles
        if rate_limiter is not None:
            self._rate_limiter = rate_limiter
        return self

    async def complete(self, reconcile: Reconciler) -> Controller:
        if self._for is None and self._owns:
            raise ValueError("owns() needs for_()")
        if self._for is None and not self._watches:
            raise ValueError("a controller needs at least one watch")
        mgr = self._manager
        controller = Controller(
            self._name,
            reconcile,
            max_concurrent_reconciles=self._max_concurrent,
            rate_limiter=self._rate_limiter,
            clock=mgr.clock,
            registry=mgr.registry,
            queue_metrics=mgr.queue_metrics,
            cache_sync_timeout=mgr.options.cache_sync_timeout,
        )
        factory = mgr.factory
        if self._for is not None:
            for_resource = await mgr.client.resource(self._for)
            informer = await factory.informer_for(for_resource, namespace=self._namespace)
            controller.watch(informer, requests_for_object, (*self._global_predicates, *self._for_predicates))
            for owned, predicates in self._owns:
                informer = await factory.informer_for(owned, namespace=self._namespace)
                mapper = requests_for_owner(for_resource.group, for_resource.kind)
                controller.watch(informer, mapper, (*self._global_predicates, *predicates))
        for watched, handler, predicates in self._watches:
            informer = await factory.informer_for(watched, namespace=self._namespace)
            controller.watch(informer, handler, (*self._global_predicates, *predicates))
        mgr.add(controller)
        return controller
