"""What the Update step's refresh pass wants of one pod, decided before anything is written.

Upstream's ``syncCloneSet`` -> ``refreshPodState`` (kruise ``sync/cloneset_update.go``), for
each pod in turn: the initial ``KruisePodReady`` condition (the pod-readiness controller's
first write), ``inplaceupdate.Refresh`` (grace period over, next batch, ``InPlaceUpdateReady``
True), the lifecycle transition (PreparingNormal -> Normal, Updating -> Updated/Normal, ...)
and the missing ``pod-template-hash`` label. :func:`plan_refresh` computes the four decisions
from the pod as cached; :class:`.steps.CloneSetSteps` performs them in that order.

A plan is *idle* when it writes nothing and asks for no timed re-check. Idleness does not
depend on the time (the only time-dependent decision, the end of an in-place grace period, is
a re-check or a write until it is due: never idle), only on the pod and on
:func:`refresh_context` (the update revision's name and the CloneSet's ``spec.lifecycle``;
a property test checks both). So a pod
whose plan was idle stays idle until the pod or that context changes, and the controller's
tally (:mod:`.tally`) skips it until then instead of planning it again on every sync -- a pod
waiting to be scheduled or for its containers to restart used to be planned again at every
sync of its CloneSet, O(waiting pods) per sync and quadratic over a scale-up or a roll.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from .inplace import RefreshAction, pod_update_completed, refresh
from .lifecycle import refreshed_state, with_initial_kruise_pod_ready
from .options import CloneSetBehaviour
from .spec import lifecycle_of
from .update import pod_template_hash_patch

RefreshContext = tuple[str, bytes]
"""``(update revision name, spec.lifecycle as canonical JSON)``: see :func:`refresh_context`."""


def refresh_context(cs: Mapping[str, Any], update_revision: str) -> RefreshContext:
    """What of the CloneSet a pod's refresh plan depends on besides the pod and the time (the
    controller's behaviour options are fixed for its lifetime)."""
    return update_revision, orjson.dumps(lifecycle_of(cs), option=orjson.OPT_SORT_KEYS)


@dataclass(frozen=True)
class RefreshPlan:
    """The refresh pass's decisions for one pod, in the order they are written."""

    initial_ready: dict[str, Any] | None
    """The pod with its first ``KruisePodReady`` condition (written through ``/status``)."""
    action: RefreshAction
    """The in-place bookkeeping (:func:`kubeloop.controllers.cloneset.inplace.refresh`)."""
    state: str | None
    """The lifecycle state to move to."""
    hash_patch: dict[str, Any] | None
    """The merge patch adding ``pod-template-hash``."""

    @property
    def idle(self) -> bool:
        """Nothing to write, nothing to re-check at a later time."""
        return (self.initial_ready is None and self.action.kind == "none" and self.state is None
                and self.hash_patch is None)


def plan_refresh(cs: Mapping[str, Any], pod: Mapping[str, Any], update_revision: str, now: datetime,
                 behaviour: CloneSetBehaviour) -> RefreshPlan:
    """The refresh pass's decisions for ``pod`` of ``cs`` (the CloneSet with the update
    revision's template) at ``now``."""
    return RefreshPlan(
        initial_ready=with_initial_kruise_pod_ready(pod, now),
        action=refresh(pod, now=now),
        state=refreshed_state(cs, pod, update_revision, update_completed=pod_update_completed(pod),
                              behaviour=behaviour),
        hash_patch=pod_template_hash_patch(pod),
    )
