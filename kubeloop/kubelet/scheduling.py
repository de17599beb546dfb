"""Which node a pending pod goes to: the scheduler part of the simulated kubelet.

A pod is ours to place when it has no ``spec.nodeName``, names our scheduler
(``default-scheduler``; the API server defaults an empty name to it), is not being deleted
and has no scheduling gates. Pods naming another scheduler stay Pending, as on a cluster
where that scheduler does not run.

The node is the least loaded (fewest placed pods, then name) of those that are Ready, not
cordoned (``spec.unschedulable``), match the pod's ``nodeSelector`` and have room under their
``pods`` capacity. Pure functions; the caller supplies the load, including pods it has bound
but not yet seen in its cache (as the scheduler's "assumed" pods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeloop.api.meta import is_being_deleted

DEFAULT_SCHEDULER = "default-scheduler"


def wants_scheduling(pod: Mapping[str, Any], scheduler_name: str = DEFAULT_SCHEDULER) -> bool:
    """Whether ``pod`` waits for the scheduler named ``scheduler_name``."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping) or spec.get("nodeName") or is_being_deleted(pod):
        return False
    if spec.get("schedulingGates"):
        return False
    status = pod.get("status")
    if isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed"):
        return False
    return (spec.get("schedulerName") or DEFAULT_SCHEDULER) == scheduler_name


def _node_ready(node: Mapping[str, Any]) -> bool:
    status = node.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in conditions or ())


def _pod_capacity(node: Mapping[str, Any]) -> int | None:
    status = node.get("status")
    allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
    value = allocatable.get("pods") if isinstance(allocatable, Mapping) else None
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def node_fits(pod: Mapping[str, Any], node: Mapping[str, Any], load: int) -> str | None:
    """``None`` if ``pod`` may go to ``node`` carrying ``load`` pods, else why not (a short phrase)."""
    spec = node.get("spec")
    if isinstance(spec, Mapping) and spec.get("unschedulable"):
        return "node is cordoned"
    if not _node_ready(node):
        return "node is not ready"
    labels = (node.get("metadata") or {}).get("labels") or {}
    pod_spec = pod.get("spec")
    selector = pod_spec.get("nodeSelector") if isinstance(pod_spec, Mapping) else None
    if isinstance(selector, Mapping) and any(labels.get(k) != v for k, v in selector.items()):
        return "node does not match the pod's nodeSelector"
    capacity = _pod_capacity(node)
    if capacity is not None and load >= capacity:
        return "node is full"
    return None


def pick_node(pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], load: Mapping[str, int]
              ) -> tuple[str | None, str]:
    """The node for ``pod`` (least loaded, then by name) or ``None`` with a message saying why."""
    # Nodes in the order of preference (least loaded, then by name; the index breaks no tie
    # since names are unique, it only spares comparing nodes).
    candidates = sorted((load.get(_name(node), 0), _name(node), index) for index, node in enumerate(nodes))
    # The first that fits is the answer; only when none does are all the reasons gathered.
    for count, name, index in candidates:
        if node_fits(pod, nodes[index], count) is None:
            return name, ""
    reasons: dict[str, int] = {}
    for count, _, index in candidates:
        why = node_fits(pod, nodes[index], count)
        if why is not None:
            reasons[why] = reasons.get(why, 0) + 1
    detail = ", ".join(f"{count} {why}" for why, count in sorted(reasons.items()))
    return None, f"no node can take the pod (0 of {len(nodes)})" + (f": {detail}." if detail else ".")


def node_fit_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a node update can change which pods fit it: what :func:`node_fits` reads
    (cordon, readiness, labels, ``pods`` allocatable) differs between ``old`` and ``new``.

    A heartbeat (new ``lastHeartbeatTime`` only) changes none of it, so it need not send every
    pending pod back to the scheduler: upstream's scheduler moves its unschedulable pods on a
    node update only when the node's scheduling properties changed (``pkg/scheduler/
    eventhandlers.go``, ``nodeSchedulingPropertiesChange``, which also compares conditions
    with their heartbeat times stripped). Here, with 201 nodes and 2,890 pending pods, the
    re-queueing alone took a third of the kubelet's time (docs/decisions.md, "20,000 pods").
    """
    return _fit_facts(old) != _fit_facts(new)


def _fit_facts(node: Mapping[str, Any]) -> tuple[object, ...]:
    spec = node.get("spec")
    unschedulable = bool(spec.get("unschedulable")) if isinstance(spec, Mapping) else False
    labels = (node.get("metadata") or {}).get("labels") or {}
    return unschedulable, _node_ready(node), dict(labels), _pod_capacity(node)


def _name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name") or "")
