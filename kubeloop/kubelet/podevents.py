"""The Events a node agent reports about a pod's containers, from two states of its memory.

``kubectl describe pod`` on a real cluster shows what the kubelet did: started a container,
backed off a crashing one, failed to pull an image, killed a container being deleted. The
simulated kubelet reports the same reasons. :func:`container_events` compares the memo before
and after a step (pure), so each transition yields its Event once, however often the pod is
reconciled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from kubeloop.api.status import go_quote
from kubeloop.kubelet.containers import ContainerRun, RunState
from kubeloop.kubelet.podstate import PodMemo

PULL_FAILURE = "simulated pull failure (sim.kubeloop.io)"
"""Why a pull fails on the simulated node: the annotations made it so."""


class PodEvent(NamedTuple):
    type: str
    """``Normal`` or ``Warning``."""
    reason: str
    message: str


def _run_events(before: ContainerRun | None, after: ContainerRun, pod_ref: str) -> list[PodEvent]:
    events: list[PodEvent] = []
    if after.container_id and (before is None or before.container_id != after.container_id):
        # The simulated node holds every image that is not made to fail: the kubelet's
        # "already present" path (pkg/kubelet/images/image_manager.go), then the runtime
        # manager's Created and Started (pkg/kubelet/kuberuntime/kuberuntime_container.go).
        events += [
            PodEvent("Normal", "Pulled", f"Container image {go_quote(after.image)} already present on machine"),
            PodEvent("Normal", "Created", f"Created container: {after.name}"),
            PodEvent("Normal", "Started", f"Started container {after.name}"),
        ]
    changed_state = before is None or before.state is not after.state or before.failures != after.failures
    if after.state is RunState.CRASHED and changed_state:
        events.append(PodEvent("Warning", "BackOff", f"Back-off restarting failed container {after.name} in pod "
                                                     f"{pod_ref}"))
    if after.state is RunState.PULL_FAILED and changed_state:
        image = go_quote(after.image)
        if after.failures <= 1:
            events += [PodEvent("Normal", "Pulling", f"Pulling image {image}"),
                       PodEvent("Warning", "Failed", f"Failed to pull image {image}: {PULL_FAILURE}"),
                       PodEvent("Warning", "Failed", "Error: ErrImagePull")]
        else:
            events += [PodEvent("Normal", "BackOff", f"Back-off pulling image {image}"),
                       PodEvent("Warning", "Failed", "Error: ImagePullBackOff")]
    return events


def pod_ref(pod: Mapping[str, Any]) -> str:
    """A pod as the kubelet names it in messages (``format.Pod``: ``name_namespace(uid)``)."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def container_events(before: PodMemo | None, after: PodMemo, pod: str = "") -> list[PodEvent]:
    """Events for what changed from ``before`` (``None``: nothing known) to ``after``; ``pod``
    is the pod's :func:`pod_ref`, for the messages that name it."""
    previous = {run.name: run for run in before.containers} if before is not None else {}
    events = [event for run in after.containers for event in _run_events(previous.get(run.name), run, pod)]
    if after.deleting_since is not None and (before is None or before.deleting_since is None):
        events.extend(PodEvent("Normal", "Killing", f"Stopping container {run.name}")
                      for run in after.containers if run.state is RunState.RUNNING)
    return events
