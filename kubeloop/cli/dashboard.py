"""``kubeloop dashboard``: the live rollout page for any cluster.

It watches Deployments, ReplicaSets, pods and events (and CloneSets with their revisions when
the server has them) with the kubeconfig's credentials and serves one page that follows them
live (see :mod:`kubeloop.dashboard`). It writes to the cluster only when the page's pause,
resume or undo button is pressed with the cluster's bearer token (the kubeconfig's).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import click

from kubeloop.cli.controllers import LOG_FORMAT, stop_on_signals


async def _serve(kubeconfig: Path | None, host: str, port: int, namespace: str | None) -> None:
    from kubeloop.client import ApiClient, load_config, load_kubeconfig
    from kubeloop.dashboard import start_dashboard

    config = load_kubeconfig(str(kubeconfig)) if kubeconfig is not None else load_config()
    async with ApiClient(config) as client:
        # Fail now on a wrong address or credentials, rather than serve a page that never fills.
        await client.get_version()
        with stop_on_signals() as stop:
            url, stop_dashboard = await start_dashboard(client, host, port, namespace=namespace)
            try:
                click.echo(f"kubeloop dashboard: {url}")
                await stop.wait()
            finally:
                await stop_dashboard()
    click.echo("kubeloop dashboard stopped", err=True)


@click.command()
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config or in-cluster).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="TCP port of the page (0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address the page binds; off loopback the page asks for a token (the URL printed carries it).")
@click.option("-n", "--namespace", default=None, help="Show one namespace only (default: all).")
def dashboard(kubeconfig: Path | None, port: int, host: str, namespace: str | None) -> None:
    """Serve a live web view of every Deployment and CloneSet rollout (pause/resume/undo need the token)."""
    from kubeloop.client import ApiException, ConfigError, TransportError

    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT)
    try:
        asyncio.run(_serve(kubeconfig, host, port, namespace))
    except (ApiException, ConfigError, TransportError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
