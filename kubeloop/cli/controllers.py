"""``kubeloop controllers``: run kubeloop's workload controllers against any cluster.

The controllers are ordinary API clients: point them at the embedded server (its
``DATA_DIR/kubeconfig``) or at a real cluster. ``--leader-elect`` lets several copies run
with one active, through a Lease in ``kube-system`` (``--leader-elect-namespace`` picks another
namespace: an installed manager elects in its own, see ``kubeloop manifests``).

Before it starts the ReplicaSet, Deployment or garbage collector controller, the command looks
for kube-controller-manager's leader Lease and refuses to run beside a live one unless
``--force`` (:mod:`kubeloop.controllers.coexistence`).

``--feature-gates`` takes OpenKruise's gate names (``PreparingUpdateAsUpdate=true,...``,
``AllAlpha=true`` too) for the controllers that have gates (the CloneSet controller).

``--kube-api-qps`` and ``--kube-api-burst`` are the client's token bucket, as
kube-controller-manager's flags of those names (upstream defaults 20 and 30); kubeloop's
defaults are higher, chosen by measurement (docs/decisions.md, client limits) so that a
rollout of thousands of pods is not throttled by the client; 0 turns the limit off.

This module also holds what the process-running commands share: the ``--controllers``,
``--feature-gates`` and client-limit options and the wait for SIGINT/SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kubeloop.cli.eventloop import run as run_event_loop
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc

if TYPE_CHECKING:
    from kubeloop.client import ApiClient, ClientConfig
    from kubeloop.runtime.manager import Manager

F = TypeVar("F", bound=Callable[..., Any])

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def controller_names(text: str | None) -> tuple[str, ...]:
    """The ``--controllers`` value as names: every registered controller when empty or ``*``.

    Raises :class:`click.BadParameter` for unknown names.
    """
    from kubeloop.controllers import CONTROLLERS, UnknownControllerError, parse_controller_list

    if text is None or text.strip() in ("", "*"):
        return tuple(CONTROLLERS)
    try:
        return tuple(dict.fromkeys(parse_controller_list(text)))
    except UnknownControllerError as exc:
        raise click.BadParameter(str(exc), param_hint="--controllers") from None


FEATURE_GATES_HELP = ("OpenKruise feature gates of the CloneSet controller, e.g. PreparingUpdateAsUpdate=true, "
                      "CloneSetShortHash=true (comma-separated); AllAlpha=true sets every alpha gate not named.")


def feature_gate_settings(text: str | None) -> dict[str, bool]:
    """The ``--feature-gates`` value as ``{name: enabled}`` (empty when omitted).

    Raises :class:`click.BadParameter` for unknown names and malformed items.
    """
    from kubeloop.controllers.cloneset.featuregates import parse_feature_gates

    if text is None:
        return {}
    try:
        return parse_feature_gates(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None


def describe_feature_gates(settings: Mapping[str, bool]) -> str:
    """``settings`` as the command line would spell them ("upstream defaults" when empty)."""
    return ",".join(f"{name}={str(value).lower()}" for name, value in settings.items()) or "upstream defaults"


KUBE_API_QPS = 1000.0
"""Default of ``--kube-api-qps`` (kube-controller-manager: 20, the kubelet: 50). Measured
(docs/decisions.md, client limits): unthrottled, the kubelet of a 5,000-pod rollout sends about
900 requests/s on average and the controllers about 600; at 50 the kubelet alone needs 80 s to
send what a 1,000-pod scale-up takes 4 s to do."""
KUBE_API_BURST = 2000
"""Default of ``--kube-api-burst`` (kube-controller-manager: 30, the kubelet: 100): two seconds
at the default rate, so that a phase's first seconds above the average are not throttled."""


def client_limit_options(command: F) -> F:
    """Add ``--kube-api-qps`` and ``--kube-api-burst`` to a command."""
    command = click.option("--kube-api-burst", default=KUBE_API_BURST, show_default=True, type=click.IntRange(1),
                           help="Requests the client may send at once before --kube-api-qps applies "
                                "(kube-controller-manager: 30).")(command)
    return click.option("--kube-api-qps", default=KUBE_API_QPS, show_default=True, type=float,
                        help="Requests per second the client sends to the API server at most, each component "
                             "its own (kube-controller-manager: 20); 0 or less: no limit.")(command)


def limited(config: ClientConfig, qps: float, burst: int) -> ClientConfig:
    """``config`` with the ``--kube-api-qps``/``--kube-api-burst`` limits."""
    import dataclasses

    return dataclasses.replace(config, qps=qps, burst=burst)


