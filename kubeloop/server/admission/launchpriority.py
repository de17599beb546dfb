"""Container launch priority: OpenKruise's pod webhook, as create-time admission of pods.

A pod may ask for its containers to start in an order, in one of two ways:

* the annotation ``apps.kruise.io/container-launch-priority: Ordered`` — spec order, the
  first container highest (priorities 0, -1, -2, ...); this wins over any env;
* a ``KRUISE_CONTAINER_PRIORITY`` env holding an integer on some containers (a container
  without one counts as 0). An order exists only when some value is not 0 and the values
  are not all equal.

When there is an order and the pod has more than one container, every container gets a
``KRUISE_CONTAINER_BARRIER`` env appended: a ``configMapKeyRef`` into the ConfigMap
``<pod>-barrier`` with key ``p_<priority>``. The node agent holds each container until its
key exists, and in-place updates read the same env to restart containers in batches.

Upstream this is kruise-manager's mutating pod webhook, which sees only creations of pods
(never updates or subresources); so the barrier is decided once, from the pod as created, and
pods get it whoever creates them. A priority env that is not a Go ``int`` (``strconv.Atoi``)
makes the webhook fail, which the API server reports as a 500 ``InternalError`` naming the
webhook. Upstream's webhook draws a name itself for a pod that has only ``generateName``; here
the name has already been drawn when create admission runs, so the barrier uses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.status import ApiError, go_value

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


class PriorityParseError(ValueError):
    """A priority env value Go's ``strconv.Atoi`` refuses; the message is Go's."""


def parse_go_int(text: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform: optional sign, ASCII decimal digits, int64 range."""
    if _DECIMAL.fullmatch(text) is None:
        raise PriorityParseError(f"strconv.Atoi: parsing {go_value(text)}: invalid syntax")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise PriorityParseError(f"strconv.Atoi: parsing {go_value(text)}: value out of range")
    return value


def requested_priorities(containers: list[Any]) -> list[int] | None:
    """Per-container priorities from the priority env, or ``None`` when they ask for no order.

    Every priority env is parsed (the last of a container counts); one that does not parse
    raises :class:`PriorityParseError`.
    """
    priorities = [0] * len(containers)
    asked = False
    for position, container in enumerate(containers):
        envs = container.get("env") if isinstance(container, Mapping) else None
        for env in envs if isinstance(envs, list) else []:
            if not isinstance(env, Mapping) or env.get("name") != kruise.CONTAINER_PRIORITY_ENV:
                continue
            value = env.get("value")
            priorities[position] = parse_go_int(value if isinstance(value, str) else "")
            asked = asked or priorities[position] != 0
    if not asked or len(set(priorities)) <= 1:
        return None
    return priorities


def barrier_env(pod_name: str, priority: int) -> dict[str, Any]:
    """The barrier env of a container of ``priority`` in the pod named ``pod_name``."""
    return {
        "name": kruise.CONTAINER_BARRIER_ENV,
        "valueFrom": {
            "configMapKeyRef": {
                "name": f"{pod_name}{kruise.BARRIER_CONFIGMAP_SUFFIX}",
                "key": f"{kruise.BARRIER_KEY_PREFIX}{priority}",
            }
        },
    }


def _webhook_failure(message: str) -> ApiError:
    """How the API server answers when a mutating webhook fails with a 500 of its own."""
    denied = f"admission webhook {go_value(kruise.POD_MUTATING_WEBHOOK)} denied the request: {message}"
    return ApiError(500, "InternalError", f"Internal error occurred: {denied}", {"causes": [{"message": denied}]})


def add_barrier_env(pod: dict[str, Any]) -> bool:
    """Append the barrier env to the containers of the new ``pod`` (in place) when it asks for an
    order; whether it did. The webhook's own step (kruise ``containerLaunchPriorityInitialization``),
    shared by the in-process admission below and ``kubeloop webhook``.

    Raises :class:`PriorityParseError` for a priority env that is not an integer.
    """
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or len(containers) == 1:
        return False
    metadata = pod.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    annotations = metadata.get("annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    if annotations.get(kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION) == kruise.CONTAINER_LAUNCH_ORDERED:
        priorities: list[int] | None = [-position for position in range(len(containers))]
    else:
        priorities = requested_priorities(containers)
    if priorities is None:
        return False
    name = metadata.get("name")
    name = name if isinstance(name, str) else ""
    for container, priority in zip(containers, priorities, strict=True):
        if not isinstance(container, dict):
            continue
        envs = container.get("env")
        if envs is None:
            container["env"] = [barrier_env(name, priority)]
        elif isinstance(envs, list):
            container["env"] = [*envs, barrier_env(name, priority)]
    return True


def inject_launch_priority(pod: dict[str, Any]) -> None:
    """Append the barrier env to the containers of the new ``pod`` (in place) when it asks for an order.

    Raises :class:`~kubeloop.api.status.ApiError` (500) for a priority env that is not an integer.
    """
    try:
        add_barrier_env(pod)
    except PriorityParseError as error:
        raise _webhook_failure(str(error)) from None
