"""The Events a node agent reports about a pod's containers, from two states of its memory.

``kubectl describe pod`` on a real cluster shows what the kubelet did: started a container,
backed off a crashing one, failed to pull an image, killed a container being deleted. The
simulated kubelet reports the same reasons. :func:`container_events` compares the memo before
and after a step (pure), so each transition yields its Event once, however often the pod is
reconciled.
"""

from __future__ import annotations

from typing import NamedTuple

from kubeloop.kubelet.containers import ContainerRun, RunState
from kubeloop.kubelet.podstate import PodMemo


class PodEvent(NamedTuple):
    type: str
    """``Normal`` or ``Warning``."""
    reason: str
    message: str


def _run_events(before: ContainerRun | None, after: ContainerRun) -> list[PodEvent]:
    events: list[PodEvent] = []
    if after.container_id and (before is None or before.container_id != after.container_id):
        events.append(PodEvent("Normal", "Started", f"Started container {after.name} (image {after.image})"))
    changed_state = before is None or before.state is not after.state or before.failures != after.failures
    if after.state is RunState.CRASHED and changed_state:
        events.append(PodEvent("Warning", "BackOff", f"Back-off restarting failed container {after.name}"))
    if after.state is RunState.PULL_FAILED and changed_state:
        events.append(PodEvent("Warning", "Failed", f"Failed to pull image {after.image!r} (simulated)"))
    return events


def container_events(before: PodMemo | None, after: PodMemo) -> list[PodEvent]:
    """Events for what changed from ``before`` (``None``: nothing known) to ``after``."""
    previous = {run.name: run for run in before.containers} if before is not None else {}
    events = [event for run in after.containers for event in _run_events(previous.get(run.name), run)]
    if after.deleting_since is not None and (before is None or before.deleting_since is None):
        events.extend(PodEvent("Normal", "Killing", f"Stopping container {run.name}")
                      for run in after.containers if run.state is RunState.RUNNING)
    return events
