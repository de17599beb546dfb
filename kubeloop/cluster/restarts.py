"""When a crashed child process is started again, and when the supervisor gives up: a pure policy.

The supervisor of ``kubeloop up``'s processes (:mod:`kubeloop.cluster.supervisor`) asks
:meth:`RestartPolicy.decide` each time a child exits on its own. Like the kubelet's crash-loop
back-off (kubernetes ``pkg/kubelet/kuberuntime`` ``doBackOff``: 10 s doubling to 5 min, reset
after 10 min of running), the delay doubles from ``initial`` up to ``maximum``, and a child that
ran ``reset_after`` seconds before it exited counts as healthy again; unlike a pod's container,
a cluster component is not retried forever: after ``limit`` restarts in a row the supervisor
stops the cluster and says why (systemd's ``StartLimitBurst`` in spirit), since a component
that keeps crashing leaves a cluster that only looks alive.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    """What to do about one exit: restart after ``delay`` seconds as restart number ``attempt``
    (counted from 1 in the current run of crashes), or give up (``delay`` None)."""

    attempt: int
    delay: float | None


@dataclass(frozen=True)
class RestartPolicy:
    initial: float = 1.0
    """Seconds before the first restart."""
    maximum: float = 30.0
    """Cap of the doubling delay."""
    limit: int = 5
    """Restarts in a row (each after a run shorter than ``reset_after``) before giving up."""
    reset_after: float = 60.0
    """A child that ran this many seconds before it exited starts a fresh count."""

    def decide(self, previous_attempts: int, ran_for: float) -> Decision:
        """The decision for a child that exited after running ``ran_for`` seconds, having been
        restarted ``previous_attempts`` times in a row before."""
        attempt = 1 if ran_for >= self.reset_after else previous_attempts + 1
        if attempt > self.limit:
            return Decision(attempt, None)
        return Decision(attempt, min(self.maximum, self.initial * 2 ** (attempt - 1)))


def describe_exit(returncode: int) -> str:
    """How a child ended, as a person says it: ``exited with code 1``, ``was killed by SIGKILL``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"
