"""One workload's picture, built from its objects: the JSON the web page and the terminal draw.

:func:`deployment_view` and :func:`cloneset_view` take the workload, the objects it owns (its
ReplicaSets or ControllerRevisions, its pods) and the events about any of them, and return a
plain dict (the wire format of ``/api/state`` and the event stream, documented in
``docs/dashboard.md``):

``key``, ``kind``, ``namespace``, ``name``, ``strategy``
    identity; ``key`` is ``Kind/namespace/name``.
``revisions``
    newest first; each ``{id, revision, hash, image, isUpdate, desired, current, ready,
    available, states}`` where ``id`` is the ReplicaSet or ControllerRevision name, ``desired``
    the ReplicaSet's ``spec.replicas`` (for CloneSets: the expected updated count on the update
    revision, ``None`` on old ones) and ``states`` counts its pods by :class:`PodState`.
``pods``
    ``{name, revision, state, reason, node, restarts}``; ``revision`` is a revision ``id`` (or
    the pod's own hash label when no known revision matches), sorted by revision (newest
    first), then state (healthiest first), then name.
``progress``, ``rollout``
    see :mod:`kubeloop.dashboard.progress`.
``partition`` (CloneSets only)
    ``{value, kept}`` or ``None``: see :func:`partition_view`.
``conditions``, ``events``
    the workload's status conditions, and the latest events about it, its ReplicaSets or its
    pods (newest first, from an :class:`EventIndex`).

Nothing here does I/O or reads a clock: ``now`` is a parameter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, labels_of, name_of, namespace_of, uid_of
from kubeloop.api.pods import is_pod_available
from kubeloop.controllers.cloneset.diffs import PartitionError, partition_replicas
from kubeloop.controllers.cloneset.podstate import equal_to_revision, is_cloneset_pod_available, short_hash
from kubeloop.controllers.cloneset.revisions import template_from_revision
from kubeloop.controllers.cloneset.spec import min_ready_seconds_of, partition_of, replicas_of, update_strategy_type
from kubeloop.controllers.deployment.annotations import REVISION, RevisionError, revision_of
from kubeloop.controllers.deployment.objects import min_ready_seconds, pod_template, spec_replicas, status_int
from kubeloop.controllers.deployment.objects import strategy_type as deployment_strategy
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH, find_new_replica_set
from kubeloop.dashboard.podstates import STATE_ORDER, AvailablePredicate, PodState, classify_pod, restart_count
from kubeloop.dashboard.progress import CLONESET, DEPLOYMENT, rollout_verdict, workload_progress

Obj = Mapping[str, Any]
View = dict[str, Any]

MAX_EVENTS = 8
"""Events kept per workload view."""

_STATE_RANK = {state: rank for rank, state in enumerate(STATE_ORDER)}


def workload_key(kind: str, obj: Obj) -> str:
    return f"{kind}/{namespace_of(obj)}/{name_of(obj)}"


def _images(template: Obj) -> str:
    spec = template.get("spec")
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    if not isinstance(containers, list):
        return ""
    return ", ".join(str(c.get("image") or "") for c in containers if isinstance(c, Mapping))


def _safe_revision(obj: Obj) -> int:
    try:
        return revision_of(obj)
    except RevisionError:
        return 0


def _conditions(obj: Obj) -> list[dict[str, Any]]:
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conditions, list):
        return []
    keys = ("type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime")
    return [{k: c.get(k) for k in keys if c.get(k) is not None} for c in conditions if isinstance(c, Mapping)]


def event_time(event: Obj) -> str:
    """The latest time an event speaks of (RFC 3339 strings sort chronologically)."""
    series = event.get("series")
    candidates = [
        series.get("lastObservedTime") if isinstance(series, Mapping) else None,
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    ]
    return max((str(c) for c in candidates if c), default="")


def _event_view(event: Obj) -> dict[str, Any]:
    involved = event.get("involvedObject") or {}
    return {
        "type": event.get("type") or "",
        "reason": event.get("reason") or "",
        "message": event.get("message") or event.get("note") or "",
        "object": f"{involved.get('kind') or ''}/{involved.get('name') or ''}",
        "count": event.get("count") or 1,
        "time": event_time(event),
    }


def involved_key(event: Obj) -> str:
    """What an event is about: the involved object's uid, else ``kind/namespace/name``."""
    involved = event.get("involvedObject") or {}
    uid = involved.get("uid")
    if uid:
        return str(uid)
    namespace = involved.get("namespace") or namespace_of(event)
    return f"{involved.get('kind') or ''}/{namespace}/{involved.get('name') or ''}"


