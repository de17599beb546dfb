"""Columns and cells of the built-in printers other than pods, and the generic fallback."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.server.tables import printer_for

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
FIVE_MINUTES_AGO = "2024-05-01T11:55:00Z"


def meta(name: str = "x", **extra: Any) -> dict[str, Any]:
    return {"name": name, "creationTimestamp": FIVE_MINUTES_AGO, **extra}


def headers(group: str, kind: str) -> list[tuple[str, str, int]]:
    return [(c.name, c.type, c.priority) for c in printer_for(group, "v1", kind).columns]


def cells(group: str, kind: str, obj: dict[str, Any]) -> list[Any]:
    return printer_for(group, "v1", kind).cells(obj, NOW)


TEMPLATE = {"spec": {"containers": [{"name": "app", "image": "nginx:1.21"}, {"name": "side", "image": "busybox"}]}}


def test_deployment() -> None:
    assert headers("apps", "Deployment") == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "string", 0), ("Available", "string", 0),
        ("Age", "string", 0), ("Containers", "string", 1), ("Images", "string", 1), ("Selector", "string", 1)]
    deployment = {
        "metadata": meta("web"),
        "spec": {"replicas": 3, "template": TEMPLATE,
                 "selector": {"matchLabels": {"app": "web", "tier": "a"},
                              "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]},
                                                   {"key": "gone", "operator": "DoesNotExist"}]}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 1},
    }
    assert cells("apps", "Deployment", deployment) == [
        "web", "2/3", 3, 1, "5m", "app,side", "nginx:1.21,busybox", "app=web,env in (a,b),!gone,tier=a"]


def test_deployment_without_status_or_replicas() -> None:
    assert cells("apps", "Deployment", {"metadata": meta("d"), "spec": {"selector": {}}})[:5] == [
        "d", "0/1", 0, 0, "5m"]
    assert cells("apps", "Deployment", {"metadata": meta("d"), "spec": {"replicas": 0}})[1] == "0/0"


def test_replica_set() -> None:
    assert [h[0] for h in headers("apps", "ReplicaSet")] == [
        "Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]
    replica_set = {"metadata": meta("web-5d4f"), "spec": {"replicas": 2, "template": TEMPLATE,
                                                          "selector": {"matchLabels": {"pod-template-hash": "5d4f"}}},
                   "status": {"replicas": 2, "readyReplicas": 1}}
    assert cells("apps", "ReplicaSet", replica_set) == [
        "web-5d4f", 2, 2, 1, "5m", "app,side", "nginx:1.21,busybox", "pod-template-hash=5d4f"]


@pytest.mark.parametrize(("owners", "expected"), [
    ([], "<none>"),
    ([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "controller": True}],
     "cloneset.apps.kruise.io/cs"),
    ([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": False},
      {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "controller": True}], "daemonset.apps/ds"),
    ([{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": True}], "pod/p"),
])
def test_controller_revision(owners: list[dict[str, Any]], expected: str) -> None:
    assert [h[0] for h in headers("apps", "ControllerRevision")] == ["Name", "Controller", "Revision", "Age"]
    revision = {"metadata": meta("cs-7b9c", ownerReferences=owners), "revision": 4, "data": {}}
    assert cells("apps", "ControllerRevision", revision) == ["cs-7b9c", expected, 4, "5m"]


@pytest.mark.parametrize(("labels", "conditions", "unschedulable", "status", "roles"), [
    ({}, [{"type": "Ready", "status": "True"}], False, "Ready", "<none>"),
    ({"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": ""},
     [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "False"}], True,
     "NotReady,SchedulingDisabled", "control-plane,worker"),
    ({"kubernetes.io/role": "edge", "node-role.kubernetes.io/": "x"}, [], False, "Unknown", "edge"),
    ({}, [{"type": "Ready", "status": "Unknown"}], True, "NotReady,SchedulingDisabled", "<none>"),
])
def test_node(labels: dict[str, str], conditions: list[dict[str, str]], unschedulable: bool, status: str,
              roles: str) -> None:
    assert [h[0] for h in headers("", "Node")] == [
        "Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version",
        "Container-Runtime"]
    node = {"metadata": meta("n1", labels=labels), "spec": {"unschedulable": unschedulable},
            "status": {"conditions": conditions, "nodeInfo": {"kubeletVersion": "v1.20.0", "osImage": "Debian"},
                       "addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP",
                                                                             "address": "10.0.0.1"}]}}
    assert cells("", "Node", node) == ["n1", status, roles, "5m", "v1.20.0", "10.0.0.1", "<none>", "Debian",
                                       "<unknown>", "<unknown>"]


def test_namespace_configmap_secret_serviceaccount_lease() -> None:
    assert cells("", "Namespace", {"metadata": meta("dev"), "status": {"phase": "Active"}}) == ["dev", "Active", "5m"]
    assert headers("", "ConfigMap") == [("Name", "string", 0), ("Data", "string", 0), ("Age", "string", 0)]
    assert cells("", "ConfigMap", {"metadata": meta("cm"), "data": {"a": "1", "b": "2"},
                                   "binaryData": {"c": "AA=="}}) == ["cm", 3, "5m"]
    assert cells("", "ConfigMap", {"metadata": meta("empty")}) == ["empty", 0, "5m"]
    assert [h[0] for h in headers("", "Secret")] == ["Name", "Type", "Data", "Age"]
    assert cells("", "Secret", {"metadata": meta("s"), "type": "Opaque", "data": {"k": "dg=="}}) == [
        "s", "Opaque", 1, "5m"]
    assert cells("", "ServiceAccount", {"metadata": meta("default"), "secrets": [{"name": "t"}]}) == [
        "default", 1, "5m"]
    assert [h[0] for h in headers("coordination.k8s.io", "Lease")] == ["Name", "Holder", "Age"]
    assert cells("coordination.k8s.io", "Lease", {"metadata": meta("leader"),
                                                  "spec": {"holderIdentity": "pod-a_1234"}}) == [
        "leader", "pod-a_1234", "5m"]
    assert cells("coordination.k8s.io", "Lease", {"metadata": meta("free"), "spec": {}}) == ["free", "", "5m"]


def test_persistent_volume_claim() -> None:
    assert [(h[0], h[2]) for h in headers("", "PersistentVolumeClaim")] == [
        ("Name", 0), ("Status", 0), ("Volume", 0), ("Capacity", 0), ("Access Modes", 0), ("StorageClass", 0),
        ("VolumeAttributesClass", 0), ("Age", 0), ("VolumeMode", 1)]
    pending = {"metadata": meta("data"), "spec": {"storageClassName": "fast", "resources": {
        "requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}}
    assert cells("", "PersistentVolumeClaim", pending) == ["data", "Pending", "", "", "", "fast", "<unset>", "5m",
                                                                "<unset>"]
    bound = {"metadata": meta("data", annotations={"volume.beta.kubernetes.io/storage-class": "legacy"},
                              deletionTimestamp=FIVE_MINUTES_AGO),
             "spec": {"volumeName": "pv-1", "volumeMode": "Filesystem", "storageClassName": "fast",
                      "volumeAttributesClassName": "gold"},
             "status": {"phase": "Bound", "capacity": {"storage": "10240Mi"},
                        "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]}}
    assert cells("", "PersistentVolumeClaim", bound) == [
        "data", "Terminating", "pv-1", "10Gi", "RWO,RWX", "legacy", "gold", "5m", "Filesystem"]


def test_core_event() -> None:
    assert [(h[0], h[2]) for h in headers("", "Event")] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1), ("Source", 1),
        ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    event = {"metadata": meta("web.17a"), "involvedObject": {"kind": "Deployment", "name": "web",
                                                            "fieldPath": "spec.containers{app}"},
             "reason": "ScalingReplicaSet", "message": " Scaled up replica set web-5d4f to 3\n", "type": "Normal",
             "source": {"component": "deployment-controller", "host": "node-1"},
             "firstTimestamp": "2024-05-01T09:00:00Z", "lastTimestamp": "2024-05-01T11:58:00Z", "count": 4}
    assert cells("", "Event", event) == [
        "2m", "Normal", "ScalingReplicaSet", "deployment/web", "spec.containers{app}",
        "deployment-controller, node-1", "Scaled up replica set web-5d4f to 3", "3h", 4, "web.17a"]


def test_event_with_series_event_time_and_no_count() -> None:
    event = {"metadata": meta("e"), "involvedObject": {"kind": "Node"}, "eventTime": "2024-05-01T11:00:00.000000Z",
             "series": {"count": 7, "lastObservedTime": "2024-05-01T11:59:00.123456Z"},
             "reportingComponent": "kubelet", "reportingInstance": "node-1", "type": "Warning", "reason": "R"}
    row = cells("", "Event", event)
    assert row[:4] == ["59s", "Warning", "R", "node"]
    assert row[5] == "kubelet, node-1" and row[7] == "60m" and row[8] == 7
    singleton = {"metadata": meta("e"), "involvedObject": {"kind": "Pod", "name": "p"},
                 "eventTime": "2024-05-01T11:59:30.000000Z"}
    assert cells("", "Event", singleton)[0] == "30s"
    assert cells("", "Event", singleton)[8] == 1


def test_events_k8s_io_event_uses_the_core_columns() -> None:
    event = {"metadata": meta("web.17b"), "regarding": {"kind": "Pod", "name": "web-1"}, "note": "Pulled image",
             "reason": "Pulled", "type": "Normal", "reportingController": "kubelet", "reportingInstance": "node-1",
             "eventTime": "2024-05-01T11:57:00.000000Z", "deprecatedCount": 2,
             "deprecatedLastTimestamp": "2024-05-01T11:59:00Z"}
    assert cells("events.k8s.io", "Event", event) == [
        "60s", "Normal", "Pulled", "pod/web-1", "", "kubelet, node-1", "Pulled image", "3m", 2, "web.17b"]


@pytest.mark.parametrize(("group", "kind"), [
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("autoscaling", "Scale"),
    ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "ClusterRole"), ("", "LimitRange")])
def test_generic_table_for_kinds_without_a_printer(group: str, kind: str) -> None:
    assert headers(group, kind) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert cells(group, kind, {"metadata": meta("thing")}) == ["thing", FIVE_MINUTES_AGO]
    assert cells(group, kind, {"metadata": {"name": "new"}}) == ["new", "0001-01-01T00:00:00Z"]
