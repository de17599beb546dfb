"""Building the CloneSet controller on a :class:`~kubeloop.runtime.manager.Manager`.

    manager = Manager(client)
    await add_cloneset_controller(manager, CloneSetControllerOptions(workers=3))
    await manager.start()

The controller watches CloneSets (each event enqueues the CloneSet, and feeds the
expectations through :mod:`.handlers`), pods and PVCs through the handlers of :mod:`.handlers`,
and ControllerRevisions (cached for the sync, no events acted on), all on the manager's shared
informers and all counted in the controller's cache-sync checks. Pods and PVCs are indexed by
the UIDs of their owner references, as upstream lists them. Feature gates and
release-dependent behaviours are options, defaulting to OpenKruise v1.8's defaults.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from kubeloop.api.meta import now
from kubeloop.client import CONTROLLER_REVISIONS, PERSISTENT_VOLUME_CLAIMS, PODS
from kubeloop.runtime.expectations import EXPECTATIONS_TIMEOUT, ResourceVersionExpectations, ScaleExpectations
from kubeloop.runtime.handlers import Funcs
from kubeloop.runtime.manager import Manager

from .control import CLONESETS, CloneSetControl
from .featuregates import feature_gates_from
from .handlers import CloneSetEventHandlers
from .options import DEFAULT_BEHAVIOUR, DEFAULT_GATES, CloneSetBehaviour, CloneSetFeatureGates
from .steps import DEFAULT_WRITE_CONCURRENCY
from .sync import OWNER_UID_INDEX, CloneSetInformers, CloneSetSync, owner_uids

NAME = "cloneset"
COMPONENT = "cloneset-controller"


@dataclass(frozen=True)
class CloneSetControllerOptions:
    """Settings of the CloneSet controller."""

    gates: CloneSetFeatureGates = DEFAULT_GATES
    """Upstream's behaviour-changing feature gates (defaults as OpenKruise v1.8)."""
    behaviour: CloneSetBehaviour = DEFAULT_BEHAVIOUR
    """Behaviours that differ between upstream releases (defaults as v1.8)."""
    workers: int = 3
    """Concurrent reconciles (distinct CloneSets only; one CloneSet is never reconciled twice at once)."""
    wall: Callable[[], datetime] = now
    """Wall-clock time for availability, lifecycle timestamps and grace periods."""
    rng: random.Random = field(default_factory=random.Random)
    """Source of new instance ids."""
    expectations_timeout: float = EXPECTATIONS_TIMEOUT
    """Seconds after which pending scale expectations are dropped and the cache trusted."""
    write_concurrency: int = DEFAULT_WRITE_CONCURRENCY
    """Per-pod writes of one round (refresh, updates, deletions) in flight at once."""


@dataclass(frozen=True)
class CloneSetController:
    """The parts of a built CloneSet controller (tests reach for expectations and the sync)."""

    sync: CloneSetSync
    handlers: CloneSetEventHandlers
    control: CloneSetControl


async def add_cloneset_controller(
    manager: Manager, options: CloneSetControllerOptions | None = None, *,
    feature_gates: Mapping[str, bool] | None = None,
) -> CloneSetController:
    """Build the CloneSet controller on ``manager``'s shared informers and register it.

    ``feature_gates`` (upstream names, see :mod:`.featuregates`) are applied over
    ``options.gates``; an unknown name raises :class:`ValueError` before anything is built.
    """
    opts = options or CloneSetControllerOptions()
    if feature_gates:
        opts = dataclasses.replace(opts, gates=feature_gates_from(feature_gates, opts.gates))
    factory = manager.factory
    indexers = {OWNER_UID_INDEX: owner_uids}
    informers = CloneSetInformers(
        clonesets=await factory.informer_for(CLONESETS),
        pods=await factory.informer_for(PODS, indexers=indexers),
        pvcs=await factory.informer_for(PERSISTENT_VOLUME_CLAIMS, indexers=indexers),
        revisions=await factory.informer_for(CONTROLLER_REVISIONS),
    )
    scale = ScaleExpectations(manager.clock)
    versions = ResourceVersionExpectations()
    recorder = manager.recorder(COMPONENT)
    control = CloneSetControl(manager.client, recorder, scale, versions, opts.gates)
    sync = CloneSetSync(
        manager.client, informers, recorder, control, scale, versions,
        gates=opts.gates, behaviour=opts.behaviour, wall=opts.wall, rng=opts.rng,
        expectations_timeout=opts.expectations_timeout, write_concurrency=opts.write_concurrency,
    )
    handlers = CloneSetEventHandlers(informers.clonesets, scale, versions)
    await (
        manager.controller(NAME)
        .for_(CLONESETS)
        .watches(CLONESETS, handlers.cloneset_handler())
        .watches(PODS, handlers.pod_handler())
        .watches(PERSISTENT_VOLUME_CLAIMS, handlers.pvc_handler())
        .watches(CONTROLLER_REVISIONS, Funcs())
        .with_options(max_concurrent_reconciles=opts.workers)
        .complete(sync.reconcile)
    )
    return CloneSetController(sync, handlers, control)
