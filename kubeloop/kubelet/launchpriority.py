"""Container launch priority: which containers of a pod may be created yet.

OpenKruise lets a pod's containers start in order. Its pod webhook turns the
``KRUISE_CONTAINER_PRIORITY`` env (or the ordered-launch annotation) into a
``KRUISE_CONTAINER_BARRIER`` env on every container: a ``configMapKeyRef`` with key
``p_<priority>`` into the ConfigMap ``<pod>-barrier``. The kubelet cannot create a container
until that key exists, and kruise-manager's container-launch-priority controller adds the key
of a priority once it is the highest priority among the pod's containers that are not ready
(so every container of a higher priority is ready). The simulated kubelet plays both parts: a
container with a barrier is created only after all containers with a higher barrier priority
are ready.

The barrier holds only the first launch: once a key exists it stays, so later restarts
(crash or in-place update) are not held; ordering in-place restarts is the CloneSet
controller's job (its container batches).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.api import kruise

_BARRIER_KEY = re.compile(r"^p_(-?[0-9]+)$")


def barrier_priority(container: Mapping[str, Any]) -> int | None:
    """The priority in the container's barrier env (``None``: the container has no barrier)."""
    for env in container.get("env") or ():
        if not isinstance(env, Mapping) or env.get("name") != kruise.CONTAINER_BARRIER_ENV:
            continue
        value_from = env.get("valueFrom")
        ref = value_from.get("configMapKeyRef") if isinstance(value_from, Mapping) else None
        match = _BARRIER_KEY.match(str(ref.get("key") or "")) if isinstance(ref, Mapping) else None
        if match:
            return int(match.group(1))
    return None


def barrier_opens(priority: int | None, higher_ready_times: Iterable[float | None]) -> float | None:
    """When a container's barrier opens, given the ready times of the higher-priority containers.

    No barrier opens at once (``-inf``). Otherwise it opens at the latest of those ready
    times; ``None`` when one of them is not ready and has no ready time yet (the barrier
    stays shut until that changes).
    """
    if priority is None:
        return float("-inf")
    opens = float("-inf")
    for ready_at in higher_ready_times:
        if ready_at is None:
            return None
        opens = max(opens, ready_at)
    return opens
