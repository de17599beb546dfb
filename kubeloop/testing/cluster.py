"""A whole Kubernetes-like cluster in one process: API server, simulated kubelet, controllers.

:class:`EmbeddedCluster` is what ``kubeloop up`` runs and what the ``kubeloop_cluster`` pytest
fixture yields. It starts the embedded API server, then one
:class:`~kubeloop.runtime.manager.Manager` (one set of informer caches, shared by everything
in the process) carrying the simulated kubelet and the chosen controllers, all talking to the
server over HTTPS exactly as they would to a real cluster.

For tests it adds a client and a few waiting helpers that poll until something holds (or
fail after a timeout); they never assert on timing.

    cluster = EmbeddedCluster(ClusterConfig(data_dir=tmp_path))
    await cluster.start()
    try:
        await cluster.client.create(DEPLOYMENTS, manifest, namespace="default")
        await cluster.wait_for(DEPLOYMENTS, "web", lambda d: d["status"].get("readyReplicas") == 3)
    finally:
        await cluster.stop()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeloop.client import ApiClient, Resource, is_not_found, load_kubeconfig
from kubeloop.controllers import CONTROLLERS, add_controllers
from kubeloop.kubelet import BackOff, BehaviourDefaults, Kubelet, KubeletConfig
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.storage import DEFAULT_WATCH_CACHE_SIZE
from kubeloop.testing.identities import provision
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
POLL_SECONDS = 0.05


def all_controllers() -> tuple[str, ...]:
    """Every controller kubeloop has (the default of ``up`` and the fixture)."""
    return tuple(CONTROLLERS)


def quick_kubelet_config(nodes: int = 3) -> KubeletConfig:
    """A kubelet for tests: pods run and turn ready at once, deletions and restarts take 50 ms.

    Pods can still ask for delays and failures with the ``sim.kubeloop.io/*`` annotations.
    """
    return KubeletConfig(
        nodes=nodes,
        defaults=BehaviourDefaults(start_delay=0.0, ready_delay=0.0, termination_delay=0.05),
        back_off=BackOff(initial=0.05, maximum=1.0),
        heartbeat_interval=1.0,
        unschedulable_retry=0.2,
    )


@dataclass(frozen=True)
class ClusterConfig:
    """What to run in an :class:`EmbeddedCluster`."""

    data_dir: Path
    """The server's directory (database unless ``memory``, credentials, ``kubeconfig``)."""
    host: str = "127.0.0.1"
    port: int = 0
    """The API server's port; 0 picks a free one."""
    memory: bool = True
    """Keep objects in memory only (a throwaway cluster)."""
    watch_cache_size: int = DEFAULT_WATCH_CACHE_SIZE
    kubelet: KubeletConfig | None = field(default_factory=KubeletConfig)
    """The simulated kubelet's settings; ``None`` runs no kubelet (pods then stay Pending)."""
    controllers: Sequence[str] | None = None
    """Controller names (see ``kubeloop.controllers.CONTROLLERS``); ``None`` runs all of them."""
    health_port: int | None = None
    """Port for the manager's /healthz, /readyz and /metrics; ``None`` serves none."""
    manager_name: str = "kubeloop"
    client_cert: bool = False
    """The kubeconfig (and so the cluster's own clients) authenticates with an admin client
    certificate instead of the bearer token."""
    feature_gates: Mapping[str, bool] | None = None
    """Controller feature gates by upstream name (``{"CloneSetShortHash": True}``, ``AllAlpha``
    too); ``None`` keeps upstream's defaults. Unknown names make ``start`` raise ValueError."""
    component_identities: bool = True
    """The controllers and the kubelet talk as service accounts of their own, bound to the rules
    they declare (:mod:`kubeloop.testing.identities`), as ``kubeloop up`` runs them (the
    default, for the test fixture too); False gives them the administrator's credentials, the
    controllers sharing the caller's client."""
    authorization_mode: str = "RBAC"
    """The API server's ``--authorization-mode`` (``RBAC`` or ``AlwaysAllow``)."""


class EmbeddedCluster:
    """The server, the kubelet and the controllers of one process; ``start`` then ``stop``."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.server = KubeServer(ServerConfig(data_dir=config.data_dir, host=config.host, port=config.port,
                                              memory=config.memory, watch_cache_size=config.watch_cache_size,
                                              ready_check=self.ready, client_cert=config.client_cert,
                                              authorization_mode=config.authorization_mode))
        self._client: ApiClient | None = None
        self._controllers_client: ApiClient | None = None
        self._kubelet_client: ApiClient | None = None
        self._manager: Manager | None = None
        self.kubelet: Kubelet | None = None

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the server, then the kubelet and the controllers (not waiting for their caches)."""
        await self.server.start()
        try:
            kubeconfig = load_kubeconfig(str(self.server.kubeconfig_path))
            self._client = ApiClient(kubeconfig)
            names = all_controllers() if self.config.controllers is None else tuple(self.config.controllers)
            options = ManagerOptions(name=self.config.manager_name, health_port=self.config.health_port)
            controllers_config, kubelet_config = kubeconfig, kubeconfig
            if self.config.component_identities:
                controllers_config, provisioned = await provision(
                    self._client, names, kubelet=self.config.kubelet is not None,
                    lease_namespace=options.lease_namespace)
                kubelet_config = provisioned or kubeconfig
            # Without identities of their own the controllers share the administrator's client
            # with the caller, as before identities existed.
            if self.config.component_identities:
                self._controllers_client = ApiClient(controllers_config)
            self._manager = Manager(self._controllers_client or self._client, options)
            if self.config.kubelet is not None:
                # The kubelet writes through a client of its own, as it would from its own
                # process: its requests do not eat into the controllers' rate limit.
                self._kubelet_client = ApiClient(kubelet_config)
                self.kubelet = Kubelet(self._kubelet_client, self.config.kubelet)
                await self.kubelet.setup(self._manager)
            await add_controllers(self._manager, names, feature_gates=self.config.feature_gates)
            await self._manager.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop the controllers and the kubelet (draining work in flight), then the server; idempotent."""
        manager, self._manager = self._manager, None
        if manager is not None:
            await manager.stop()
            # Controllers start their informers themselves, and the manager's stop only stops
            # those the factory started: stop every informer so that no watch outlives the cluster.
            for informer in manager.factory.informers():
                await informer.stop()
        for client in (self._client, self._controllers_client, self._kubelet_client):
            if client is not None:
                await client.aclose()
        self._client = self._controllers_client = self._kubelet_client = None
        await self.server.stop()

    async def __aenter__(self) -> EmbeddedCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- access ---------------------------------------------------------------------------
    @property
    def client(self) -> ApiClient:
        """A kubeloop client for the cluster, as its administrator (``system:masters``)."""
        if self._client is None:
            raise RuntimeError("the cluster is not running")
        return self._client

    @property
    def manager(self) -> Manager:
        if self._manager is None:
            raise RuntimeError("the cluster is not running")
        return self._manager

    @property
    def kubeconfig_path(self) -> Path:
        """A kubeconfig for the cluster (CA and token included): give it to any client or kubectl."""
        return self.server.kubeconfig_path

    @property
    def url(self) -> str:
        return self.server.url

    def ready(self) -> bool:
        """True once every controller's (and the kubelet's) caches have synced."""
        return self._manager is not None and self._manager.ready()

    # -- waiting --------------------------------------------------------------------------
    async def wait_until(self, check: Callable[[], Awaitable[bool] | bool], timeout: float = 30.0,
                         message: str = "condition") -> None:
        """Poll ``check`` (sync or async) until it returns true; ``TimeoutError`` after ``timeout``
        (a :class:`~kubeloop.testing.polling.PollTimeout`)."""
        await eventually(check, timeout=timeout, interval=POLL_SECONDS, what=message)

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until every cache has synced and every simulated node is registered."""
        await self.wait_until(self.ready, timeout, "caches to sync")
        if self.kubelet is not None:
            async with asyncio.timeout(timeout):
                await self.kubelet.registered.wait()

    async def wait_for(self, resource: Resource | str, name: str, predicate: Callable[[Obj], bool] = bool, *,
                       namespace: str | None = "default", timeout: float = 30.0) -> Obj:
        """Poll the object until ``predicate(object)`` holds; return that object.

        A missing object counts as "not yet". ``TimeoutError`` names the last state seen.
        """
        last: list[Obj | None] = [None]

        async def check() -> bool:
            try:
                current = await self.client.get(resource, name, namespace=namespace)
            except Exception as exc:
                if not is_not_found(exc):
                    raise
                last[0] = None
                return False
            last[0] = current
            return predicate(current)

        try:
            await self.wait_until(check, timeout, f"{_plural(resource)} {name}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; last seen: {last[0]}") from None
        assert last[0] is not None
        return last[0]

    async def wait_for_condition(self, resource: Resource | str, name: str, condition_type: str,
                                 status: str = "True", *, namespace: str | None = "default",
                                 timeout: float = 30.0) -> Obj:
        """Wait until the object has ``status.conditions[type=condition_type].status == status``."""
        return await self.wait_for(resource, name, lambda obj: has_condition(obj, condition_type, status),
                                   namespace=namespace, timeout=timeout)

    async def wait_deleted(self, resource: Resource | str, name: str, *, namespace: str | None = "default",
                           timeout: float = 30.0) -> None:
        """Wait until the object is gone."""

        async def gone() -> bool:
            try:
                await self.client.get(resource, name, namespace=namespace)
            except Exception as exc:
                if is_not_found(exc):
                    return True
                raise
            return False

        await self.wait_until(gone, timeout, f"{_plural(resource)} {name} to be deleted")


def _plural(resource: Resource | str) -> str:
    return resource.plural if isinstance(resource, Resource) else resource


def has_condition(obj: Mapping[str, Any], condition_type: str, status: str = "True") -> bool:
    """Whether ``obj`` has the condition with the given status."""
    conditions = (obj.get("status") or {}).get("conditions") or ()
    return any(isinstance(c, Mapping) and c.get("type") == condition_type and c.get("status") == status
               for c in conditions)

