"""Builders of CloneSets and pods as plain dicts for the CloneSet table tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import format_time

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def make_cloneset(
    replicas: int = 1,
    *,
    partition: int | str | None = None,
    max_unavailable: int | str | None = None,
    max_surge: int | str | None = None,
    scale_max_unavailable: int | str | None = None,
    paused: bool = False,
    strategy_type: str = kruise.RECREATE,
    labels: dict[str, str] | None = None,
    min_ready_seconds: int = 0,
    pods_to_delete: list[str] | None = None,
    lifecycle: dict[str, Any] | None = None,
    extra_update_strategy: dict[str, Any] | None = None,
    name: str = "cs",
) -> dict[str, Any]:
    update_strategy: dict[str, Any] = {"type": strategy_type, "paused": paused}
    if partition is not None:
        update_strategy["partition"] = partition
    if max_unavailable is not None:
        update_strategy["maxUnavailable"] = max_unavailable
    if max_surge is not None:
        update_strategy["maxSurge"] = max_surge
    update_strategy.update(extra_update_strategy or {})
    scale_strategy: dict[str, Any] = {}
    if scale_max_unavailable is not None:
        scale_strategy["maxUnavailable"] = scale_max_unavailable
    if pods_to_delete is not None:
        scale_strategy["podsToDelete"] = pods_to_delete
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "img:1"}]}},
        "updateStrategy": update_strategy,
        "scaleStrategy": scale_strategy,
        "minReadySeconds": min_ready_seconds,
    }
    if lifecycle is not None:
        spec["lifecycle"] = lifecycle
    return {
        "apiVersion": kruise.API_VERSION,
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": "default", "uid": "cs-uid", "labels": labels or {}},
        "spec": spec,
    }


def make_pod(
    name: str,
    revision: str = "new",
    *,
    state: str | None = kruise.STATE_NORMAL,
    ready: bool = True,
    phase: str | None = None,
    node: str | None = "node-1",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
    ready_since: datetime | None = None,
    created: datetime | None = None,
    restarts: int = 0,
    specified_delete: bool = False,
    in_place_ready: bool | None = None,
    has_status: bool = True,
) -> dict[str, Any]:
    """A pod on ``revision``; ``ready`` makes it Running with Ready=True since ``ready_since``."""
    pod_labels: dict[str, str] = {kruise.CONTROLLER_REVISION_HASH_LABEL: revision}
    if state is not None:
        pod_labels[kruise.LIFECYCLE_STATE_LABEL] = state
    if specified_delete:
        pod_labels[kruise.SPECIFIED_DELETE_LABEL] = "true"
    pod_labels.update(labels or {})
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": pod_labels}
    if annotations:
        metadata["annotations"] = dict(annotations)
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    if created is not None:
        metadata["creationTimestamp"] = format_time(created)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img:1"}]}
    if node:
        spec["nodeName"] = node
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    if not has_status:
        return pod
    conditions: list[dict[str, Any]] = []
    since = ready_since or (NOW - timedelta(hours=1))
    conditions.append(
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": format_time(since)}
    )
    if in_place_ready is not None:
        conditions.append({"type": kruise.INPLACE_UPDATE_READY, "status": "True" if in_place_ready else "False"})
    pod["status"] = {
        "phase": phase or ("Running" if ready else "Pending"),
        "conditions": conditions,
        "containerStatuses": [{"name": "c", "image": "img:1", "imageID": "id-1", "restartCount": restarts}],
    }
    return pod
