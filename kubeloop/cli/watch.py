"""``kubeloop watch [KIND/NAME]``: a rollout, live in the terminal, until it completes or fails.

Like ``kubectl rollout status`` it exits 0 once the rollout completes and 1 once its progress
deadline passes (or ``--timeout`` runs out, or the workload does not exist), but it draws the
state as it goes: progress bars and one tile per pod, coloured by revision (see
:mod:`kubeloop.dashboard.terminal`). Without an argument it follows every Deployment and
CloneSet of the namespace and exits when all of them are done; with ``--follow`` it keeps
watching (new rollouts too) until interrupted. When the output is not a terminal it prints one
line per change of kubectl's status message instead of redrawing. Ctrl-C stops it quietly
(exit 130). It only reads the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubeloop.dashboard.feed import DashboardFeed

import click

INTERRUPT_GRACE_SECONDS = 5.0
"""How long the clean-up after Ctrl-C may take before the process ends anyway."""


async def _bounded_after_interrupt(main: Any) -> int:
    """``main``, ending the process with 130 :data:`INTERRUPT_GRACE_SECONDS` after a Ctrl-C should
    it not have ended by then: Ctrl-C must end the command. ``asyncio.run`` answers the first
    SIGINT by cancelling ``main`` (its handler, installed before this runs, is kept and called);
    the clean-up that follows (closing the watches and the client's TLS connections to a busy
    server), or output blocked on a terminal that is not read, must not hold the process. In CI,
    under load, one such exit took over a minute."""
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        timer = threading.Timer(INTERRUPT_GRACE_SECONDS, os._exit, (130,))
        timer.daemon = True
        timer.start()
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    code: int = await main
    return code


async def _watch(kubeconfig: Path | None, namespace: str | None, target: tuple[str, str] | None,
                 timeout: float | None, follow: bool = False) -> int:
    from rich.console import Console
    from rich.live import Live

    from kubeloop.client import ApiClient, load_config, load_kubeconfig
    from kubeloop.dashboard.feed import DashboardFeed, watch_cluster
    from kubeloop.dashboard.model import ClusterModel
    from kubeloop.dashboard.terminal import pods_match_status, render_views, rollout_exit_code, status_lines

    config = load_kubeconfig(str(kubeconfig)) if kubeconfig is not None else load_config()
    ns = namespace or config.namespace or "default"
    console = Console()
    async with ApiClient(config) as client:
        await client.get_version()  # fail fast on a wrong address or credentials
        feed = DashboardFeed(ClusterModel(namespace=ns), interval=0.05)
        stop_watching = await watch_cluster(client, feed, namespace=ns)
        try:
            feed.rebuild()

            def chosen() -> list[dict[str, Any]]:
                views = feed.views()
                if target is None:
                    return views
                return [v for v in views if (v["kind"], v["name"]) == target]

            if target is not None and not chosen():
                console.print(f'Error: {target[0].lower()} "{target[1]}" not found in namespace "{ns}"',
                              style="red")
                return 1
            header = f"kubeloop watch: namespace {ns}"
            if not console.is_terminal:
                return await _print_lines(feed, chosen, timeout, follow)
            code: int | None = None
            with Live(render_views(chosen(), header), console=console, auto_refresh=False) as live:
                try:
                    async with asyncio.timeout(timeout):
                        feed.start()
                        async for _ in feed.subscribe():
                            views = chosen()
                            live.update(render_views(views, header), refresh=True)
                            code = rollout_exit_code(views)
                            if code is not None and not follow:
                                break
                except TimeoutError:
                    code = None
                if code is not None:
                    await _settle(feed, lambda: all(pods_match_status(v) for v in chosen()))
                    live.update(render_views(chosen(), header), refresh=True)
            console.print()
            for line in status_lines(chosen()):
                console.print(line)
            if code is None:
                console.print(f"error: timed out after {timeout}s waiting for the rollout to finish", style="red")
                return 1
            return code
        finally:
            await feed.stop()
            await stop_watching()


async def _print_lines(feed: DashboardFeed, chosen: Callable[[], list[dict[str, Any]]], timeout: float | None,
                       follow: bool) -> int:
    """The output for a pipe or a file: each new status line once, as ``kubectl rollout status``
    writes it, then the verdict."""
    from kubeloop.dashboard.terminal import rollout_exit_code, status_lines

    printed: set[str] = set()
    last: list[str] = []

    def emit() -> None:
        nonlocal last
        lines = status_lines(chosen())
        for line in lines:
            if line not in last and (line not in printed or follow):
                click.echo(line)
                printed.add(line)
        last = lines

    code: int | None = None
    try:
        async with asyncio.timeout(timeout):
            emit()
            feed.start()
            async for _ in feed.subscribe():
                emit()
                code = rollout_exit_code(chosen())
                if code is not None and not follow:
                    break
    except TimeoutError:
        click.echo(f"error: timed out after {timeout}s waiting for the rollout to finish", err=True)
        return 1
    return 1 if code is None else code


SETTLE_SECONDS = 2.0
"""How long the final frame may wait for the pods' watch to catch up with the workload's status."""


async def _settle(feed: DashboardFeed, agree: Callable[[], bool]) -> None:
    """Follow the feed until ``agree()`` or :data:`SETTLE_SECONDS` pass, whichever comes first."""
    if agree():
        return
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(SETTLE_SECONDS):
            async for _ in feed.subscribe():
                if agree():
                    return


@click.command()
@click.argument("target", required=False, metavar="[KIND/NAME]")
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config or in-cluster).")
@click.option("-n", "--namespace", default=None, help="Namespace (default: the kubeconfig context's).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Give up (exit 1) after this many seconds.")
@click.option("-f", "--follow", is_flag=True,
              help="Keep watching after the rollouts complete (new rollouts too), until interrupted.")
def watch(target: str | None, kubeconfig: Path | None, namespace: str | None, timeout: float | None,
          follow: bool) -> None:
    """Draw a rollout live until it completes (exit 0) or exceeds its progress deadline (exit 1).

    KIND/NAME is deployment/NAME (deploy/NAME) or cloneset/NAME; without it, every Deployment and
    CloneSet of the namespace is followed.
    """
    from kubeloop.client import ApiException, ConfigError, TransportError
    from kubeloop.dashboard.terminal import parse_target

    try:
        chosen = parse_target(target) if target is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="KIND/NAME") from None
    try:
        code = asyncio.run(_bounded_after_interrupt(_watch(kubeconfig, namespace, chosen, timeout, follow)))
    except (ApiException, ConfigError, TransportError) as exc:
        click.echo(f"Error: {exc}", err=True)
        code = 1
    except KeyboardInterrupt:
        code = 130  # Ctrl-C is how --follow ends: no "Aborted!"
    sys.exit(code)
