"""Controllers: ReplicaSet, Deployment, CloneSet, the garbage collector, Endpoints, EndpointSlices and
ClusterRole aggregation.

:data:`CONTROLLERS` names the controllers ``kubeloop up`` and ``kubeloop controllers
--controllers LIST`` can run, each with the function that builds it on a
:class:`~kubeloop.runtime.manager.Manager`. The builders are imported only when used, so
importing a controller's pure core does not pull in the client and the runtime.

    manager = Manager(client)
    await add_controllers(manager, ["replicaset", "deployment", "garbagecollector"])
    await manager.start()

Feature gates use upstream's names (``{"CloneSetShortHash": True}``); the controllers of
:data:`GATED_CONTROLLERS` receive them, the others have none. OpenKruise's gates go to the
CloneSet controller; kube-controller-manager's gates that kubeloop models are in
:data:`KUBE_GATES` (``AllAlpha``/``AllBeta`` set them too, by their stage; see
:mod:`kubeloop.controllers.kubegates`).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kubeloop.controllers.kubegates import KUBE_GATES

if TYPE_CHECKING:
    from kubeloop.runtime.manager import Manager

ControllerBuilder = Callable[..., Awaitable[Any]]
"""``async def build(manager)``; those of :data:`GATED_CONTROLLERS` also take ``feature_gates=``."""

CONTROLLERS: dict[str, str] = {
    "replicaset": "kubeloop.controllers.replicaset.controller:add_replica_set_controller",
    "deployment": "kubeloop.controllers.deployment.controller:add_deployment_controller",
    "garbagecollector": "kubeloop.controllers.garbagecollector.controller:add_garbage_collector",
    "cloneset": "kubeloop.controllers.cloneset.controller:add_cloneset_controller",
    "endpoint": "kubeloop.controllers.endpoints.controller:add_endpoints_controller",
    "endpointslice": "kubeloop.controllers.endpointslice.controller:add_endpoint_slice_controller",
    "clusterroleaggregation":
        "kubeloop.controllers.clusterroleaggregation.controller:add_clusterrole_aggregation_controller",
}
"""Controller name -> ``module:function`` of its builder (``async def build(manager)``)."""

DEFAULT_CONTROLLERS = ("replicaset", "deployment", "garbagecollector", "endpoint", "endpointslice",
                       "clusterroleaggregation")

GATED_CONTROLLERS: frozenset[str] = frozenset({"cloneset", "replicaset"})
"""Controllers whose builder takes ``feature_gates=`` (upstream gate name -> enabled)."""

class UnknownControllerError(ValueError):
    """A controller name not in :data:`CONTROLLERS`."""


def controller_builder(name: str) -> ControllerBuilder:
    """The builder of the named controller; :class:`UnknownControllerError` for unknown names."""
    target = CONTROLLERS.get(name)
    if target is None:
        known = ", ".join(sorted(CONTROLLERS))
        raise UnknownControllerError(f"unknown controller {name!r} (known: {known})")
    module_name, _, function = target.partition(":")
    builder: ControllerBuilder = getattr(importlib.import_module(module_name), function)
    return builder


def parse_controller_list(text: str) -> list[str]:
    """``"replicaset,deployment"`` -> names; ``"*"`` or empty -> the defaults. Unknown names raise."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names or names == ["*"]:
        return list(DEFAULT_CONTROLLERS)
    for name in names:
        controller_builder(name)
    return names


def check_feature_gates(feature_gates: Mapping[str, bool]) -> None:
    """Raise :class:`ValueError` unless every name is a gate some controller knows, set to a bool."""
    from kubeloop.controllers.cloneset.featuregates import feature_gates_from

    for name in KUBE_GATES:
        if name in feature_gates and not isinstance(feature_gates[name], bool):
            raise ValueError(f"feature gate {name} must be true or false, got {feature_gates[name]!r}")
    feature_gates_from({k: v for k, v in feature_gates.items() if k not in KUBE_GATES})


async def add_controllers(manager: Manager, names: Iterable[str] = DEFAULT_CONTROLLERS, *,
                          feature_gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """Build the named controllers on ``manager`` (before it starts); returns them by name.

    ``feature_gates`` (upstream names, e.g. ``{"PreparingUpdateAsUpdate": True}``) go to the
    controllers of :data:`GATED_CONTROLLERS`; they are checked first, whichever controllers are
    named, so a misspelt gate is a :class:`ValueError` before anything is built.
    """
    if feature_gates:
        check_feature_gates(feature_gates)
    built: dict[str, Any] = {}
    for name in names:
        if name in built:
            continue
        builder = controller_builder(name)
        if feature_gates and name in GATED_CONTROLLERS:
            built[name] = await builder(manager, feature_gates=feature_gates)
        else:
            built[name] = await builder(manager)
    return built