HARD_STOP_SECONDS = 4.5
"""Seconds after SIGTERM at which a client process (controllers, kubelet) exits whatever it is
doing: its manager abandons in-flight work after ``ManagerOptions.shutdown_timeout`` (2 s), and
this is the backstop for anything that still does not return (a thread, a stuck close)."""


def _exit_now(seconds: float) -> None:
    sys.stderr.write(f"kubeloop: still stopping {seconds:g}s after the signal; exiting now\n")
    sys.stderr.flush()
    os._exit(1)


@contextlib.contextmanager
def stop_on_signals(hard_stop: float | None = None) -> Iterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (call from the event loop).

    With ``hard_stop``, the first signal also starts a timer that ends the process that many
    seconds later if it has not exited by then (it holds no store: nothing is lost that a
    restart does not list again).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    timers: list[threading.Timer] = []

    def on_signal() -> None:
        stop.set()
        if hard_stop is not None and not timers:
            timer = threading.Timer(hard_stop, _exit_now, args=(hard_stop,))
            timer.daemon = True
            timer.start()
            timers.append(timer)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal)
    try:
        yield stop
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


KUBECONFIG_HELP = ("Kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config, then the "
                   "in-cluster service account; `kubeloop up` writes DATA_DIR/kubeconfig).")


def kubeconfig_option(function: Any) -> Any:
    """``--kubeconfig``, optional, for every command that talks to a cluster."""
    return click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                        help=KUBECONFIG_HELP)(function)


def load_client_config(kubeconfig: Path | None) -> ClientConfig:
    """The client settings of ``kubeconfig``, or, without one, of wherever a controller looks
    (:func:`kubeloop.client.load_config`); a usage error (no stack trace) if unusable."""
    from kubeloop.client import ConfigError, load_config, load_kubeconfig

    try:
        return load_kubeconfig(str(kubeconfig)) if kubeconfig is not None else load_config()
    except ConfigError as exc:
        where = kubeconfig if kubeconfig is not None else "no kubeconfig given"
        raise click.ClickException(f"{where}: {exc} (pass --kubeconfig)") from None


def controllers_help() -> str:
    """The ``--controllers`` help, naming every controller."""
    from kubeloop.controllers import CONTROLLERS

    return f"Comma-separated controller names ({', '.join(CONTROLLERS)}); all of them when omitted."


async def check_cluster(client: ApiClient) -> None:
    """One request before anything starts, so that the first error names its cause: a server
    that cannot be reached, a certificate not trusted, credentials refused (401)."""
    from kubeloop.client import CertificateError, ConnectError, TransportError, Unauthorized

    server = client.config.server
    try:
        await client.request_json("GET", "/api")
    except CertificateError as exc:
        raise click.ClickException(f"the API server at {server} is not trusted by the kubeconfig's CA: {exc}. "
                                   "Use the kubeconfig that cluster wrote.") from None
    except Unauthorized:
        raise click.ClickException(
            f"the API server at {server} refused the kubeconfig's credentials (401 Unauthorized): its token or "
            "client certificate is wrong or has expired. Use the kubeconfig that cluster wrote (`kubeloop up` and "
            "`kubeloop server` write DATA_DIR/kubeconfig), or a fresh token.") from None
    except (ConnectError, TransportError) as exc:
        raise click.ClickException(f"cannot reach the API server at {server}: {exc}. Is it running, and is "
                                   "this its address?") from None


async def start_manager(manager: Manager) -> None:
    """Start ``manager``; a clean error if its caches cannot sync (server unreachable, forbidden)."""
    try:
        await manager.start()
    except TimeoutError as exc:
        raise click.ClickException(f"{exc}: see the warnings above for why (often a missing RBAC permission, "
                                   "or the server stopped answering)") from None


async def serve_until_stopped(manager: Manager, stop: asyncio.Event, announce: Callable[[], None]) -> None:
    """Start ``manager``, ``announce`` it, and run until ``stop`` is set; then stop the manager
    (bounded by its ``shutdown_timeout``).

    A signal ends the start too: with the API server down the caches never sync, and the
    process must not wait out ``cache_sync_timeout`` before it honours SIGTERM.
    """

    async def serve() -> None:
        await start_manager(manager)
        announce()
        await asyncio.Event().wait()

    serving = asyncio.ensure_future(serve())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            serving.result()  # a start that failed (caches never synced) is the command's error
    finally:
        for task in (serving, stopping):
            task.cancel()
        await asyncio.gather(serving, stopping, return_exceptions=True)
        await manager.stop()


