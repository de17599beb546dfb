"""``kubeloop kubelet``: the simulated nodes, as a process of their own.

It schedules pending pods onto ``kubeloop-node-1..N`` and runs them there (no containers:
statuses move on a clock; see ``kubeloop.kubelet``). Point it at the embedded server's
``DATA_DIR/kubeconfig``. The ``--nodes`` and ``--pod-*-delay`` options are shared with
``kubeloop up``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kubeloop.cli.controllers import (
    HARD_STOP_SECONDS,
    KUBE_API_BURST,
    KUBE_API_QPS,
    LOG_FORMAT,
    check_cluster,
    client_limit_options,
    kubeconfig_option,
    limited,
    load_client_config,
    serve_until_stopped,
    stop_on_signals,
)
from kubeloop.cli.eventloop import run as run_event_loop
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc

if TYPE_CHECKING:
    from kubeloop.kubelet import KubeletConfig

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_START_DELAY = 0.5
DEFAULT_READY_DELAY = 0.5
DEFAULT_TERMINATION_DELAY = 1.0


def kubelet_options(command: F) -> F:
    """Add ``--nodes`` and the ``--pod-*-delay`` options to a command."""
    seconds = click.FloatRange(0.0)
    options = [
        click.option("--nodes", default=3, show_default=True, type=click.IntRange(0, 250),
                     help="Simulated nodes kubeloop-node-1..N."),
        click.option("--pod-start-delay", default=DEFAULT_START_DELAY, show_default=True, type=seconds,
                     help="Seconds until a placed pod's containers run (annotation sim.kubeloop.io/start-delay)."),
        click.option("--pod-ready-delay", default=DEFAULT_READY_DELAY, show_default=True, type=seconds,
                     help="Seconds from running to ready (annotation sim.kubeloop.io/ready-delay)."),
        click.option("--pod-termination-delay", default=DEFAULT_TERMINATION_DELAY, show_default=True, type=seconds,
                     help="Seconds a deleted pod stays Terminating, at most its grace period "
                          "(annotation sim.kubeloop.io/termination-delay)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def kubelet_config(nodes: int, pod_start_delay: float, pod_ready_delay: float,
                   pod_termination_delay: float) -> KubeletConfig:
    from kubeloop.kubelet import BehaviourDefaults, KubeletConfig

    defaults = BehaviourDefaults(start_delay=pod_start_delay, ready_delay=pod_ready_delay,
                                 termination_delay=pod_termination_delay)
    return KubeletConfig(nodes=nodes, defaults=defaults)


async def _run(kubeconfig: Path | None, config: KubeletConfig, health_port: int | None,
               qps: float = KUBE_API_QPS, burst: int = KUBE_API_BURST) -> None:
    from kubeloop.client import ApiClient
    from kubeloop.kubelet import Kubelet
    from kubeloop.runtime.manager import Manager, ManagerOptions

    async with ApiClient(limited(load_client_config(kubeconfig), qps, burst)) as client:
        await check_cluster(client)
        manager = Manager(client, ManagerOptions(name="kubeloop-kubelet", health_port=health_port))
        kubelet = Kubelet(client, config)
        await kubelet.setup(manager)
        with stop_on_signals(HARD_STOP_SECONDS) as stop:
            await serve_until_stopped(manager, stop,
                                      lambda: click.echo(f"kubeloop kubelet running {config.nodes} nodes", err=True))
    click.echo("kubeloop kubelet stopped", err=True)


@click.command()
@kubeconfig_option
@kubelet_options
@click.option("--health-port", type=click.IntRange(0, 65535), default=None,
              help="Serve /healthz, /readyz (caches synced) and /metrics on this port.")
@client_limit_options
@click.option("--control-plane-pods", is_flag=True, hidden=True,
              help="Publish mirror pods of the control plane in kube-system (as `kubeloop up` runs it).")
def kubelet(kubeconfig: Path | None, nodes: int, pod_start_delay: float, pod_ready_delay: float,
            pod_termination_delay: float, health_port: int | None, kube_api_qps: float, kube_api_burst: int,
            control_plane_pods: bool) -> None:
    """Run the simulated kubelet (scheduler and nodes) until interrupted."""
    import dataclasses

    from kubeloop.cluster.supervisor import follow_supervisor

    follow_supervisor()
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    config = dataclasses.replace(kubelet_config(nodes, pod_start_delay, pod_ready_delay, pod_termination_delay),
                                 control_plane_pods=control_plane_pods)
    use_cache_friendly_gc()
    run_event_loop(_run(kubeconfig, config, health_port, kube_api_qps, kube_api_burst))
