"""Builders for the Deployment and ReplicaSet dicts the table tests use."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubeloop.api.meta import format_time

Obj = dict[str, Any]

NEWER = datetime(2016, 5, 20, 2, 0, tzinfo=UTC)
OLD = datetime(2016, 5, 20, 1, 0, tzinfo=UTC)
OLDER = datetime(2016, 5, 20, 0, 0, tzinfo=UTC)


def pod_template(labels: dict[str, str] | None = None, image: str = "bar", container: str = "foo") -> Obj:
    return {
        "metadata": {"labels": dict(labels if labels is not None else {"foo": "bar"})},
        "spec": {"containers": [{"name": container, "image": image}]},
    }


def deployment(
    replicas: int = 1,
    *,
    name: str = "foo",
    strategy: str = "RollingUpdate",
    max_surge: Any = 0,
    max_unavailable: Any = 0,
    progress_deadline: int | None = None,
    history_limit: int | None = None,
    generation: int = 0,
    status: Obj | None = None,
    annotations: dict[str, str] | None = None,
    template: Obj | None = None,
    paused: bool = False,
    uid: str = "deployment-uid",
) -> Obj:
    """A Deployment like upstream's test fixture: RollingUpdate with surge and unavailable 0."""
    spec: Obj = {
        "replicas": replicas,
        "selector": {"matchLabels": {"foo": "bar"}},
        "template": template if template is not None else pod_template(),
        "strategy": {"type": strategy},
    }
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": max_surge, "maxUnavailable": max_unavailable}
    if progress_deadline is not None:
        spec["progressDeadlineSeconds"] = progress_deadline
    if history_limit is not None:
        spec["revisionHistoryLimit"] = history_limit
    if paused:
        spec["paused"] = True
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": uid,
            "generation": generation,
            "annotations": dict(annotations or {}),
        },
        "spec": spec,
        "status": dict(status or {}),
    }


def replica_set(
    name: str,
    replicas: int,
    *,
    created: datetime | None = None,
    available: int = 0,
    ready: int = 0,
    status_replicas: int | None = None,
    annotations: dict[str, str] | None = None,
    template: Obj | None = None,
    uid: str | None = None,
    generation: int = 0,
    observed_generation: int = 0,
    deleting: bool = False,
    conditions: list[Obj] | None = None,
) -> Obj:
    metadata: Obj = {"name": name, "namespace": "default", "uid": uid or f"uid-{name}", "generation": generation}
    if created is not None:
        metadata["creationTimestamp"] = format_time(created)
    if annotations is not None:
        metadata["annotations"] = dict(annotations)
    if deleting:
        metadata["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    status: Obj = {
        "replicas": replicas if status_replicas is None else status_replicas,
        "readyReplicas": ready,
        "availableReplicas": available,
        "observedGeneration": observed_generation,
    }
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"foo": "bar"}},
            "template": template if template is not None else pod_template(),
        },
        "status": status,
    }
