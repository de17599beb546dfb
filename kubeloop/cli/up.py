"""``kubeloop up``: a whole cluster in one command.

The embedded API server, the simulated kubelet and every controller kubeloop has (or those
named by ``--controllers``). By default they run as three processes of their own (``kubeloop
server``, ``kubeloop kubelet``, ``kubeloop controllers``), started, watched and stopped
together by this one (:mod:`kubeloop.cluster.processes`), so that each gets a core: a child
that crashes is reported on stderr and restarted, with back-off, a bounded number of times;
their output is forwarded with a ``[server]``/``[kubelet]``/``[controllers]`` prefix.
``--single-process`` runs everything in this process instead, sharing one set of informer
caches (:mod:`kubeloop.cluster.inprocess`).

It writes ``DATA_DIR/kubeconfig`` and prints how to point kubectl at it; it says "ready" once
every controller's caches have synced and the nodes are registered (``--health-port`` serves
the controllers' ``/readyz`` too). SIGINT or SIGTERM stops it cleanly (the kubelet and the
controllers first, then the server); starting it again on the same data directory resumes
where it stopped (unless ``--memory``). The live rollout page of ``kubeloop dashboard`` runs in
this process (its address is printed at start; ``--no-dashboard`` leaves it out).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import shlex
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click
import yaml

from kubeloop.cli.controllers import (
    FEATURE_GATES_HELP,
    KUBE_API_BURST,
    KUBE_API_QPS,
    LOG_FORMAT,
    client_limit_options,
    controller_names,
    controllers_help,
    describe_feature_gates,
    feature_gate_settings,
    stop_on_signals,
)
from kubeloop.cli.eventloop import run as run_event_loop
from kubeloop.cli.kubelet import kubelet_config, kubelet_options
from kubeloop.cli.starterrors import start_failure
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc

if TYPE_CHECKING:
    from kubeloop.client import ApiClient

READY_TIMEOUT = 120.0
"""Seconds to wait for the caches to sync before giving up."""


class Cluster(Protocol):
    """What ``up`` needs of either layout (:class:`~kubeloop.cluster.inprocess.InProcessCluster`,
    :class:`~kubeloop.cluster.processes.MultiProcessCluster`)."""

    @property
    def client(self) -> ApiClient: ...
    @property
    def url(self) -> str: ...
    @property
    def kubeconfig_path(self) -> Path: ...
    @property
    def admin_token(self) -> str | None: ...
    @property
    def health_port(self) -> int | None: ...
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def wait_ready(self, timeout: float = ...) -> None: ...
    async def failed(self) -> str: ...


async def _up(data_dir: Path, host: str, port: int, memory: bool, nodes: int, pod_start_delay: float,
              pod_ready_delay: float, pod_termination_delay: float, names: tuple[str, ...],
              health_port: int | None, dashboard_port: int | None, apply: Manifests = (),
              feature_gates: Mapping[str, bool] | None = None, client_cert: bool = False,
              authorization_mode: str = "RBAC", single_process: bool = False,
              qps: float = KUBE_API_QPS, burst: int = KUBE_API_BURST) -> None:
    from kubeloop.cluster.inprocess import ClientLimits, ClusterConfig, InProcessCluster
    from kubeloop.cluster.processes import MultiProcessCluster

    # The embedded cluster's control plane shows in kube-system, as a kind node's does.
    kubelet = dataclasses.replace(kubelet_config(nodes, pod_start_delay, pod_ready_delay, pod_termination_delay),
                                  control_plane_pods=True)
    config = ClusterConfig(data_dir=data_dir, host=host, port=port, memory=memory, kubelet=kubelet,
                           controllers=names, health_port=health_port, feature_gates=feature_gates or None,
                           client_cert=client_cert, authorization_mode=authorization_mode,
                           component_identities=True, client_limits=ClientLimits(qps=qps, burst=burst))
    cluster: Cluster = InProcessCluster(config) if single_process else MultiProcessCluster(config)
    with stop_on_signals() as stop:
        stop_dashboard: Callable[[], Awaitable[None]] | None = None
        try:
            await _start(cluster, data_dir, host, port)
            _print_how_to_connect(cluster, nodes, names, feature_gates or {})
            if dashboard_port is not None:
                stop_dashboard = await _start_dashboard(cluster, host, dashboard_port)
            await _announce_ready_then_wait(cluster, stop, apply)
        finally:
            if stop_dashboard is not None:
                await stop_dashboard()
            await cluster.stop()
    click.echo("kubeloop stopped", err=True)


async def _start(cluster: Cluster, data_dir: Path, host: str, port: int) -> None:
    """Start ``cluster``; its server's start-up failure as one paragraph (:mod:`kubeloop.cli.starterrors`)."""
    from kubeloop.cluster.supervisor import ChildExited

    try:
        await cluster.start()
    except ChildExited as exc:  # the server process said why (in the same words as in one process)
        raise click.ClickException(exc.error or str(exc)) from None
    except Exception as exc:
        failure = start_failure(exc, data_dir, host, port)
        if failure is None:
            raise
        raise failure from None


