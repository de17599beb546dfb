"""The Priority admission plugin's handling of pods (upstream's ``plugin/pkg/admission/priority``,
``Plugin.admitPod``).

On create, ``spec.priority`` (and ``spec.preemptionPolicy``) come from the pod's
``priorityClassName``: a class that does not exist is refused (403 ``no PriorityClass with name
<name> was found``); a pod without a class gets the global default class's name, value and
policy, or priority 0 and ``PreemptLowerPriority`` when there is no default class. A priority or
preemption policy given in the pod must equal the computed one, else 403 with upstream's text.
On update (main endpoint only), a priority or policy the request leaves out keeps the old value,
so that validation sees an unchanged spec.

The built-in classes ``system-cluster-critical`` and ``system-node-critical`` are known here
(upstream's API server creates them at start-up); other classes come from the caller's lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api.status import forbidden_error

SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
DEFAULT_PRIORITY = 0
"""Upstream's ``DefaultPriorityWhenNoDefaultClassExists``."""

BUILTIN_CLASSES: dict[str, dict[str, Any]] = {
    SYSTEM_CLUSTER_CRITICAL: {"metadata": {"name": SYSTEM_CLUSTER_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY,
                              "preemptionPolicy": PREEMPT_LOWER_PRIORITY},
    SYSTEM_NODE_CRITICAL: {"metadata": {"name": SYSTEM_NODE_CRITICAL}, "value": SYSTEM_CRITICAL_PRIORITY + 1000,
                           "preemptionPolicy": PREEMPT_LOWER_PRIORITY},
}

ClassLookup = Callable[[str], Mapping[str, Any] | None]


def _pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def resolve_class(name: str, lookup: ClassLookup) -> Mapping[str, Any] | None:
    """The PriorityClass ``name``: a stored one first, then the built-ins."""
    found = lookup(name)
    return found if found is not None else BUILTIN_CLASSES.get(name)


def admit_priority_create(pod: dict[str, Any], lookup: ClassLookup, default_class: Mapping[str, Any] | None) -> None:
    """Set ``spec.priority`` and ``spec.preemptionPolicy`` of a new ``pod`` (in place).

    ``default_class`` is the PriorityClass marked ``globalDefault``, if any. Raises a 403
    :class:`~kubeloop.api.status.ApiError` as upstream does.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    class_name = spec.get("priorityClassName")
    if not isinstance(class_name, str) or not class_name:
        if default_class is not None:
            meta = default_class.get("metadata")
            default_name = meta.get("name") if isinstance(meta, Mapping) else None
            spec["priorityClassName"] = default_name if isinstance(default_name, str) else ""
            if not spec["priorityClassName"]:
                del spec["priorityClassName"]
            value = default_class.get("value")
            priority = value if isinstance(value, int) else DEFAULT_PRIORITY
            policy = default_class.get("preemptionPolicy")
        else:
            priority, policy = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
    else:
        found = resolve_class(class_name, lookup)
        if found is None:
            raise forbidden_error("pods", "", _pod_name(pod), f"no PriorityClass with name {class_name} was found")
        value = found.get("value")
        priority = value if isinstance(value, int) else DEFAULT_PRIORITY
        policy = found.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise forbidden_error("pods", "", _pod_name(pod),
                              f"the integer value of priority ({given}) must not be provided in pod spec; "
                              f"priority admission controller computed {priority} from the given PriorityClass name")
    spec["priority"] = priority
    if isinstance(policy, str) and policy:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise forbidden_error("pods", "", _pod_name(pod),
                                  f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
                                  f"pod spec; priority admission controller computed {policy} from the given "
                                  "PriorityClass name")
        spec["preemptionPolicy"] = policy


def keep_priority_on_update(new: dict[str, Any], old: Mapping[str, Any]) -> None:
    """An update that leaves out ``priority`` or ``preemptionPolicy`` keeps the old ones."""
    spec = new.get("spec")
    old_spec = old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, Mapping):
        return
    for field_name in ("priority", "preemptionPolicy"):
        if spec.get(field_name) is None and old_spec.get(field_name) is not None:
            spec[field_name] = old_spec[field_name]