class EventIndex:
    """Events grouped by the object they are about (see :func:`involved_key`), kept up to date
    event by event, so that finding a workload's events costs the number of its objects, not
    the number of events in the cluster."""

    def __init__(self, events: Iterable[Obj] = ()) -> None:
        self._by_object: dict[str, dict[str, Obj]] = defaultdict(dict)
        for event in events:
            self.put(event)

    def put(self, event: Obj) -> None:
        self._by_object[involved_key(event)][f"{namespace_of(event)}/{name_of(event)}"] = event

    def remove(self, event: Obj) -> None:
        group = self._by_object.get(involved_key(event))
        if group is not None:
            group.pop(f"{namespace_of(event)}/{name_of(event)}", None)
            if not group:
                del self._by_object[involved_key(event)]

    def about(self, objects: Iterable[Obj], limit: int = MAX_EVENTS) -> list[dict[str, Any]]:
        """The newest ``limit`` events about any of ``objects`` (each needs its ``kind``), newest first."""
        chosen: list[Obj] = []
        for obj in objects:
            for key in (uid_of(obj), f"{obj.get('kind') or ''}/{namespace_of(obj)}/{name_of(obj)}"):
                if key in self._by_object:
                    chosen.extend(self._by_object[key].values())
        chosen.sort(key=event_time, reverse=True)
        return [_event_view(e) for e in chosen[:limit]]


def _pod_entries(pods: Sequence[Obj], revision_of_pod: Mapping[str, str], is_available: AvailablePredicate,
                 now: datetime) -> list[dict[str, Any]]:
    entries = []
    for pod in pods:
        condition = classify_pod(pod, is_available, now)
        spec = pod.get("spec")
        entries.append({
            "name": name_of(pod),
            "revision": revision_of_pod[name_of(pod)],
            "state": condition.state.value,
            "reason": condition.reason,
            "node": str(spec.get("nodeName") or "") if isinstance(spec, Mapping) else "",
            "restarts": restart_count(pod),
        })
    return entries


