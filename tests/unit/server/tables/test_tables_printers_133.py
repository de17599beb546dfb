"""Upstream 1.33 columns and cells of the printers for services, batch, autoscaling, storage,
access, cluster and control-plane kinds (expected cells as kube-apiserver formats them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.server.tables import list_table, printer_for, table_request
from kubeloop.server.tables.quantity import canonical_quantity

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
FIVE_MINUTES_AGO = "2024-05-01T11:55:00Z"


def meta(name: str = "x", **extra: Any) -> dict[str, Any]:
    return {"name": name, "creationTimestamp": FIVE_MINUTES_AGO, **extra}


def headers(group: str, kind: str) -> list[tuple[str, str, int]]:
    return [(c.name, c.type, c.priority) for c in printer_for(group, "v1", kind).columns]


def names(group: str, kind: str) -> list[str]:
    return [c.name for c in printer_for(group, "v1", kind).columns]


def cells(group: str, kind: str, obj: dict[str, Any]) -> list[Any]:
    return printer_for(group, "v1", kind).cells(obj, NOW)


@pytest.mark.parametrize(("written", "canonical"), [
    ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"), ("0.5Ki", "512"), ("1000", "1k"),
    ("1500", "1500"), ("0.5", "500m"), ("1e3", "1e3"), ("1.5e3", "1500"), ("1000M", "1G"), ("0", "0"), (2, "2"),
])
def test_canonical_quantity(written: Any, canonical: str) -> None:
    assert canonical_quantity(written) == canonical


def test_descriptions_are_the_field_docs() -> None:
    columns = {c.name: c.description for c in printer_for("", "v1", "Service").columns}
    assert columns["Name"].startswith("Name must be unique within a namespace.")
    assert columns["Age"].startswith("CreationTimestamp is a timestamp")
    assert columns["Type"].startswith("type determines how the Service is exposed.")
    assert printer_for("batch", "v1", "Job").columns[1].definition()["description"] == "Status of the job."
    assert printer_for("node.k8s.io", "v1", "RuntimeClass").columns[1].description == ""


SERVICE_HEADERS = [("Name", "string", 0), ("Type", "string", 0), ("Cluster-IP", "string", 0),
                   ("External-IP", "string", 0), ("Port(s)", "string", 0), ("Age", "string", 0),
                   ("Selector", "string", 1)]


@pytest.mark.parametrize(("spec", "status", "expected"), [
    ({"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
      "ports": [{"port": 80, "protocol": "TCP"}], "selector": {"b": "2", "a": "1"}}, {},
     ["10.96.0.10", "<none>", "80/TCP", "a=1,b=2"]),
    ({"type": "NodePort", "clusterIPs": ["10.96.0.11"], "externalIPs": ["1.2.3.4", "5.6.7.8"],
      "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}, {},
     ["10.96.0.11", "1.2.3.4,5.6.7.8", "80:30080/TCP,53/UDP", "<none>"]),
    ({"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"], "ports": [{"port": 443, "nodePort": 31443,
                                                                     "protocol": "TCP"}]}, {},
     ["10.96.0.12", "<pending>", "443:31443/TCP", "<none>"]),
    ({"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"], "externalIPs": ["9.9.9.9"]},
     {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}, {"hostname": "a-very-long-balancer.example.com"},
                                   {"ip": "203.0.113.7"}]}},
     ["10.96.0.12", "203.0.113.7,a-very-long-balancer.example.com,9.9.9.9", "<none>", "<none>"]),
    ({"type": "ExternalName", "externalName": "db.example.com"}, {}, ["<none>", "db.example.com", "<none>", "<none>"]),
    ({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}, {}, ["None", "<none>", "<none>", "<none>"]),
])
def test_service(spec: dict[str, Any], status: dict[str, Any], expected: list[str]) -> None:
    assert headers("", "Service") == SERVICE_HEADERS
    row = cells("", "Service", {"metadata": meta("svc"), "spec": spec, "status": status})
    assert row == ["svc", spec["type"], expected[0], expected[1], expected[2], "5m", expected[3]]


def test_endpoints_truncate_after_three() -> None:
    assert names("", "Endpoints") == ["Name", "Endpoints", "Age"]
    endpoints = {"metadata": meta("web"), "subsets": [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
        {"addresses": [{"ip": "fd00::1"}]}]}
    assert cells("", "Endpoints", endpoints) == ["web", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...", "5m"]
    assert cells("", "Endpoints", {"metadata": meta("v6"), "subsets": [
        {"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 8080}]}]})[1] == "[fd00::1]:8080"
    assert cells("", "Endpoints", {"metadata": meta("none")})[1] == "<none>"


def test_endpoint_slice() -> None:
    assert names("discovery.k8s.io", "EndpointSlice") == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    endpoint_slice = {"metadata": meta("web-abc"), "addressType": "IPv4",
                      "ports": [{"port": 80}, {"name": "metrics"}, {}, {"port": 9000}],
                      "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]}
    assert cells("discovery.k8s.io", "EndpointSlice", endpoint_slice) == [
        "web-abc", "IPv4", "80,metrics,* + 1 more...", "10.0.0.1,10.0.0.2", "5m"]
    assert cells("discovery.k8s.io", "EndpointSlice", {"metadata": meta("e"), "addressType": "IPv6"})[2:4] == [
        "<unset>", "<unset>"]


def test_ingress_and_ingress_class() -> None:
    assert names("networking.k8s.io", "Ingress") == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    ingress = {"metadata": meta("web"), "spec": {
        "ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"]}],
        "rules": [{"host": "a.example.com"}, {}, {"host": "b.example.com"}, {"host": "c.example.com"},
                  {"host": "d.example.com"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.168.10.100"}, {"hostname": "lb.example.com"}]}}}
    assert cells("networking.k8s.io", "Ingress", ingress) == [
        "web", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "192.168.10.100,lb.example.com",
        "80, 443", "5m"]
    assert cells("networking.k8s.io", "Ingress", {"metadata": meta("bare"), "spec": {}}) == [
        "bare", "<none>", "*", "", "80", "5m"]
    assert names("networking.k8s.io", "IngressClass") == ["Name", "Controller", "Parameters", "Age"]
    ingress_class = {"metadata": meta("nginx"), "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {
        "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}}
    assert cells("networking.k8s.io", "IngressClass", ingress_class) == [
        "nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "5m"]
    assert cells("networking.k8s.io", "IngressClass", {"metadata": meta("c"), "spec": {"controller": "x"}})[2] == \
        "<none>"


def test_network_policy_service_cidr_ip_address() -> None:
    policy = {"metadata": meta("deny"), "spec": {"podSelector": {"matchLabels": {"app": "db"}}}}
    assert cells("networking.k8s.io", "NetworkPolicy", policy) == ["deny", "app=db", "5m"]
    assert cells("networking.k8s.io", "NetworkPolicy", {"metadata": meta("all"), "spec": {"podSelector": {}}})[1] == \
        "<none>"
    cidr = {"metadata": meta("kubernetes"), "spec": {"cidrs": ["10.96.0.0/12", "fd00::/108"]}}
    assert cells("networking.k8s.io", "ServiceCIDR", cidr) == ["kubernetes", "10.96.0.0/12,fd00::/108", "5m"]
    assert names("networking.k8s.io", "IPAddress") == ["Name", "ParentRef"]
    address = {"metadata": meta("10.96.0.1"), "spec": {"parentRef": {
        "group": "", "resource": "Services", "namespace": "default", "name": "kubernetes"}}}
    assert cells("networking.k8s.io", "IPAddress", address) == ["10.96.0.1", "services/default/kubernetes", "5m"]
    gateway = {"metadata": meta("10.0.0.9"), "spec": {"parentRef": {
        "group": "gateway.networking.k8s.io", "resource": "gateways", "name": "gw"}}}
    assert cells("networking.k8s.io", "IPAddress", gateway)[1] == "gateways.gateway.networking.k8s.io/gw"


JOB_TEMPLATE = {"spec": {"containers": [{"name": "pi", "image": "perl:5.34"}]}}


@pytest.mark.parametrize(("job", "status", "completions", "duration"), [
    ({"spec": {"completions": 3, "parallelism": 2}, "status": {"succeeded": 1, "startTime": "2024-05-01T11:58:00Z"}},
     "Running", "1/3", "2m"),
    ({"spec": {"parallelism": 4}, "status": {"succeeded": 0, "startTime": "2024-05-01T11:56:00Z",
                                             "completionTime": "2024-05-01T11:56:42Z",
                                             "conditions": [{"type": "Complete", "status": "True"}]}},
     "Complete", "0/1 of 4", "42s"),
    ({"spec": {}, "status": {"conditions": [{"type": "Failed", "status": "False"},
                                            {"type": "Suspended", "status": "True"}]}}, "Suspended", "0/1", ""),
    ({"metadata": {"deletionTimestamp": FIVE_MINUTES_AGO},
      "status": {"conditions": [{"type": "FailureTarget", "status": "True"}]}}, "Terminating", "0/1", ""),
    ({"status": {"conditions": [{"type": "FailureTarget", "status": "True"},
                                {"type": "Failed", "status": "True"}]}}, "Failed", "0/1", ""),
    ({"status": {"conditions": [{"type": "FailureTarget", "status": "True"}]}}, "FailureTarget", "0/1", ""),
])
def test_job(job: dict[str, Any], status: str, completions: str, duration: str) -> None:
    assert headers("batch", "Job") == [
        ("Name", "string", 0), ("Status", "string", 0), ("Completions", "string", 0), ("Duration", "string", 0),
        ("Age", "string", 0), ("Containers", "string", 1), ("Images", "string", 1), ("Selector", "string", 1)]
    obj = {**job, "metadata": meta("pi", **job.get("metadata", {})),
           "spec": {**job.get("spec", {}), "template": JOB_TEMPLATE,
                    "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}}}
    assert cells("batch", "Job", obj) == [
        "pi", status, completions, duration, "5m", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=u1"]


def test_cron_job() -> None:
    assert headers("batch", "CronJob") == [
        ("Name", "string", 0), ("Schedule", "string", 0), ("Timezone", "string", 0), ("Suspend", "boolean", 0),
        ("Active", "integer", 0), ("Last Schedule", "string", 0), ("Age", "string", 0), ("Containers", "string", 1),
        ("Images", "string", 1), ("Selector", "string", 1)]
    cron_job = {"metadata": meta("hello"), "spec": {
        "schedule": "*/1 * * * *", "timeZone": "Etc/UTC", "suspend": False,
        "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        "status": {"active": [{"name": "hello-1"}], "lastScheduleTime": "2024-05-01T11:59:00Z"}}
    assert cells("batch", "CronJob", cron_job) == [
        "hello", "*/1 * * * *", "Etc/UTC", "False", 1, "60s", "5m", "pi", "perl:5.34", "<none>"]
    bare = {"metadata": meta("bare"), "spec": {"schedule": "@daily"}}
    assert cells("batch", "CronJob", bare)[:7] == ["bare", "@daily", "<none>", "<unset>", 0, "<none>", "5m"]


def test_hpa() -> None:
    assert names("autoscaling", "HorizontalPodAutoscaler") == [
        "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    hpa = {"metadata": meta("web"), "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2, "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                 "averageUtilization": 80}}},
                    {"type": "Pods", "pods": {"metric": {"name": "rps"},
                                              "target": {"type": "AverageValue", "averageValue": "1000"}}}]},
        "status": {"currentReplicas": 3, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}]}}
    assert cells("autoscaling", "HorizontalPodAutoscaler", hpa) == [
        "web", "Deployment/web", "cpu: 42%/80%, <unknown>/1k", "2", 10, 3, "5m"]
    many = {"metadata": meta("m"), "spec": {"scaleTargetRef": {"kind": "StatefulSet", "name": "db"}, "maxReplicas": 3,
                                            "metrics": [
        {"type": "Resource", "resource": {"name": "memory", "target": {"averageValue": "1536Mi"}}},
        {"type": "External", "external": {"target": {"value": "0.5"}}},
        {"type": "Object", "object": {"target": {"averageValue": "2"}}}]},
        "status": {"currentMetrics": [
            {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "1Gi"}}},
            {"type": "External", "external": {"current": {"value": "250m"}}}]}}
    assert cells("autoscaling", "HorizontalPodAutoscaler", many) == [
        "m", "StatefulSet/db", "memory: 1Gi/1536Mi, 250m/500m + 1 more...", "<unset>", 3, 0, "5m"]
    none = {"metadata": meta("n"), "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 1}}
    assert cells("autoscaling", "HorizontalPodAutoscaler", none)[2] == "<none>"


def test_pdb() -> None:
    assert headers("policy", "PodDisruptionBudget") == [
        ("Name", "string", 0), ("Min Available", "string", 0), ("Max Unavailable", "string", 0),
        ("Allowed Disruptions", "integer", 0), ("Age", "string", 0)]
    pdb = {"metadata": meta("zk"), "spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}}
    assert cells("policy", "PodDisruptionBudget", pdb) == ["zk", "2", "N/A", 1, "5m"]
    pdb = {"metadata": meta("zk"), "spec": {"maxUnavailable": "25%"}}
    assert cells("policy", "PodDisruptionBudget", pdb) == ["zk", "N/A", "25%", 0, "5m"]


def test_workloads() -> None:
    template = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "pg:16"}],
                                                                 "nodeSelector": {"disk": "ssd"}}}
    sts = {"metadata": meta("db"), "spec": {"replicas": 3, "template": template},
           "status": {"readyReplicas": 2}}
    assert names("apps", "StatefulSet") == ["Name", "Ready", "Age", "Containers", "Images"]
    assert cells("apps", "StatefulSet", sts) == ["db", "2/3", "5m", "db", "pg:16"]
    assert names("apps", "DaemonSet") == ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
                                          "Node Selector", "Age", "Containers", "Images", "Selector"]
    ds = {"metadata": meta("agent"), "spec": {"template": template, "selector": {"matchLabels": {"app": "db"}}},
          "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                     "updatedNumberScheduled": 1, "numberAvailable": 2}}
    assert cells("apps", "DaemonSet", ds) == ["agent", 3, 3, 2, 1, 2, "disk=ssd", "5m", "db", "pg:16", "app=db"]
    rc = {"metadata": meta("rc"), "spec": {"selector": {"app": "db"}, "template": template}, "status": {"replicas": 1}}
    assert cells("", "ReplicationController", rc) == ["rc", 1, 1, 0, "5m", "db", "pg:16", "app=db"]
    assert cells("apps", "ReplicaSet", {"metadata": meta("rs"), "spec": {"template": template}})[-1] == "<none>"
    assert names("", "PodTemplate") == ["Name", "Containers", "Images", "Pod Labels"]
    assert cells("", "PodTemplate", {"metadata": meta("t"), "template": template}) == ["t", "db", "pg:16", "app=db"]
    assert cells("", "PodTemplate", {"metadata": meta("t"), "template": {}}) == ["t", "", "", "<none>"]


def test_persistent_volume_and_storage_classes() -> None:
    assert names("", "PersistentVolume") == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    volume = {"metadata": meta("pv-1"), "spec": {
        "capacity": {"storage": "5120Mi"}, "accessModes": ["ReadWriteOncePod", "ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": "default", "name": "data"},
        "storageClassName": "fast", "volumeMode": "Block"}, "status": {"phase": "Bound"}}
    assert cells("", "PersistentVolume", volume) == [
        "pv-1", "5Gi", "RWO,RWOP", "Retain", "Bound", "default/data", "fast", "<unset>", "", "5m", "Block"]
    assert cells("", "PersistentVolume", {"metadata": meta("pv-2"), "spec": {},
                                          "status": {"phase": "Failed", "reason": "Oops"}}) == [
        "pv-2", "0", "", "", "Failed", "", "", "<unset>", "Oops", "5m", "<unset>"]
    assert names("storage.k8s.io", "StorageClass") == [
        "Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]
    default = {"metadata": meta("standard", annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
               "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer",
               "allowVolumeExpansion": True}
    assert cells("storage.k8s.io", "StorageClass", default) == [
        "standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", True, "5m"]
    beta = {"metadata": meta("old", annotations={"storageclass.beta.kubernetes.io/is-default-class": "true"}),
            "provisioner": "p", "reclaimPolicy": "Retain"}
    assert cells("storage.k8s.io", "StorageClass", beta)[:5] == ["old (default)", "p", "Retain", "Immediate", False]


def test_csi_kinds_and_volume_attachment() -> None:
    driver = {"metadata": meta("csi.example.com"), "spec": {
        "attachRequired": False, "podInfoOnMount": True, "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
        "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}
    assert names("storage.k8s.io", "CSIDriver") == [
        "Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish",
        "Modes", "Age"]
    assert cells("storage.k8s.io", "CSIDriver", driver) == [
        "csi.example.com", False, True, False, "a,b", False, "Persistent,Ephemeral", "5m"]
    assert cells("storage.k8s.io", "CSIDriver", {"metadata": meta("d"), "spec": {}}) == [
        "d", True, False, False, "<unset>", False, "<none>", "5m"]
    assert cells("storage.k8s.io", "CSINode", {"metadata": meta("n1"), "spec": {"drivers": [{"name": "a"}]}}) == [
        "n1", 1, "5m"]
    assert names("storage.k8s.io", "CSIStorageCapacity") == ["Name", "StorageClassName", "Capacity"]
    assert cells("storage.k8s.io", "CSIStorageCapacity", {"metadata": meta("c"), "storageClassName": "fast",
                                                         "capacity": "2048Mi"}) == ["c", "fast", "2Gi"]
    assert cells("storage.k8s.io", "CSIStorageCapacity", {"metadata": meta("c"), "storageClassName": "s"})[2] == \
        "<unset>"
    attachment = {"metadata": meta("csi-1"), "spec": {"attacher": "csi.example.com", "nodeName": "n1",
                                                      "source": {"persistentVolumeName": "pv-1"}},
                  "status": {"attached": True}}
    assert headers("storage.k8s.io", "VolumeAttachment")[1] == ("Attacher", "string", 0)
    assert printer_for("storage.k8s.io", "v1", "VolumeAttachment").columns[1].format == "name"
    assert cells("storage.k8s.io", "VolumeAttachment", attachment) == ["csi-1", "csi.example.com", "pv-1", "n1", True,
                                                                       "5m"]


def test_role_bindings_and_csr() -> None:
    assert headers("rbac.authorization.k8s.io", "RoleBinding") == [
        ("Name", "string", 0), ("Role", "string", 0), ("Age", "string", 0), ("Users", "string", 1),
        ("Groups", "string", 1), ("ServiceAccounts", "string", 1)]
    binding = {"metadata": meta("admins"), "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                       "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"kind": "User", "name": "jane"}, {"kind": "User", "name": "joe"},
                            {"kind": "Group", "name": "ops"},
                            {"kind": "ServiceAccount", "namespace": "kube-system", "name": "bot"}]}
    assert cells("rbac.authorization.k8s.io", "RoleBinding", binding) == [
        "admins", "ClusterRole/admin", "5m", "jane, joe", "ops", "kube-system/bot"]
    description = printer_for("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding").columns[3].description
    assert description == "Users in the clusterRoleBinding"
    assert cells("rbac.authorization.k8s.io", "ClusterRoleBinding", {"metadata": meta("b"), "roleRef": {
        "kind": "ClusterRole", "name": "view"}}) == ["b", "ClusterRole/view", "5m", "", "", ""]
    assert names("certificates.k8s.io", "CertificateSigningRequest") == [
        "Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    csr = {"metadata": meta("csr-1"), "spec": {"signerName": "kubernetes.io/kube-apiserver-client",
                                               "username": "jane", "expirationSeconds": 86400},
           "status": {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}],
                      "certificate": "LS0t"}}
    assert cells("certificates.k8s.io", "CertificateSigningRequest", csr) == [
        "csr-1", "5m", "kubernetes.io/kube-apiserver-client", "jane", "24h", "Approved,Failed,Issued"]
    denied = {"metadata": meta("csr-2"), "spec": {}, "status": {"conditions": [
        {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}}
    assert cells("certificates.k8s.io", "CertificateSigningRequest", denied)[2:] == ["<none>", "", "<none>", "Denied"]
    assert cells("certificates.k8s.io", "CertificateSigningRequest", {"metadata": meta("p")})[5] == "Pending"


def test_cluster_kinds() -> None:
    assert names("", "ComponentStatus") == ["Name", "Status", "Message", "Error"]
    healthy = {"metadata": {"name": "etcd-0"}, "conditions": [
        {"type": "Other", "status": "False"}, {"type": "Healthy", "status": "True", "message": "ok"}]}
    assert cells("", "ComponentStatus", healthy) == ["etcd-0", "Healthy", "ok", ""]
    sick = {"metadata": {"name": "scheduler"}, "conditions": [
        {"type": "Healthy", "status": "False", "message": "", "error": "connection refused"}]}
    assert cells("", "ComponentStatus", sick) == ["scheduler", "Unhealthy", "", "connection refused"]
    assert cells("", "ComponentStatus", {"metadata": {"name": "x"}}) == ["x", "Unknown", "", ""]
    quota = {"metadata": meta("compute"), "status": {
        "hard": {"requests.cpu": "1", "pods": "10", "limits.memory": "2048Mi", "limits.cpu": "2"},
        "used": {"requests.cpu": "500m", "limits.memory": "1Gi"}}}
    assert cells("", "ResourceQuota", quota) == [
        "compute", "pods: 0/10, requests.cpu: 500m/1", "limits.cpu: 0/2, limits.memory: 1Gi/2Gi", "5m"]
    assert cells("", "ResourceQuota", {"metadata": meta("q")}) == ["q", "", "", "5m"]
    assert headers("scheduling.k8s.io", "PriorityClass") == [
        ("Name", "string", 0), ("Value", "integer", 0), ("Global-Default", "boolean", 0), ("Age", "string", 0),
        ("PreemptionPolicy", "string", 0)]
    priority = {"metadata": meta("high"), "value": 1000000, "globalDefault": True,
                "preemptionPolicy": "PreemptLowerPriority"}
    assert cells("scheduling.k8s.io", "PriorityClass", priority) == [
        "high", 1000000, True, "5m", "PreemptLowerPriority"]
    assert cells("node.k8s.io", "RuntimeClass", {"metadata": meta("gvisor"), "handler": "runsc"}) == [
        "gvisor", "runsc", "5m"]


def test_control_plane_kinds() -> None:
    webhooks = {"metadata": meta("hooks"), "webhooks": [{"name": "a"}, {"name": "b"}]}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        assert headers("admissionregistration.k8s.io", kind) == [
            ("Name", "string", 0), ("Webhooks", "integer", 0), ("Age", "string", 0)]
        assert cells("admissionregistration.k8s.io", kind, webhooks) == ["hooks", 2, "5m"]
    policy = {"metadata": meta("p"), "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                                              "validations": [{"expression": "true"}]}}
    assert cells("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", policy) == [
        "p", 1, "v1/ConfigMap", "5m"]
    assert cells("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", {"metadata": meta("q"),
                                                                              "spec": {}})[1:3] == [0, "<unset>"]
    kind = "ValidatingAdmissionPolicyBinding"
    binding = {"metadata": meta("b"), "spec": {"policyName": "p", "paramRef": {"name": "cfg", "namespace": "ns"}}}
    assert cells("admissionregistration.k8s.io", kind, binding) == ["b", "p", "ns/cfg", "5m"]
    binding["spec"]["paramRef"] = {"name": "cfg"}
    assert cells("admissionregistration.k8s.io", kind, binding)[2] == "*/cfg"
    binding["spec"]["paramRef"] = {"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "env", "operator": "In", "values": ["x", "y"]}]}}
    assert cells("admissionregistration.k8s.io", kind, binding)[2] == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement"
        "{LabelSelectorRequirement{Key:env,Operator:In,Values:[x y],},},}")
    binding["spec"].pop("paramRef")
    assert cells("admissionregistration.k8s.io", kind, binding)[2] == "<unset>"


def test_flow_control_and_api_service() -> None:
    assert names("flowcontrol.apiserver.k8s.io", "FlowSchema") == [
        "Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]
    schema = {"metadata": meta("system-leader-election"), "spec": {
        "priorityLevelConfiguration": {"name": "leader-election"}, "matchingPrecedence": 100,
        "distinguisherMethod": {"type": "ByUser"}},
        "status": {"conditions": [{"type": "Dangling", "status": "False"}]}}
    assert cells("flowcontrol.apiserver.k8s.io", "FlowSchema", schema) == [
        "system-leader-election", "leader-election", 100, "ByUser", "5m", "False"]
    exempt = {"metadata": meta("exempt"), "spec": {"priorityLevelConfiguration": {"name": "exempt"},
                                                   "matchingPrecedence": 1}}
    assert cells("flowcontrol.apiserver.k8s.io", "FlowSchema", exempt)[3:] == ["<none>", "5m", "?"]
    catch_all = {"metadata": meta("catch-all"), "spec": {"matchingPrecedence": 10000}}
    other = {"metadata": meta("a-late"), "spec": {"matchingPrecedence": 100}}
    request = table_request("application/json;as=Table;v=v1;g=meta.k8s.io")
    assert request is not None
    table = list_table(printer_for("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema"),
                       {"items": [catch_all, schema, exempt, other]}, request=request, include="None",
                       api_version="flowcontrol.apiserver.k8s.io/v1", kind="FlowSchema", now=NOW)
    assert [row["cells"][0] for row in table["rows"]] == ["exempt", "a-late", "system-leader-election", "catch-all"]
    level = {"metadata": meta("workload-low"), "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 100, "limitResponse": {"type": "Queue", "queuing": {
            "queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}
    assert cells("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", level) == [
        "workload-low", "Limited", 100, 128, 6, 50, "5m"]
    exempt_level = {"metadata": meta("exempt"), "spec": {"type": "Exempt", "exempt": {}}}
    assert cells("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", exempt_level) == [
        "exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "5m"]
    reject = {"metadata": meta("r"), "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                                                                              "limitResponse": {"type": "Reject"}}}}
    assert cells("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", reject)[2:6] == [
        5, "<none>", "<none>", "<none>"]
    assert names("apiregistration.k8s.io", "APIService") == ["Name", "Service", "Available", "Age"]
    local = {"metadata": meta("v1.apps"), "spec": {"group": "apps"}, "status": {"conditions": [
        {"type": "Available", "status": "True", "reason": "Local"}]}}
    assert cells("apiregistration.k8s.io", "APIService", local) == ["v1.apps", "Local", "True", "5m"]
    remote = {"metadata": meta("v1beta1.metrics.k8s.io"), "spec": {"service": {
        "namespace": "kube-system", "name": "metrics-server"}}, "status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}}
    assert cells("apiregistration.k8s.io", "APIService", remote) == [
        "v1beta1.metrics.k8s.io", "kube-system/metrics-server", "False (MissingEndpoints)", "5m"]
    assert cells("apiregistration.k8s.io", "APIService", {"metadata": meta("x"), "spec": {}})[2] == "Unknown"
