"""A whole cluster as three processes: ``kubeloop server``, ``kubeloop kubelet``, ``kubeloop controllers``.

What ``kubeloop up`` runs by default, so that the API server, the kubelet and the controllers
each get a core of their own (one Python process runs on one). :class:`MultiProcessCluster`
offers what ``up`` needs of :class:`~kubeloop.cluster.inprocess.InProcessCluster` (``start``,
``wait_ready``, ``client``, ``url``, ``kubeconfig_path``, ``stop``) over a
:class:`~kubeloop.cluster.supervisor.Supervisor`:

1. the server starts first; its start-up failure (port taken, data directory in use) is the
   command's error, with the server's own words;
2. this process then writes the components' service accounts and RBAC rules with the
   administrator's client, as in one process (:func:`kubeloop.cluster.identities.provision`),
   and a kubeconfig per component holding its token (``DATA_DIR/kubelet.kubeconfig``,
   ``DATA_DIR/controllers.kubeconfig``, mode 0600);
3. the kubelet and the controllers start on those; the cluster is ready once both said they
   run (their caches synced) and every simulated node is registered.

A crashed child is restarted by the supervisor (with back-off, a bounded number of times). A
restarted server keeps its port (a ``--port 0`` choice is kept), and since an in-memory server
forgets the service accounts, the identities are provisioned again and the kubelet and the
controllers restarted on fresh tokens. ``stop`` terminates the kubelet and the controllers
first, then the server, as a control plane is drained.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import TextIO

import yaml

from kubeloop.client import ApiClient, ClientConfig, load_kubeconfig
from kubeloop.cluster.identities import provision
from kubeloop.cluster.inprocess import ClusterConfig
from kubeloop.cluster.restarts import RestartPolicy
from kubeloop.cluster.supervisor import Child, ChildExited, ChildSpec, Supervisor

STOP_GRACE_SECONDS = 8.0
"""SIGTERM to SIGKILL: the kubelet and the controllers exit within 4.5 s of SIGTERM on their own
(``HARD_STOP_SECONDS`` of the CLI); the server closes its database."""
READY_POLL_SECONDS = 0.1
KUBELET_KUBECONFIG = "kubelet.kubeconfig"
CONTROLLERS_KUBECONFIG = "controllers.kubeconfig"
_LISTENING = re.compile(r"listening on (\S+)")
LEASE_NAMESPACE = "kube-system"


def component_kubeconfig(admin_kubeconfig: str, token: str) -> str:
    """The administrator's kubeconfig text with every user's credentials replaced by ``token``."""
    document = yaml.safe_load(admin_kubeconfig)
    for entry in document.get("users") or ():
        entry["user"] = {"token": token}
    return yaml.safe_dump(document, sort_keys=False)


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` readable by its owner only (it holds a token)."""
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)


def _flag(value: float) -> str:
    return f"{value:g}"