def _print_how_to_connect(cluster: Cluster, nodes: int, names: tuple[str, ...],
                          feature_gates: Mapping[str, bool]) -> None:
    click.echo(f"kubeloop API server listening on {cluster.url}")
    click.echo(f"  {nodes} nodes; controllers: {', '.join(names) or '(none)'}; "
               f"feature gates: {describe_feature_gates(feature_gates)}")
    click.echo("Point kubectl at it:")
    click.echo(f"  export KUBECONFIG={shlex.quote(str(cluster.kubeconfig_path.resolve()))}")
    click.echo("  kubectl get nodes")
    if cluster.health_port is not None:
        click.echo(f"Readiness (every controller's caches synced): "
                   f"http://127.0.0.1:{cluster.health_port}/readyz")


async def _start_dashboard(cluster: Cluster, host: str, port: int) -> Callable[[], Awaitable[None]]:
    """Serve the rollout page (over the cluster's own client; its buttons need the cluster's token) and print
    its address."""
    from kubeloop.dashboard import start_dashboard

    # The cluster's bearer token unlocks the buttons, also when the kubeconfig (--client-cert)
    # holds a certificate instead.
    try:
        url, stop = await start_dashboard(cluster.client, host, port, action_token=cluster.admin_token)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise click.ClickException(f"cannot serve the dashboard on {host}:{port}: {reason.lower()}") from None
    click.echo(f"Rollout dashboard: {url}")
    return stop


async def _announce_ready_then_wait(cluster: Cluster, stop: asyncio.Event,
                                    apply: Manifests = ()) -> None:
    """Say "ready" once the caches have synced, apply the manifests, then wait for ``stop`` (or
    for the supervisor to give up on a child that keeps crashing: the command's error)."""
    waiting = asyncio.ensure_future(cluster.wait_ready(timeout=READY_TIMEOUT))
    stopping = asyncio.ensure_future(stop.wait())
    failing = asyncio.ensure_future(cluster.failed())
    try:
        done, _ = await asyncio.wait({waiting, stopping, failing}, return_when=asyncio.FIRST_COMPLETED)
        if waiting in done:
            try:
                waiting.result()
            except TimeoutError as exc:
                raise click.ClickException(str(exc)) from None
            click.echo("kubeloop is ready (caches synced, nodes registered)")
            await _apply(cluster, apply)
            done, _ = await asyncio.wait({stopping, failing}, return_when=asyncio.FIRST_COMPLETED)
        if failing in done:
            raise click.ClickException(failing.result())
        click.echo("kubeloop stopping", err=True)
    finally:
        for task in (waiting, stopping, failing):
            task.cancel()


Manifests = Sequence[tuple[Path, list[dict[str, Any]]]]
"""The ``--apply`` files, read before anything starts: (path, its documents)."""


def read_manifests(paths: tuple[Path, ...]) -> Manifests:
    """Every ``--apply`` file's documents; a usage error naming the file (and the YAML line)
    before the cluster starts."""
    from kubeloop.cli.manifests import load_manifests

    read: list[tuple[Path, list[dict[str, Any]]]] = []
    for path in paths:
        try:
            read.append((path, load_manifests(path)))
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise click.BadParameter(f"{path}: {exc}", param_hint="--apply") from None
    return read


