"""``kubeloop controllers``: run kubeloop's workload controllers against any cluster.

The controllers are ordinary API clients: point them at the embedded server (its
``DATA_DIR/kubeconfig``) or at a real cluster. ``--leader-elect`` lets several copies run
with one active, through a Lease in ``kube-system``.

This module also holds what the process-running commands share: the ``--controllers`` option
and the wait for SIGINT/SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from kubeloop.client import ClientConfig
    from kubeloop.runtime.manager import Manager

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


@contextlib.contextmanager
def stop_on_signals() -> Iterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (call from the event loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        yield stop
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


def load_client_config(kubeconfig: Path) -> ClientConfig:
    """The client settings of a kubeconfig file; a usage error (no stack trace) if unusable."""
    from kubeloop.client import ConfigError, load_kubeconfig

    try:
        return load_kubeconfig(str(kubeconfig))
    except ConfigError as exc:
        raise click.ClickException(f"{kubeconfig}: {exc}") from None


async def start_manager(manager: Manager) -> None:
    """Start ``manager``; a clean error if its caches cannot sync (server unreachable, forbidden)."""
    try:
        await manager.start()
    except TimeoutError as exc:
        raise click.ClickException(f"{exc} (is the API server reachable?)") from None


async def _run(kubeconfig: Path, names: Sequence[str], leader_elect: bool, health_port: int | None) -> None:
    from kubeloop.client import ApiClient
    from kubeloop.controllers import add_controllers
    from kubeloop.runtime.manager import Manager, ManagerOptions

    async with ApiClient(load_client_config(kubeconfig)) as client:
        manager = Manager(client, ManagerOptions(name="kubeloop-controller-manager", leader_election=leader_elect,
                                                 health_port=health_port))
        await add_controllers(manager, names)
        with stop_on_signals() as stop:
            try:
                await start_manager(manager)
                click.echo(f"kubeloop controllers running: {', '.join(names) or '(none)'}"
                           + (" (waiting to lead)" if leader_elect else ""), err=True)
                await stop.wait()
            finally:
                await manager.stop()
    click.echo("kubeloop controllers stopped", err=True)


@click.command()
@click.option("--kubeconfig", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Kubeconfig of the cluster to control (e.g. DATA_DIR/kubeconfig of `kubeloop server`).")
@click.option("--controllers", "controllers_text", default=None, metavar="LIST",
              help="Comma-separated controller names; all of them when omitted.")
@click.option("--leader-elect", is_flag=True, help="Run only while holding the kube-system leader Lease.")
@click.option("--health-port", type=click.IntRange(0, 65535), default=None,
              help="Serve /healthz, /readyz (caches synced) and /metrics on this port.")
def controllers(kubeconfig: Path, controllers_text: str | None, leader_elect: bool, health_port: int | None) -> None:
    """Run kubeloop's controllers (ReplicaSet, Deployment, garbage collector, ...) until interrupted."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    asyncio.run(_run(kubeconfig, controller_names(controllers_text), leader_elect, health_port))
