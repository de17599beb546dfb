"""The status write a new CloneSet pod gets at once, from the object its create answered.

Upstream (kruise v1.8.4), a created pod's first write is ``inplaceupdate.Refresh`` ->
``updateCondition`` (``pkg/util/inplaceupdate/inplace_update.go``), called by the refresh
pass of the next sync that sees the pod (``sync/cloneset_update.go``, ``refreshPodState``):
``InPlaceUpdateReady`` True through ``/status``, read-modify-write from the informer's copy
(kruise's client reads from the cache: ``pkg/util/client/client.go``,
``NewClientFromManager``). The pod's create never carries the condition: the API server
resets a new pod's status.

Here that write is made right after the create, from the object the create answered (see
:meth:`.control.CloneSetControl.create_pods`): the same condition, from the same function
(:func:`.inplace.refresh`), as the refresh pass would write, but without a GET. The refresh
pass could not start from a cached copy: by the time the pod reached the cache the kubelet was
rewriting it (binding, Running, ready), so a cached first attempt met a 409 on nearly every pod
and the write read the pod first (:func:`.control.settled`). Right after the create, only the
kubelet's binding usually stands between the answer and the stored pod.

What an observer sees is what upstream writes: the same condition, its transition time the
controller's clock at a sync, in the same order relative to the other controller writes
(the lifecycle ``PreparingNormal -> Normal`` patch still comes from the refresh pass, after
it). Its timing relative to the kubelet's first status write moves earlier, which is where
it falls in a real cluster (kruise refreshes a pod within milliseconds of its creation,
while a kubelet takes seconds to start containers): the kubelet then reports ``Ready`` True
at once instead of ``ReadinessGatesNotReady`` first.

Only when the refresh pass's first write for the pod would be exactly this one: a pod whose
template carries the ``KruisePodReady`` readiness gate first gets that condition
(:func:`.lifecycle.with_initial_kruise_pod_ready`), so it is left to the refresh pass and
its order stays the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .inplace import refresh
from .lifecycle import with_initial_kruise_pod_ready


def ready_condition_after_create(pod: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """``pod`` with ``InPlaceUpdateReady`` True (a new object, for a ``/status`` write), or
    ``None`` when the refresh pass's first write for it would be something else or nothing
    (no readiness gate, the condition already there, an in-place update in progress, the
    ``KruisePodReady`` condition still to write). Used both on the create's answer and, after
    a conflict, on a fresh read: a pod that already has the condition is not written again,
    as upstream's ``updateCondition`` skips an equal condition."""
    if with_initial_kruise_pod_ready(pod, now) is not None:
        return None
    action = refresh(pod, now=now)
    return action.pod if action.kind == "update_status" else None