def _state_counts(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = {state.value: 0 for state in PodState}
    for entry in entries:
        counts[entry["state"]] += 1
    return counts


def _assemble(kind: str, workload: Obj, strategy: str, revisions: list[dict[str, Any]],
              entries: list[dict[str, Any]], owned: Sequence[Obj], events: EventIndex) -> View:
    order = {revision["id"]: rank for rank, revision in enumerate(revisions)}
    entries.sort(key=lambda e: (order.get(e["revision"], len(order)), _STATE_RANK[PodState(e["state"])], e["name"]))
    for revision in revisions:
        mine = [e for e in entries if e["revision"] == revision["id"]]
        revision["states"] = _state_counts(mine)
        revision["current"] = len([e for e in mine if e["state"] != PodState.TERMINATING.value])
        if revision.get("ready") is None:
            revision["ready"] = sum(e["state"] in ("ready", "available") for e in mine)
            revision["available"] = revision["states"]["available"]
    return {
        "key": workload_key(kind, workload),
        "kind": kind,
        "namespace": namespace_of(workload),
        "name": name_of(workload),
        "strategy": strategy,
        "revisions": revisions,
        "pods": entries,
        "progress": workload_progress(kind, workload).as_json(),
        "rollout": rollout_verdict(kind, workload).as_json(),
        "conditions": _conditions(workload),
        "events": events.about([{"kind": kind, **workload}, *owned]),
    }


def deployment_view(deployment: Obj, replica_sets: Sequence[Obj], pods: Sequence[Obj], events: EventIndex,
                    now: datetime) -> View:
    """The view of a Deployment; ``replica_sets`` are those it controls, ``pods`` those they control."""
    new_rs = find_new_replica_set(deployment, replica_sets)
    by_uid = {uid_of(rs): rs for rs in replica_sets}
    ordered = sorted(replica_sets, key=lambda rs: (_safe_revision(rs), name_of(rs)), reverse=True)
    revisions = []
    for rs in ordered:
        revisions.append({
            "id": name_of(rs),
            "revision": _safe_revision(rs),
            "hash": labels_of(rs).get(POD_TEMPLATE_HASH, ""),
            "image": _images(pod_template(rs)),
            "isUpdate": rs is new_rs,
            "desired": spec_replicas(rs),
            "ready": status_int(rs, "readyReplicas"),
            "available": status_int(rs, "availableReplicas"),
        })
    revision_of_pod: dict[str, str] = {}
    for pod in pods:
        owner = controller_of(pod)
        owning = by_uid.get(str(owner.get("uid") or "")) if owner is not None else None
        revision_of_pod[name_of(pod)] = (name_of(owning) if owning is not None
                                         else labels_of(pod).get(POD_TEMPLATE_HASH, "?"))
    seconds = min_ready_seconds(deployment)
    entries = _pod_entries(pods, revision_of_pod, lambda pod, at: is_pod_available(pod, seconds, at), now)
    view = _assemble(DEPLOYMENT, deployment, deployment_strategy(deployment), revisions, entries,
                     [{"kind": "ReplicaSet", **rs} for rs in replica_sets] + [{"kind": "Pod", **p} for p in pods],
                     events)
    view["updateRevision"] = annotation_revision(deployment)
    return view


def annotation_revision(deployment: Obj) -> str:
    return str(((deployment.get("metadata") or {}).get("annotations") or {}).get(REVISION) or "")


def cloneset_view(cloneset: Obj, revisions: Sequence[Obj], pods: Sequence[Obj], events: EventIndex,
                  now: datetime) -> View:
    """The view of a CloneSet; ``revisions`` are its ControllerRevisions, ``pods`` the pods it controls."""
    status = cloneset.get("status") if isinstance(cloneset.get("status"), Mapping) else {}
    update_revision = str((status or {}).get("updateRevision") or "")
    expected = workload_progress(CLONESET, cloneset).expected_updated
    ordered = sorted(revisions, key=lambda r: (r.get("revision") or 0, name_of(r)), reverse=True)
    views = [{
        "id": name_of(revision),
        "revision": revision.get("revision") or 0,
        "hash": short_hash(name_of(revision)),
        "image": _images(template_from_revision(revision)),
        "isUpdate": bool(update_revision) and short_hash(name_of(revision)) == short_hash(update_revision),
        "desired": expected if update_revision and short_hash(name_of(revision)) == short_hash(update_revision)
        else None,
        "ready": None,
        "available": None,
    } for revision in ordered]
    revision_of_pod: dict[str, str] = {}
    for pod in pods:
        match = next((str(v["id"]) for v in views if equal_to_revision(pod, str(v["id"]))), None)
        revision_of_pod[name_of(pod)] = match or labels_of(pod).get(kruise.CONTROLLER_REVISION_HASH_LABEL, "?")
    seconds = min_ready_seconds_of(cloneset)
    entries = _pod_entries(pods, revision_of_pod, lambda pod, at: is_cloneset_pod_available(pod, seconds, at), now)
    view = _assemble(CLONESET, cloneset, update_strategy_type(cloneset), views, entries,
                     [{"kind": "Pod", **p} for p in pods], events)
    view["updateRevision"] = update_revision
    view["partition"] = partition_view(cloneset)
    return view


def partition_view(cloneset: Obj) -> dict[str, Any] | None:
    """``{"value": spec value, "kept": pods it keeps on old revisions}``; None without a partition.

    ``kept`` follows the controller's rounding (:func:`partition_replicas`); an unparsable value
    keeps ``None`` there (the controller refuses it, the page shows the value as written).
    """
    value = partition_of(cloneset)
    if value is None:
        return None
    try:
        kept: int | None = partition_replicas(value, replicas_of(cloneset))
    except PartitionError:
        kept = None
    return {"value": value, "kept": kept}