async def refuse_beside_kube_controller_manager(client: ApiClient, names: Sequence[str]) -> None:
    """A usage error when ``names`` hold a controller kube-controller-manager runs too and its
    leader Lease is held; a warning when the Lease cannot be read (forbidden: not checked)."""
    from datetime import UTC, datetime

    from kubeloop.client import LEASES, is_forbidden, is_not_found
    from kubeloop.controllers.coexistence import (
        KCM_LEASE_NAME,
        KCM_LEASE_NAMESPACE,
        conflicting,
        lease_holder,
        refusal,
    )

    if not conflicting(names):
        return
    try:
        lease = await client.get(LEASES, KCM_LEASE_NAME, namespace=KCM_LEASE_NAMESPACE)
    except Exception as exc:
        if is_not_found(exc):
            return
        if is_forbidden(exc):
            click.echo(f"kubeloop: warning: cannot read the Lease {KCM_LEASE_NAMESPACE}/{KCM_LEASE_NAME} (forbidden), "
                       "so cannot tell whether kube-controller-manager runs here", err=True)
            return
        raise
    holder = lease_holder(lease, datetime.now(UTC))
    if holder is not None:
        raise click.ClickException(refusal(names, holder))


async def _run(kubeconfig: Path | None, names: Sequence[str], leader_elect: bool, health_port: int | None,
               feature_gates: Mapping[str, bool], qps: float = KUBE_API_QPS, burst: int = KUBE_API_BURST, *,
               lease_namespace: str = "kube-system", health_host: str = "127.0.0.1", force: bool = False) -> None:
    from kubeloop.client import ApiClient
    from kubeloop.controllers import add_controllers
    from kubeloop.runtime.manager import Manager, ManagerOptions

    async with ApiClient(limited(load_client_config(kubeconfig), qps, burst)) as client:
        await check_cluster(client)
        if not force:
            await refuse_beside_kube_controller_manager(client, names)
        manager = Manager(client, ManagerOptions(name="kubeloop-controller-manager", leader_election=leader_elect,
                                                 lease_namespace=lease_namespace, health_host=health_host,
                                                 health_port=health_port))
        await add_controllers(manager, names, feature_gates=feature_gates)
        with stop_on_signals(HARD_STOP_SECONDS) as stop:
            await serve_until_stopped(manager, stop, lambda: click.echo(
                f"kubeloop controllers running: {', '.join(names) or '(none)'}"
                f"; feature gates: {describe_feature_gates(feature_gates)}"
                + (" (waiting to lead)" if leader_elect else ""), err=True))
    click.echo("kubeloop controllers stopped", err=True)


@click.command()
@kubeconfig_option
@click.option("--controllers", "controllers_text", default=None, metavar="LIST", help=controllers_help())
@click.option("--leader-elect", is_flag=True, help="Run only while holding the leader Lease.")
@click.option("--leader-elect-namespace", default="kube-system", show_default=True, metavar="NAMESPACE",
              help="Namespace of the leader Lease (kubeloop-controller-manager-leader).")
@click.option("--health-port", type=click.IntRange(0, 65535), default=None,
              help="Serve /healthz, /readyz (caches synced) and /metrics on this port.")
@click.option("--health-host", default="127.0.0.1", show_default=True,
              help="Address the health port binds (0.0.0.0 in a pod, for the kubelet's probes).")
@click.option("--feature-gates", "feature_gates_text", default=None, metavar="NAME=BOOL,...", help=FEATURE_GATES_HELP)
@click.option("--force", is_flag=True,
              help="Start the replicaset, deployment or garbagecollector controller even though "
                   "kube-controller-manager holds its leader Lease (kube-system/kube-controller-manager).")
@client_limit_options
def controllers(kubeconfig: Path | None, controllers_text: str | None, leader_elect: bool,
                leader_elect_namespace: str, health_port: int | None, health_host: str,
                feature_gates_text: str | None, force: bool, kube_api_qps: float, kube_api_burst: int) -> None:
    """Run kubeloop's controllers (ReplicaSet, Deployment, garbage collector, ...) until interrupted."""
    from kubeloop.cluster.supervisor import follow_supervisor

    follow_supervisor()
    names = controller_names(controllers_text)
    gates = feature_gate_settings(feature_gates_text)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    use_cache_friendly_gc()
    run_event_loop(_run(kubeconfig, names, leader_elect, health_port, gates, kube_api_qps, kube_api_burst,
                        lease_namespace=leader_elect_namespace, health_host=health_host, force=force))
