"""``kubeloop server``: run the embedded Kubernetes-compatible API server until interrupted."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import click

from kubeloop.cli.eventloop import run as run_event_loop
from kubeloop.cli.starterrors import start_failure
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc
from kubeloop.server.app import AUTHORIZATION_MODES, KubeServer, ServerConfig
from kubeloop.server.storage import DEFAULT_WATCH_CACHE_SIZE


async def _serve(config: ServerConfig) -> None:
    server = KubeServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # Before the start, which writes the kubeconfig others wait for: a SIGINT or SIGTERM that
    # arrives as soon as it exists stops the server cleanly once it has started.
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        try:
            await server.start()
        except Exception as exc:
            failure = start_failure(exc, config.data_dir, config.host, config.port)
            if failure is None:
                raise
            raise failure from None
        click.echo(f"kubeloop server listening on {server.url}", err=True)
        click.echo(f"kubeconfig: {server.kubeconfig_path}", err=True)
        try:
            await stop.wait()
        finally:
            await server.stop()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    click.echo("kubeloop server stopped", err=True)


@click.command()
@click.option("--data-dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the database, credentials and the kubeconfig.")
@click.option("--port", default=6443, show_default=True, type=click.IntRange(0, 65535),
              help="TCP port to serve HTTPS on (0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--memory", is_flag=True, help="Keep objects in memory only (nothing survives a restart).")
@click.option("--watch-cache-size", default=DEFAULT_WATCH_CACHE_SIZE, show_default=True, type=click.IntRange(1),
              help="Changes kept per resource type for watches; older resourceVersions get 410 Gone.")
@click.option("--client-cert", is_flag=True,
              help="Write a kubeconfig with an admin client certificate (CN kubernetes-admin, O system:masters) "
                   "instead of the bearer token, as kind does.")
@click.option("--authorization-mode", type=click.Choice(AUTHORIZATION_MODES), default="RBAC", show_default=True,
              help="How requests of users outside system:masters are authorized.")
@click.option("--kruise-admission/--no-kruise-admission", default=True, show_default=True,
              help="Run OpenKruise's CloneSet and pod admission in-process; without it, as a real cluster, "
                   "they come from `kubeloop webhook` once its webhook configurations exist.")
def server(data_dir: Path, port: int, host: str, memory: bool, watch_cache_size: int, client_cert: bool,
           authorization_mode: str, kruise_admission: bool) -> None:
    """Run the embedded API server (HTTPS, bearer token; writes DATA_DIR/kubeconfig)."""
    from kubeloop.cluster.supervisor import follow_supervisor

    follow_supervisor()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = ServerConfig(data_dir=data_dir, host=host, port=port, memory=memory, watch_cache_size=watch_cache_size,
                          client_cert=client_cert, authorization_mode=authorization_mode,
                          kruise_admission=kruise_admission)
    use_cache_friendly_gc()
    run_event_loop(_serve(config))
