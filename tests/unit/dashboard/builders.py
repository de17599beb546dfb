"""Hand-made Deployments, ReplicaSets, CloneSets, revisions, pods and events for the dashboard tests."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def template(image: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def deployment(name: str = "web", *, replicas: int = 4, image: str = "app:2", generation: int = 2,
               observed: int = 2, status: dict[str, Any] | None = None, strategy: dict[str, Any] | None = None,
               namespace: str = "default", revision: str = "2", min_ready_seconds: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": template(image),
        "strategy": strategy or {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    }
    if min_ready_seconds:
        spec["minReadySeconds"] = min_ready_seconds
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": generation,
                     "annotations": {"deployment.kubernetes.io/revision": revision}},
        "spec": spec,
        "status": {"observedGeneration": observed, **(status or {})},
    }


def replica_set(owner: Mapping[str, Any], hash_: str, revision: int, *, image: str, replicas: int,
                ready: int = 0, available: int = 0, created: int = 0) -> dict[str, Any]:
    name = f"{owner['metadata']['name']}-{hash_}"
    tpl = template(image)
    tpl["metadata"]["labels"]["pod-template-hash"] = hash_
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": owner["metadata"]["namespace"], "uid": f"uid-{name}",
                     "labels": {"app": "web", "pod-template-hash": hash_},
                     "creationTimestamp": stamp(NOW + timedelta(seconds=created)),
                     "annotations": {"deployment.kubernetes.io/revision": str(revision)},
                     "ownerReferences": [controller_ref(owner, "Deployment")]},
        "spec": {"replicas": replicas, "template": tpl},
        "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": available},
    }


def controller_ref(owner: Mapping[str, Any], kind: str) -> dict[str, Any]:
    return {"apiVersion": owner.get("apiVersion", "apps/v1"), "kind": kind, "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True}


def pod(name: str, owner: Mapping[str, Any], owner_kind: str = "ReplicaSet", *, phase: str = "Running",
        ready: bool = True, ready_since: datetime | None = None, deleting: bool = False,
        waiting: str = "", node: str = "node-1", labels: dict[str, str] | None = None,
        restarts: int = 0) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": owner["metadata"]["namespace"], "uid": f"uid-{name}",
                                "labels": {"app": "web", **(labels or {})},
                                "ownerReferences": [controller_ref(owner, owner_kind)]}
    if deleting:
        metadata["deletionTimestamp"] = stamp(NOW)
    container: dict[str, Any] = {"name": "c", "restartCount": restarts, "ready": ready,
                                 "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}
    conditions = [{"type": "PodScheduled", "status": "True"}]
    if phase == "Running":
        conditions.append({"type": "Ready", "status": "True" if ready else "False",
                           "lastTransitionTime": stamp(ready_since or NOW - timedelta(minutes=5))})
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": [container]},
    }


def event(name: str, involved: dict[str, Any], kind: str, reason: str, *, at: int, type_: str = "Normal",
          message: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": involved["metadata"]["namespace"]},
        "involvedObject": {"kind": kind, "name": involved["metadata"]["name"], "uid": involved["metadata"]["uid"]},
        "reason": reason, "message": message or reason, "type": type_,
        "lastTimestamp": stamp(NOW + timedelta(seconds=at)), "count": 1,
    }


def cloneset(name: str = "cs", *, replicas: int = 4, update_revision: str = "cs-bbb", partition: Any = None,
             max_surge: Any = None, max_unavailable: Any = None, status: dict[str, Any] | None = None,
             generation: int = 1, observed: int = 1) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": "ReCreate"}
    for key, value in (("partition", partition), ("maxSurge", max_surge), ("maxUnavailable", max_unavailable)):
        if value is not None:
            strategy[key] = value
    return {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": generation},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template("app:2"),
                 "updateStrategy": strategy},
        "status": {"observedGeneration": observed, "updateRevision": update_revision, **(status or {})},
    }


def controller_revision(owner: Mapping[str, Any], name: str, revision: int, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                     "ownerReferences": [controller_ref(owner, "CloneSet")]},
        "revision": revision,
        "data": {"spec": {"template": {**template(image), "$patch": "replace"}}},
    }
