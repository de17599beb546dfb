"""A whole cluster in one process: API server, simulated kubelet, controllers.

:class:`InProcessCluster` is what ``kubeloop up --single-process`` runs and what the test kit's
:class:`~kubeloop.testing.cluster.EmbeddedCluster` (the ``kubeloop_cluster`` fixture) wraps. It
starts the embedded API server, then one :class:`~kubeloop.runtime.manager.Manager` (one set of
informer caches, shared by everything in the process) carrying the simulated kubelet and the
chosen controllers, all talking to the server over HTTPS exactly as they would to a real
cluster. With ``component_identities`` the kubelet and the controllers talk as service accounts
of their own (:mod:`kubeloop.cluster.identities`), as ``kubeloop up`` runs them.

    cluster = InProcessCluster(ClusterConfig(data_dir=path))
    await cluster.start()
    try:
        await cluster.wait_ready(timeout=120)
        ...  # cluster.client is the administrator's client
    finally:
        await cluster.stop()
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kubeloop.client import ApiClient, ClientConfig, load_kubeconfig
from kubeloop.cluster.identities import provision
from kubeloop.controllers import CONTROLLERS, add_controllers
from kubeloop.kubelet import Kubelet, KubeletConfig
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.storage import DEFAULT_WATCH_CACHE_SIZE

READY_POLL_SECONDS = 0.05


def all_controllers() -> tuple[str, ...]:
    """Every controller kubeloop has (the default of ``up`` and of the test fixture)."""
    return tuple(CONTROLLERS)


@dataclass(frozen=True)
class ClientLimits:
    """Client-side rate limits of a component (``--kube-api-qps``, ``--kube-api-burst``).

    As kube-controller-manager's flags of those names; ``None`` keeps the client's default
    (:class:`~kubeloop.client.ClientConfig`), a ``qps`` of 0 or less turns the limit off.
    """

    qps: float | None = None
    burst: int | None = None

    def apply(self, config: ClientConfig) -> ClientConfig:
        """``config`` with these limits (unchanged where they are ``None``)."""
        changes: dict[str, float | int] = {}
        if self.qps is not None:
            changes["qps"] = self.qps
        if self.burst is not None:
            changes["burst"] = self.burst
        return dataclasses.replace(config, **changes) if changes else config  # type: ignore[arg-type]


@dataclass(frozen=True)
class ClusterConfig:
    """What to run in a cluster (one process, or ``kubeloop up``'s processes)."""

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
    they declare (:mod:`kubeloop.cluster.identities`), as ``kubeloop up`` runs them (the
    default, for the test fixture too); False gives them the administrator's credentials, the
    controllers sharing the caller's client."""
    authorization_mode: str = "RBAC"
    """The API server's ``--authorization-mode`` (``RBAC`` or ``AlwaysAllow``)."""
    kruise_admission: bool = True
    """The server's in-process CloneSet defaulting/validation and pod barrier; False behaves as a
    real kube-apiserver, where ``kubeloop webhook`` does them (``ServerConfig.kruise_admission``)."""
    client_limits: ClientLimits = field(default_factory=ClientLimits)
    """Rate limits of the kubelet's and the controllers' clients (each its own bucket)."""

    def controller_names(self) -> tuple[str, ...]:
        return all_controllers() if self.controllers is None else tuple(self.controllers)


class InProcessCluster:
    """The server, the kubelet and the controllers of one process; ``start`` then ``stop``."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.server = KubeServer(ServerConfig(data_dir=config.data_dir, host=config.host, port=config.port,
                                              memory=config.memory, watch_cache_size=config.watch_cache_size,
                                              ready_check=self.ready, client_cert=config.client_cert,
                                              authorization_mode=config.authorization_mode,
                                              kruise_admission=config.kruise_admission))
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
            limits = self.config.client_limits
            names = self.config.controller_names()
            options = ManagerOptions(name=self.config.manager_name, health_port=self.config.health_port)
            controllers_config, kubelet_config = kubeconfig, kubeconfig
            if self.config.component_identities:
                self._client = ApiClient(kubeconfig)
                controllers_config, provisioned = await provision(
                    self._client, names, kubelet=self.config.kubelet is not None,
                    lease_namespace=options.lease_namespace)
                kubelet_config = provisioned or kubeconfig
                self._controllers_client = ApiClient(limits.apply(controllers_config))
            else:
                # Without identities of their own the controllers share the administrator's
                # client with the caller, as before identities existed.
                self._client = ApiClient(limits.apply(kubeconfig))
            self._manager = Manager(self._controllers_client or self._client, options)
            if self.config.kubelet is not None:
                # The kubelet writes through a client of its own, as it would from its own
                # process: its requests do not eat into the controllers' rate limit.
                self._kubelet_client = ApiClient(limits.apply(kubelet_config))
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

    @property
    def admin_token(self) -> str | None:
        """The administrator's bearer token (also when the kubeconfig holds a certificate)."""
        credentials = self.server.credentials
        return credentials.token if credentials is not None else None

    @property
    def health_port(self) -> int | None:
        """The port the controllers' /readyz is served on (``None`` without ``health_port``)."""
        if self.config.health_port is None or self._manager is None:
            return None
        return self._manager.health.port

    def ready(self) -> bool:
        """True once every controller's (and the kubelet's) caches have synced."""
        return self._manager is not None and self._manager.ready()

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until every cache has synced and every simulated node is registered;
        ``TimeoutError`` after ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                # Polled: the manager offers no event for "every cache synced".
                while True:
                    if self.ready():
                        break
                    await asyncio.sleep(READY_POLL_SECONDS)
                if self.kubelet is not None:
                    await self.kubelet.registered.wait()
        except TimeoutError:
            raise TimeoutError(f"timed out after {timeout}s waiting for caches to sync") from None

    async def failed(self) -> str:
        """Never returns: nothing in one process is restarted behind the caller's back (the
        multi-process layout returns the reason it gave up; see :mod:`kubeloop.cluster.processes`)."""
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