class MultiProcessCluster:
    """The server, the kubelet and the controllers as supervised child processes."""

    def __init__(self, config: ClusterConfig, policy: RestartPolicy | None = None,
                 output: TextIO | None = None) -> None:
        self.config = config
        self._policy = policy
        self._output = output
        self._port = config.port
        self._url: str | None = None
        self._client: ApiClient | None = None
        self._supervisor: Supervisor | None = None
        self.server: Child | None = None
        self.kubelet: Child | None = None
        self.controllers: Child | None = None

    # -- the children's command lines ----------------------------------------------------
    def _server_args(self) -> list[str]:
        config = self.config
        args = ["server", "--data-dir", str(config.data_dir), "--host", config.host, "--port", str(self._port),
                "--watch-cache-size", str(config.watch_cache_size), "--authorization-mode", config.authorization_mode]
        if config.memory:
            args.append("--memory")
        if config.client_cert:
            args.append("--client-cert")
        return args

    def _limit_args(self) -> list[str]:
        limits, args = self.config.client_limits, []
        if limits.qps is not None:
            args += ["--kube-api-qps", _flag(limits.qps)]
        if limits.burst is not None:
            args += ["--kube-api-burst", str(limits.burst)]
        return args

    def _kubelet_args(self) -> list[str]:
        kubelet = self.config.kubelet
        assert kubelet is not None
        args = ["kubelet", "--kubeconfig", str(self.config.data_dir / KUBELET_KUBECONFIG),
                "--nodes", str(kubelet.nodes), "--pod-start-delay", _flag(kubelet.defaults.start_delay),
                "--pod-ready-delay", _flag(kubelet.defaults.ready_delay),
                "--pod-termination-delay", _flag(kubelet.defaults.termination_delay), *self._limit_args()]
        if kubelet.control_plane_pods:
            args.append("--control-plane-pods")
        return args

    def _controllers_args(self) -> list[str]:
        config = self.config
        args = ["controllers", "--kubeconfig", str(config.data_dir / CONTROLLERS_KUBECONFIG),
                "--controllers", ",".join(config.controller_names()), *self._limit_args()]
        if config.feature_gates:
            args += ["--feature-gates",
                     ",".join(f"{name}={str(value).lower()}" for name, value in config.feature_gates.items())]
        if config.health_port is not None:
            args += ["--health-port", str(config.health_port)]
        return args

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the server, provision identities, start the kubelet and the controllers (not
        waiting for their caches). The server's start-up failure raises :class:`ChildExited`."""
        self._supervisor = Supervisor(self._policy, self._output, on_restarted=self._restarted)
        self.server = self._supervisor.add(ChildSpec("server", self._server_args, "listening on"))
        try:
            await self._supervisor.start(self.server)
            await self._server_listening()
            await self._provision()
            if self.config.kubelet is not None:
                self.kubelet = self._supervisor.add(ChildSpec("kubelet", self._kubelet_args, "kubelet running"))
                await self._supervisor.start(self.kubelet)
            if self.config.controller_names():
                self.controllers = self._supervisor.add(
                    ChildSpec("controllers", self._controllers_args, "controllers running"))
                await self._supervisor.start(self.controllers)
        except BaseException:
            await self.stop()
            raise

    async def _server_listening(self) -> None:
        assert self.server is not None
        await self.server.wait_ready()
        if self._url is None:
            url = self._listening_url()
            self._url = url
            # A restart must come back on the same address: clients hold it.
            port = url.rsplit(":", 1)[-1].rstrip("/")
            self._port = int(port)
        if self._client is None:
            self._client = ApiClient(load_kubeconfig(str(self.kubeconfig_path)))

    def _listening_url(self) -> str:
        """The address the server announced (``kubeloop server listening on URL``)."""
        assert self.server is not None
        match = _LISTENING.search(self.server.ready_text)
        if match is None:
            raise RuntimeError(f"the server announced no address: {self.server.ready_text!r}")
        return match.group(1)

    async def _provision(self) -> None:
        """The components' accounts and rules, and a kubeconfig per component with its token."""
        if self.config.kubelet is None and not self.config.controller_names():
            return
        controllers, kubelet = await provision(self.client, self.config.controller_names(),
                                               kubelet=self.config.kubelet is not None,
                                               lease_namespace=LEASE_NAMESPACE)
        admin_text = self.kubeconfig_path.read_text()
        for name, component in ((CONTROLLERS_KUBECONFIG, controllers), (KUBELET_KUBECONFIG, kubelet)):
            if component is not None:
                _write_private(self.config.data_dir / name, component_kubeconfig(admin_text, _token(component)))

    async def _restarted(self, child: Child) -> None:
        """After a crashed server came back: fresh identities, and the clients restarted on them."""
        if child is not self.server or self._supervisor is None:
            return
        await self._server_listening()
        await self._provision()
        for dependent in (self.kubelet, self.controllers):
            if dependent is not None:
                await self._supervisor.restart(dependent, STOP_GRACE_SECONDS)

    async def stop(self) -> None:
        """The kubelet and the controllers, then the server; idempotent."""
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            clients = [child for child in (self.kubelet, self.controllers) if child is not None]
            await supervisor.stop([clients], STOP_GRACE_SECONDS)
        # The server drains open connections as it stops: close this process's first.
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if supervisor is not None and self.server is not None:
            await supervisor.stop([[self.server]], STOP_GRACE_SECONDS)

    async def failed(self) -> str:
        """The reason, once a child kept crashing and the supervisor gave up."""
        assert self._supervisor is not None
        return await self._supervisor.failed()

    # -- access ---------------------------------------------------------------------------
    @property
    def client(self) -> ApiClient:
        """A kubeloop client for the cluster, as its administrator (``system:masters``)."""
        if self._client is None:
            raise RuntimeError("the cluster is not running")
        return self._client

    @property
    def kubeconfig_path(self) -> Path:
        return self.config.data_dir / "kubeconfig"

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the cluster is not running")
        return self._url

    @property
    def admin_token(self) -> str | None:
        """The administrator's bearer token (also when the kubeconfig holds a certificate)."""
        try:
            return (self.config.data_dir / "token").read_text().strip() or None
        except OSError:
            return None

    @property
    def health_port(self) -> int | None:
        return self.config.health_port

    def pids(self) -> dict[str, int]:
        """The running children's pids by name."""
        return {child.name: child.pid for child in (self.server, self.kubelet, self.controllers)
                if child is not None and child.running and child.pid is not None}

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Until the kubelet and the controllers run (caches synced) and every node is registered."""
        try:
            async with asyncio.timeout(timeout):
                for child in (self.kubelet, self.controllers):
                    if child is not None:
                        await child.ready.wait()
                if self.config.kubelet is not None:
                    await self._nodes_registered(self.config.kubelet.nodes)
        except TimeoutError:
            raise TimeoutError(f"timed out after {timeout}s waiting for caches to sync") from None

    async def _nodes_registered(self, nodes: int) -> None:
        wanted = {f"kubeloop-node-{index}" for index in range(1, nodes + 1)}
        while True:
            try:
                listed = await self.client.list("nodes")
                if wanted <= {item["metadata"]["name"] for item in listed["items"]}:
                    return
            except Exception:  # the server restarting: ask again
                pass
            await asyncio.sleep(READY_POLL_SECONDS)


def _token(config: ClientConfig) -> str:
    if not config.token:
        raise RuntimeError("the component has no token")
    return config.token


__all__ = ["CONTROLLERS_KUBECONFIG", "KUBELET_KUBECONFIG", "ChildExited", "MultiProcessCluster",
           "component_kubeconfig"]
