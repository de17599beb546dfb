"""Lifecycle hooks and the pod lifecycle state machine.

A pod's state lives in the ``lifecycle.apps.kruise.io/state`` label:
``PreparingNormal`` (just created) -> ``Normal`` -> [``PreparingUpdate`` (held by the
inPlaceUpdate hook) ->] ``Updating`` (in-place update running) -> [``Updated`` (inPlaceUpdate
hook not yet re-applied) ->] ``Normal``; and ``PreparingDelete`` while a preDelete hook holds a
pod chosen for deletion.

A hook (``{labelsHandler, finalizersHandler, markPodNotReady}``) *hooks* a pod when ANY of
its labels has the given value or ANY of its finalizers is present; it *fully hooks* it when
ALL are. Functions here decide states and build the patches that set them; they do no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import deep_copy, format_time, labels_of, metadata
from kubeloop.api.nested import section
from kubeloop.api.pods import node_name

from .options import DEFAULT_BEHAVIOUR, CloneSetBehaviour
from .podconditions import conditions_list, has_readiness_gate, refresh_ready_condition
from .podstate import equal_to_revision, lifecycle_state
from .spec import lifecycle_hook, lifecycle_of

Hook = Mapping[str, Any]


def _finalizers(pod: Mapping[str, Any]) -> list[str]:
    value = metadata(pod).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def _hook_labels(hook: Hook) -> Mapping[str, str]:
    return section(hook, "labelsHandler")


def _hook_finalizers(hook: Hook) -> list[str]:
    value = hook.get("finalizersHandler")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def is_pod_hooked(hook: Hook | None, pod: Mapping[str, Any]) -> bool:
    """ANY hook finalizer present or ANY hook label with its value (a missing label equals "")."""
    if hook is None:
        return False
    finalizers = _finalizers(pod)
    if any(f in finalizers for f in _hook_finalizers(hook)):
        return True
    labels = labels_of(pod)
    return any(labels.get(k, "") == v for k, v in _hook_labels(hook).items())


def is_pod_all_hooked(hook: Hook | None, pod: Mapping[str, Any]) -> bool:
    """ALL hook finalizers present and ALL hook labels with their values; ``False`` for no hook."""
    if hook is None:
        return False
    finalizers = _finalizers(pod)
    if not all(f in finalizers for f in _hook_finalizers(hook)):
        return False
    labels = labels_of(pod)
    return all(labels.get(k, "") == v for k, v in _hook_labels(hook).items())


def marks_pod_not_ready(hook: Hook | None) -> bool:
    return hook is not None and hook.get("markPodNotReady") is True


def lifecycle_marks_pod_not_ready(cs: Mapping[str, Any]) -> bool:
    """Whether the preDelete or inPlaceUpdate hook asks to mark pods not ready."""
    return marks_pod_not_ready(lifecycle_hook(cs, "preDelete")) or marks_pod_not_ready(
        lifecycle_hook(cs, "inPlaceUpdate")
    )


def refreshed_state(
    cs: Mapping[str, Any],
    pod: Mapping[str, Any],
    update_revision: str,
    *,
    update_completed: bool,
    behaviour: CloneSetBehaviour = DEFAULT_BEHAVIOUR,
) -> str | None:
    """The state the refresh phase moves the pod to, or ``None`` to leave it.

    ``update_completed`` is whether the pod's in-place update finished (see
    :func:`kubeloop.controllers.cloneset.inplace.pod_update_completed`).
    """
    lifecycle = lifecycle_of(cs)
    in_place_hook = lifecycle_hook(cs, "inPlaceUpdate")
    state = lifecycle_state(pod)
    if state == kruise.STATE_PREPARING_NORMAL:
        pre_normal = lifecycle_hook(cs, "preNormal")
        if pre_normal is not None:
            return kruise.STATE_NORMAL if is_pod_all_hooked(pre_normal, pod) else None
        if behaviour.normal_requires_scheduling and not node_name(pod):
            return None
        return kruise.STATE_NORMAL
    if state == kruise.STATE_PREPARING_UPDATE:
        # Template rolled back to the pod's own revision while it waited: no update needed.
        if not equal_to_revision(pod, update_revision):
            return None
        return _after_update_state(lifecycle, in_place_hook, pod)
    if state == kruise.STATE_UPDATING:
        return _after_update_state(lifecycle, in_place_hook, pod) if update_completed else None
    updated_and_released = state == kruise.STATE_UPDATED and (
        lifecycle is None or in_place_hook is None or is_pod_all_hooked(in_place_hook, pod)
    )
    return kruise.STATE_NORMAL if updated_and_released else None


def _after_update_state(lifecycle: Mapping[str, Any] | None, hook: Hook | None, pod: Mapping[str, Any]) -> str:
    if lifecycle is not None and not is_pod_all_hooked(hook, pod):
        return kruise.STATE_UPDATED
    return kruise.STATE_NORMAL


def lifecycle_patch(state: str, now: datetime, hook: Hook | None = None) -> dict[str, Any]:
    """Strategic-merge patch setting the state label and timestamp annotation.

    With ``hook`` (the inPlaceUpdate hook re-applied when an ``Updated`` pod meets a newer
    revision) its labels and finalizers are added as well.
    """
    labels: dict[str, Any] = {kruise.LIFECYCLE_STATE_LABEL: state}
    meta: dict[str, Any] = {
        "labels": labels,
        "annotations": {kruise.LIFECYCLE_TIMESTAMP_ANNOTATION: format_time(now)},
    }
    if hook is not None:
        labels.update(_hook_labels(hook))
        meta["finalizers"] = list(_hook_finalizers(hook))
    return {"metadata": meta}


def with_lifecycle_state(pod: Mapping[str, Any], state: str, now: datetime) -> dict[str, Any]:
    """A copy of ``pod`` in ``state`` with the timestamp annotation set to ``now``."""
    result: dict[str, Any] = deep_copy(pod)
    meta = result.setdefault("metadata", {})
    meta.setdefault("labels", {})[kruise.LIFECYCLE_STATE_LABEL] = state
    meta.setdefault("annotations", {})[kruise.LIFECYCLE_TIMESTAMP_ANNOTATION] = format_time(now)
    return result


# --- markPodNotReady: the KruisePodReady condition -------------------------------------------

PRE_DELETE_HOOK_KEY = "preDeleteHook"
PRE_UPDATE_HOOK_KEY = "preUpdateHook"
_USER_AGENT = "Lifecycle"


def not_ready_key_change(state: str) -> tuple[str, str] | None:
    """For a pod entering ``state`` with markPodNotReady: ``("add"|"remove", key)`` or ``None``."""
    if state == kruise.STATE_PREPARING_DELETE:
        return "add", PRE_DELETE_HOOK_KEY
    if state == kruise.STATE_PREPARING_UPDATE:
        return "add", PRE_UPDATE_HOOK_KEY
    if state == kruise.STATE_UPDATED:
        return "remove", PRE_UPDATE_HOOK_KEY
    return None


def _messages(condition: Mapping[str, Any] | None) -> list[dict[str, str]]:
    text = condition.get("message") if condition is not None else None
    if not text:
        return []
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _dump_messages(messages: list[dict[str, str]]) -> str:
    ordered = sorted(messages, key=lambda m: (m.get("userAgent", ""), m.get("key", "")))
    return orjson.dumps(ordered).decode()


def with_not_ready_key(pod: Mapping[str, Any], key: str, *, add: bool, now: datetime) -> dict[str, Any] | None:
    """The pod with ``key`` added to / removed from its ``KruisePodReady`` condition, or ``None``
    when nothing changes (no such readiness gate, or the key already in the wanted state).

    The condition's message is a JSON list of ``{"userAgent": "Lifecycle", "key": ...}``; the
    condition is False while the list is non-empty. Adding a key also turns ``Ready`` False when
    the containers are ready; removing the last one turns the condition True (the kubelet then
    turns ``Ready`` True).
    """
    if not has_readiness_gate(pod, kruise.KRUISE_POD_READY):
        return None
    condition = find_condition(status_conditions(pod), kruise.KRUISE_POD_READY)
    messages = _messages(condition)
    present = any(m.get("userAgent") == _USER_AGENT and m.get("key") == key for m in messages)
    if present == add or (not add and condition is None):
        return None
    result: dict[str, Any] = deep_copy(pod)
    conditions = conditions_list(result)
    target = next(c for c in conditions if c.get("type") == kruise.KRUISE_POD_READY) if condition else None
    if add:
        messages.append({"userAgent": _USER_AGENT, "key": key})
        if target is None:
            # Upstream appends the condition without a status in this case.
            conditions.append(
                {
                    "type": kruise.KRUISE_POD_READY,
                    "message": _dump_messages(messages),
                    "lastTransitionTime": format_time(now),
                }
            )
        else:
            target.update(status="False", message=_dump_messages(messages), lastTransitionTime=format_time(now))
        refresh_ready_condition(result, now)
        return result
    assert target is not None
    remaining = [m for m in messages if not (m.get("userAgent") == _USER_AGENT and m.get("key") == key)]
    target.update(message=_dump_messages(remaining), lastTransitionTime=format_time(now))
    if not remaining:
        target["status"] = "True"
    return result


def with_initial_kruise_pod_ready(pod: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """The pod with a ``KruisePodReady`` condition True, for a pod that has the readiness gate
    but no such condition yet (what upstream's pod-readiness controller does); ``None`` when
    nothing is to be written (no gate, a condition already, or the pod is being deleted)."""
    if not has_readiness_gate(pod, kruise.KRUISE_POD_READY) or metadata(pod).get("deletionTimestamp"):
        return None
    if find_condition(status_conditions(pod), kruise.KRUISE_POD_READY) is not None:
        return None
    result: dict[str, Any] = deep_copy(pod)
    conditions_list(result).append(
        {"type": kruise.KRUISE_POD_READY, "status": "True", "lastTransitionTime": format_time(now)}
    )
    return result
