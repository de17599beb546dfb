"""Container launch priority env, as OpenKruise's pod webhook injects it at pod creation.

Upstream, a mutating pod webhook rewrites a new pod whose containers ask for a launch order:
either the pod annotation ``apps.kruise.io/container-launch-priority: Ordered`` (containers
start in spec order) or a ``KRUISE_CONTAINER_PRIORITY`` env with an integer on some container
(unset counts as 0; if every container ends up with the same priority nothing is injected).
Every container then gets a ``KRUISE_CONTAINER_BARRIER`` env: a ``configMapKeyRef`` into the
ConfigMap ``<pod>-barrier`` with key ``p_<priority>``. The node agent holds each container
until its key exists, and the in-place update reads the same env to split containers into
batches (:func:`kubeloop.controllers.cloneset.inplace.container_priority`).

Our API server has no pod webhook for this, so the CloneSet controller applies the same
rewrite to the pods it creates (:func:`inject_launch_priority`). Pods created by other
clients do not get it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import kruise

LAUNCH_PRIORITY_ANNOTATION = "apps.kruise.io/container-launch-priority"
LAUNCH_ORDERED = "Ordered"


def _requested_priorities(containers: list[dict[str, Any]]) -> list[int] | None:
    """Per-container priorities from ``KRUISE_CONTAINER_PRIORITY``; ``None`` when no order is asked.

    A value that is not an integer is ignored (upstream's webhook rejects the pod; the
    CloneSet's own admission does not check env values, so we must not fail pod creation).
    """
    priorities = [0] * len(containers)
    for index, container in enumerate(containers):
        for env in container.get("env") or ():
            if isinstance(env, Mapping) and env.get("name") == kruise.CONTAINER_PRIORITY_ENV:
                try:
                    priorities[index] = int(str(env.get("value") or ""))
                except ValueError:
                    continue
    if len(set(priorities)) == 1:
        return None
    return priorities


def barrier_env(pod_name: str, priority: int) -> dict[str, Any]:
    """The barrier env var for a container of ``priority`` in pod ``pod_name``."""
    return {"name": kruise.CONTAINER_BARRIER_ENV,
            "valueFrom": {"configMapKeyRef": {"name": f"{pod_name}-barrier", "key": f"p_{priority}"}}}


def inject_launch_priority(pod: dict[str, Any]) -> None:
    """Add the barrier env to the containers of the new ``pod`` (mutated) when it asks for an order."""
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or len(containers) < 2:
        return
    metadata = pod.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    if annotations.get(LAUNCH_PRIORITY_ANNOTATION) == LAUNCH_ORDERED:
        priorities: list[int] | None = [-index for index in range(len(containers))]
    else:
        priorities = _requested_priorities(containers)
    if priorities is None:
        return
    name = str(metadata.get("name") or "")
    for container, priority in zip(containers, priorities, strict=True):
        container["env"] = [*(container.get("env") or []), barrier_env(name, priority)]
