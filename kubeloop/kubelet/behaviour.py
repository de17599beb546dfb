"""How a simulated pod behaves: the ``sim.kubeloop.io/*`` annotations, with the kubelet's defaults.

There is no container runtime behind the simulated kubelet, so what a container "does" is
declared on the pod (usually through a workload's template). These annotations are a public
interface that tests and users rely on:

- ``sim.kubeloop.io/start-delay``: seconds from the pod reaching its node until containers run;
- ``sim.kubeloop.io/ready-delay``: seconds from a container running until it is ready;
- ``sim.kubeloop.io/never-ready: "true"``: containers run but never become ready;
- ``sim.kubeloop.io/crash-loop: "true"``: containers exit with an error on every start and are
  restarted with back-off (``CrashLoopBackOff``), so they are never ready;
- ``sim.kubeloop.io/image-pull-error: "true"``: images never pull (``ErrImagePull`` then
  ``ImagePullBackOff``), so containers never start;
- ``sim.kubeloop.io/missing-images``: comma-separated images that never pull (as if they did
  not exist): a container (re)started with one waits in ``ErrImagePull``/``ImagePullBackOff``;
- ``sim.kubeloop.io/post-start-delay``: seconds a container's ``lifecycle.postStart`` hook takes;
  the container is ready only after it (containers without the hook ignore it);
- ``sim.kubeloop.io/termination-delay``: seconds a deleted pod stays Terminating, capped by its
  grace period (a process that exits promptly on SIGTERM takes about a second).

Values that do not parse (a negative or non-numeric delay, a flag other than true/false) fall
back to the default rather than failing: a typo must not wedge a rollout. The reader reports
them so the kubelet can log them once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import annotations_of

PREFIX = "sim.kubeloop.io/"
START_DELAY = PREFIX + "start-delay"
READY_DELAY = PREFIX + "ready-delay"
NEVER_READY = PREFIX + "never-ready"
CRASH_LOOP = PREFIX + "crash-loop"
IMAGE_PULL_ERROR = PREFIX + "image-pull-error"
TERMINATION_DELAY = PREFIX + "termination-delay"
MISSING_IMAGES = PREFIX + "missing-images"
POST_START_DELAY = PREFIX + "post-start-delay"


@dataclass(frozen=True)
class BehaviourDefaults:
    """What a pod without annotations does (the kubelet's ``--pod-*-delay`` options)."""

    start_delay: float = 0.0
    """Seconds from the pod reaching its node until its containers run."""
    ready_delay: float = 0.0
    """Seconds from a container running until it reports ready."""
    termination_delay: float = 1.0
    """Seconds a deleted pod stays Terminating (capped by its grace period)."""


@dataclass(frozen=True)
class PodBehaviour:
    """The resolved behaviour of one pod."""

    start_delay: float
    ready_delay: float
    termination_delay: float
    never_ready: bool = False
    crash_loop: bool = False
    image_pull_error: bool = False
    missing_images: frozenset[str] = frozenset()
    post_start_delay: float = 0.0


def _seconds(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _flag(text: str) -> bool | None:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    return None


def pod_behaviour(pod: Mapping[str, Any], defaults: BehaviourDefaults) -> tuple[PodBehaviour, list[str]]:
    """The pod's behaviour and the annotations that were ignored because they do not parse.

    Each ignored entry reads ``"<annotation>=<value>"``.
    """
    annotations = annotations_of(pod)
    ignored: list[str] = []

    def seconds(key: str, default: float) -> float:
        raw = annotations.get(key)
        if raw is None:
            return default
        value = _seconds(str(raw))
        if value is None:
            ignored.append(f"{key}={raw}")
            return default
        return value

    def flag(key: str) -> bool:
        raw = annotations.get(key)
        if raw is None:
            return False
        value = _flag(str(raw))
        if value is None:
            ignored.append(f"{key}={raw}")
            return False
        return value

    behaviour = PodBehaviour(
        start_delay=seconds(START_DELAY, defaults.start_delay),
        ready_delay=seconds(READY_DELAY, defaults.ready_delay),
        termination_delay=seconds(TERMINATION_DELAY, defaults.termination_delay),
        never_ready=flag(NEVER_READY),
        crash_loop=flag(CRASH_LOOP),
        image_pull_error=flag(IMAGE_PULL_ERROR),
        missing_images=frozenset(
            part.strip() for part in str(annotations.get(MISSING_IMAGES) or "").split(",") if part.strip()
        ),
        post_start_delay=seconds(POST_START_DELAY, 0.0),
    )
    return behaviour, ignored
