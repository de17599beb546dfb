"""Benchmark objects and pre-filled server data directories.

Objects are written straight into the server's store (``kubeloop.server.storage.Storage``)
before the server starts, so that creating them is never part of a measurement. Every run
starts its own server from a byte-identical copy of a template directory, so every
contestant meets exactly the same state (same objects, same resourceVersions).

All objects carry the label ``bench=yes`` and live in the namespaces ``ns-0`` .. ``ns-9``
(which exist as Namespace objects).
"""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kubeloop.server import admission
from kubeloop.server.storage import ResourceType, Storage

NAMESPACES = [f"ns-{i}" for i in range(10)]
CONFIG_MAPS = ResourceType("", "configmaps")
PODS = ResourceType("", "pods")
DEPLOYMENTS = ResourceType("apps", "deployments")
Obj = dict[str, Any]


def _meta(name: str, namespace: str, stamp: str) -> Obj:
    return {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()), "creationTimestamp": stamp,
            "labels": {"bench": "yes", "app": f"app-{hash(name) % 50}"}}


def config_map(i: int, stamp: str) -> Obj:
    namespace = NAMESPACES[i % len(NAMESPACES)]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(f"cm-{i}", namespace, stamp),
            "data": {"v": "0", "settings": "log-level=info\nreplicas=3\n"}}


def _container(i: int) -> Obj:
    return {"name": "app", "image": f"registry.example.com/team/app-{i % 50}:1.4.{i % 7}",
            "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "SHARD", "value": str(i % 16)}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                               "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                               "failureThreshold": 3},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"}


def pod(i: int, stamp: str) -> Obj:
    namespace = NAMESPACES[i % len(NAMESPACES)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(f"pod-{i}", namespace, stamp),
            "spec": {"containers": [_container(i)], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "securityContext": {},
                     "nodeName": "node-1", "serviceAccountName": "default"},
            "status": {"phase": "Running", "qosClass": "Burstable", "podIP": f"10.0.{i // 250 % 250}.{i % 250}"}}


def deployment(i: int, stamp: str) -> Obj:
    """A Deployment of realistic size (~2 KB of JSON, as `kubectl get -o json` shows one)."""
    namespace = NAMESPACES[i % len(NAMESPACES)]
    name = f"deploy-{i}"
    labels = {"app": name, "tier": "backend"}
    meta = _meta(name, namespace, stamp)
    meta["annotations"] = {"deployment.kubernetes.io/revision": "1"}
    meta["generation"] = 1
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "revisionHistoryLimit": 10,
                     "progressDeadlineSeconds": 600,
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [_container(i)], "restartPolicy": "Always",
                                           "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                                           "schedulerName": "default-scheduler", "securityContext": {}}}},
            "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
                       "availableReplicas": 3,
                       "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                       "message": "Deployment has minimum availability.",
                                       "lastUpdateTime": stamp, "lastTransitionTime": stamp},
                                      {"type": "Progressing", "status": "True",
                                       "reason": "NewReplicaSetAvailable",
                                       "message": f'ReplicaSet "{name}-5d9c7b8f6" has successfully progressed.',
                                       "lastUpdateTime": stamp, "lastTransitionTime": stamp}]}}


def defaulted(obj: Obj) -> Obj:
    """The object as the server would store it after a create: with its kind's defaults,
    so that later updates through the API do not trip over fields the filler left unset."""
    group, _, version = obj["apiVersion"].rpartition("/")
    admission.default_object(group, version, obj["kind"], obj)
    return obj


BUILDERS = {"configmaps": (CONFIG_MAPS, config_map), "pods": (PODS, pod), "deployments": (DEPLOYMENTS, deployment)}


@dataclass(frozen=True)
class Dataset:
    """A template directory's content: ``objects`` of ``resource`` and, optionally, a history
    of ``updates_per_object`` data updates after them (B5's watch replay)."""

    resource: str
    objects: int
    updates_per_object: int = 0

    @property
    def name(self) -> str:
        return f"{self.resource}-{self.objects}" + (f"-x{self.updates_per_object}" if self.updates_per_object else "")


@dataclass(frozen=True)
class Template:
    path: Path
    dataset: Dataset
    raw_json_bytes: int
    """Sum of the stored objects' compact JSON sizes (what a cache must at least hold)."""
    revision_before_updates: int
    revision: int


def build_template(root: Path, dataset: Dataset) -> Template:
    path = root / dataset.name
    if path.exists():
        shutil.rmtree(path)
    storage = Storage.open(path, watch_cache_size=max(1000, dataset.objects * dataset.updates_per_object + 10))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        for namespace in NAMESPACES:
            storage.create(ResourceType("", "namespaces"), {
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": namespace, "uid": str(uuid.uuid4()), "creationTimestamp": stamp},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        resource_type, build = BUILDERS[dataset.resource]
        raw = 0
        stored = []
        for i in range(dataset.objects):
            obj = storage.create(resource_type, defaulted(build(i, stamp)))
            raw += len(orjson.dumps(obj))
            stored.append(obj)
        before = storage.revision
        for round_ in range(1, dataset.updates_per_object + 1):
            for index, obj in enumerate(stored):
                changed = {**obj, "data": {**obj.get("data", {}), "v": str(round_)}}
                stored[index] = storage.update(resource_type, changed)
        return Template(path, dataset, raw, before, storage.revision)
    finally:
        storage.close()


def copy_template(template: Template, target: Path) -> Path:
    """A fresh data directory for one run (the server keeps its SQLite files there)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(template.path, target)
    return target


def mutate_offline(data_dir: Path, resource: str, fraction: float, window: int) -> dict[str, int]:
    """B6: while the server is down, delete, update and create ``fraction`` of the objects
    each, and push enough extra changes through that every watcher's resourceVersion falls
    out of the ``window`` (so resuming it answers 410 Gone)."""
    resource_type, build = BUILDERS[resource]
    storage = Storage.open(data_dir, watch_cache_size=window)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        items, _, _ = storage.list(resource_type, None)
        count = max(1, int(len(items) * fraction))
        deleted = items[:count]
        updated = items[count:2 * count]
        for obj in deleted:
            meta = obj["metadata"]
            storage.delete(resource_type, meta["namespace"], meta["name"])
        changes = len(deleted)
        while changes < window + len(updated) + 1 or changes < 2 * count:
            for obj in updated:
                current = storage.get(resource_type, obj["metadata"]["namespace"], obj["metadata"]["name"])
                assert current is not None
                data = dict(current.get("data") or {})
                data["v"] = str(int(data.get("v", "0")) + 1)
                storage.update(resource_type, {**current, "data": data})
                changes += 1
        for i in range(count):
            obj = build(1_000_000 + i, stamp)
            storage.create(resource_type, defaulted(obj))
        return {"deleted": len(deleted), "updated": len(updated), "created": count,
                "objects": storage.count(resource_type), "revision": storage.revision}
    finally:
        storage.close()