def default_data_dir() -> Path:
    """Where ``up`` keeps its state without ``--data-dir``: the user's state directory."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kubeloop"


def check_port_free(host: str, port: int, what: str) -> None:
    """A usage error, before anything prints, when ``host:port`` cannot be bound."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise click.ClickException(f"cannot serve {what} on {host}:{port}: {reason.lower()}") from None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


async def _apply(cluster: Cluster, manifests: Manifests) -> None:
    from kubeloop.cli.manifests import apply_manifest

    for path, documents in manifests:
        try:
            for manifest in documents:
                click.echo(await apply_manifest(cluster.client, manifest))
        except Exception as exc:  # a manifest the server refuses is reported, the cluster keeps running
            click.echo(f"error: cannot apply {path}: {exc}", err=True)


@click.command()
@click.option("--data-dir", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the database, credentials and the kubeconfig "
                   "(default: $XDG_STATE_HOME/kubeloop, or ~/.local/state/kubeloop).")
@click.option("--port", default=6443, show_default=True, type=click.IntRange(0, 65535),
              help="TCP port of the API server (0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the API server binds.")
@click.option("--memory", is_flag=True, help="Keep objects in memory only (nothing survives a restart).")
@kubelet_options
@click.option("--controllers", "controllers_text", default=None, metavar="LIST", help=controllers_help())
@click.option("--health-port", type=click.IntRange(0, 65535), default=None,
              help="Serve the controllers' /healthz, /readyz (caches synced) and /metrics on this port.")
@click.option("--dashboard-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="TCP port of the live rollout page (0 picks a free one; the address is printed).")
@click.option("--no-dashboard", is_flag=True, help="Do not serve the rollout page.")
@click.option("--apply", "apply", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Create (or update) the objects of this YAML file once ready; repeatable.")
@click.option("--feature-gates", "feature_gates_text", default=None, metavar="NAME=BOOL,...", help=FEATURE_GATES_HELP)
@click.option("--client-cert", is_flag=True,
              help="Write a kubeconfig with an admin client certificate (CN kubernetes-admin, O system:masters) "
                   "instead of the bearer token, as kind does.")
@click.option("--authorization-mode", type=click.Choice(("RBAC", "AlwaysAllow")), default="RBAC", show_default=True,
              help="How the API server authorizes requests of users outside system:masters.")
@client_limit_options
@click.option("--single-process", is_flag=True,
              help="Run the server, the kubelet and the controllers in this one process (one core) instead of "
                   "three supervised processes.")
def up(data_dir: Path | None, port: int, host: str, memory: bool, nodes: int, pod_start_delay: float,
       pod_ready_delay: float, pod_termination_delay: float, controllers_text: str | None,
       health_port: int | None, dashboard_port: int, no_dashboard: bool, apply: tuple[Path, ...],
       feature_gates_text: str | None, client_cert: bool, authorization_mode: str, kube_api_qps: float,
       kube_api_burst: int, single_process: bool) -> None:
    """Run the API server, the simulated kubelet and the controllers (processes of their own by default)."""
    names = controller_names(controllers_text)
    gates = feature_gate_settings(feature_gates_text)
    manifests = read_manifests(apply)
    if not no_dashboard and dashboard_port:
        check_port_free(host, dashboard_port, "the dashboard")
    if health_port is not None and not single_process:
        # The controllers serve it from their process; pick the port here so it can be printed.
        health_port = health_port or free_port()
    data_dir = data_dir if data_dir is not None else default_data_dir()
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    use_cache_friendly_gc()
    run_event_loop(_up(data_dir, host, port, memory, nodes, pod_start_delay, pod_ready_delay, pod_termination_delay,
                       names, health_port, None if no_dashboard else dashboard_port, manifests, gates,
                       client_cert=client_cert, authorization_mode=authorization_mode,
                       single_process=single_process, qps=kube_api_qps, burst=kube_api_burst))
