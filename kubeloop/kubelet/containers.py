"""One simulated container's life: created, pulling, running, crashed, restarted.

A :class:`ContainerRun` is the kubelet's memory of one container of one pod; it is the source
of truth from which the pod status is drawn (``status.containerStatuses`` is only its
projection, because status timestamps have whole-second precision and the simulated delays
are often fractions of a second). :func:`step_container` moves a run forward to ``now`` and
says when it next needs looking at; it is a pure function of the run, the container's spec
image, the pod's behaviour, the clock reading and an id source, so every path is tested
with plain values.

States and transitions (a "start" assigns a new container id; starting a container that
already ran once counts a restart):

- ``CREATING`` until ``start_delay`` after the pod reached the node, then a start;
- a start with ``image-pull-error`` -> ``PULL_FAILED`` (retried with back-off, never runs);
  with ``crash-loop`` -> the process exits at once with code 1 -> ``CRASHED``;
  otherwise -> ``RUNNING``, ready ``ready_delay`` later unless ``never-ready``;
- ``CRASHED`` restarts when its back-off ends (10 s doubling to 5 min upstream; configurable);
- ``RUNNING`` whose spec image changed, or whose env read from pod metadata now has other
  values than it started with, is stopped (exit 0) and started again with the new image and
  values: an in-place restart, same pod, new container id, restart count + 1;
- a start of an image the pod lists as missing fails like an image-pull error; the status
  then still shows the image the previous run used (as the kubelet reports a waiting
  container from its last runtime container);
- a container with a ``postStart`` hook is ready only ``post_start_delay`` after it started
  (the kubelet runs the hook before it reports the container started);
- ``RUNNING`` whose pod gained ``crash-loop`` crashes; ``PULL_FAILED`` whose pod lost
  ``image-pull-error`` starts.

Timed transitions happen at their due time, not when the kubelet gets round to them: a late
reconcile reports the container as started when its start delay ended, so status times do
not depend on work-queue latency. Transitions caused by a change to the pod happen at ``now``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace

from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.envmeta import EnvValues

IdSource = Callable[[], str]
"""Returns a fresh container id (``containerd://<hex>``) on every call."""


class RunState(enum.Enum):
    CREATING = "creating"
    PULL_FAILED = "pull-failed"
    RUNNING = "running"
    CRASHED = "crashed"


@dataclass(frozen=True)
class BackOff:
    """Restart and image-pull back-off: ``initial`` seconds doubling up to ``maximum``."""

    initial: float = 10.0
    maximum: float = 300.0

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th consecutive failure (1 for the first)."""
        if failures <= 1:
            return min(self.initial, self.maximum)
        return min(self.initial * 2.0 ** min(failures - 1, 64), self.maximum)


@dataclass(frozen=True)
class Termination:
    """A finished run of the container (``lastState.terminated`` / ``state.terminated``)."""

    exit_code: int
    reason: str
    started_at: float
    finished_at: float
    container_id: str


@dataclass(frozen=True)
class ContainerRun:
    """What the kubelet remembers of one container."""

    name: str
    image: str
    """The image of the current run, or the image the next start will use."""
    state: RunState
    since: float
    """When the current state began."""
    container_id: str = ""
    """Id of the current (or last) run; empty until the first start."""
    started_at: float | None = None
    """When the current (or last) run started."""
    restart_count: int = 0
    last_termination: Termination | None = None
    failures: int = 0
    """Consecutive failed starts (crashes or failed pulls), for the back-off."""
    next_attempt: float | None = None
    """When a ``PULL_FAILED`` or ``CRASHED`` container is tried again."""
    env: EnvValues = ()
    """Env values read from pod metadata that the current run started with (or the next uses)."""
    ran_image: str = ""
    """The image the current (or last) run actually started with; empty until the first start."""
    hook_delay: float = 0.0
    """Seconds the current run's ``postStart`` hook takes before the container can be ready."""

    @property
    def has_started(self) -> bool:
        return bool(self.container_id)


def new_container_run(name: str, image: str, accepted_at: float) -> ContainerRun:
    """A container of a pod the kubelet just took on, waiting to be created."""
    return ContainerRun(name=name, image=image, state=RunState.CREATING, since=accepted_at)


def ready_time(run: ContainerRun, behaviour: PodBehaviour) -> float | None:
    """When a running container becomes ready (``None``: it is not running or never will be)."""
    if run.state is not RunState.RUNNING or behaviour.never_ready or run.started_at is None:
        return None
    return run.started_at + run.hook_delay + behaviour.ready_delay


def is_container_ready(run: ContainerRun, behaviour: PodBehaviour, now: float) -> bool:
    """Running, not marked never-ready, and running for its postStart hook and ready delay."""
    ready_at = ready_time(run, behaviour)
    return ready_at is not None and now >= ready_at


@dataclass(frozen=True)
class ContainerSpec:
    """What the pod spec and metadata ask of one container right now."""

    image: str
    env: EnvValues = ()
    """Current values of the env vars read from pod metadata."""
    post_start: bool = False
    """Whether the container has a ``lifecycle.postStart`` hook."""


def _pull_fails(image: str, behaviour: PodBehaviour) -> bool:
    return behaviour.image_pull_error or image in behaviour.missing_images


def _start(run: ContainerRun, spec: ContainerSpec, behaviour: PodBehaviour, now: float, new_id: IdSource,
           back_off: BackOff) -> ContainerRun:
    image = spec.image
    if _pull_fails(image, behaviour):
        failures = run.failures + 1 if run.state is RunState.PULL_FAILED else 1
        return replace(run, image=image, env=spec.env, state=RunState.PULL_FAILED, since=now, failures=failures,
                       next_attempt=now + back_off.delay(failures))
    restart_count = run.restart_count + 1 if run.has_started else run.restart_count
    hook_delay = behaviour.post_start_delay if spec.post_start else 0.0
    started = replace(run, image=image, ran_image=image, env=spec.env, state=RunState.RUNNING, since=now,
                      container_id=new_id(), started_at=now, restart_count=restart_count, next_attempt=None,
                      hook_delay=hook_delay)
    if behaviour.crash_loop:
        return _crash(started, now, back_off)
    return replace(started, failures=0)


def _crash(run: ContainerRun, now: float, back_off: BackOff) -> ContainerRun:
    failures = run.failures + 1
    ended = Termination(1, "Error", run.started_at if run.started_at is not None else now, now, run.container_id)
    return replace(run, state=RunState.CRASHED, since=now, last_termination=ended, failures=failures,
                   next_attempt=now + back_off.delay(failures))


def _next_step(run: ContainerRun, spec: ContainerSpec, behaviour: PodBehaviour, now: float, new_id: IdSource,
               back_off: BackOff) -> tuple[ContainerRun | None, float | None]:
    """One transition if one is due (new run, None), else (None, when one will be due)."""
    if run.state is RunState.CREATING:
        due = run.since + behaviour.start_delay
        if now < due:
            return None, due
        return _start(run, spec, behaviour, due, new_id, back_off), None
    if run.state is RunState.PULL_FAILED:
        if not _pull_fails(spec.image, behaviour):
            return _start(run, spec, behaviour, now, new_id, back_off), None
        due = run.next_attempt if run.next_attempt is not None else now
        if now < due:
            return None, due
        return _start(run, spec, behaviour, due, new_id, back_off), None
    if run.state is RunState.CRASHED:
        due = run.next_attempt if run.next_attempt is not None else now
        if now < due:
            return None, due
        return _start(run, spec, behaviour, due, new_id, back_off), None
    # RUNNING
    if spec.image != run.image or spec.env != run.env:
        started_at = run.started_at if run.started_at is not None else now
        stopped = replace(run, last_termination=Termination(0, "Completed", started_at, now, run.container_id))
        return _start(stopped, spec, behaviour, now, new_id, back_off), None
    if behaviour.crash_loop:
        return _crash(run, now, back_off), None
    ready_at = ready_time(run, behaviour)
    return None, (ready_at if ready_at is not None and now < ready_at else None)


def step_container(run: ContainerRun, spec: ContainerSpec | str, behaviour: PodBehaviour, now: float, new_id: IdSource,
                   back_off: BackOff) -> tuple[ContainerRun, float | None]:
    """Apply every transition due at ``now``; return the run and when it next needs a look.

    The second value is an absolute time on the same scale as ``now`` (``None``: nothing is
    scheduled; only a change to the pod can move the container on). A bare image stands for
    a container without metadata env or hooks whose env values are left as they are.
    """
    if isinstance(spec, str):
        spec = ContainerSpec(spec, run.env)
    # Each transition either waits or moves to a state whose own next step waits for a later
    # time or a spec change, so a handful of rounds always reach a resting point.
    for _ in range(8):
        moved, due = _next_step(run, spec, behaviour, now, new_id, back_off)
        if moved is None:
            return run, due
        run = moved
    return run, now
