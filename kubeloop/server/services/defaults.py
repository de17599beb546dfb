"""Defaults of Services, Endpoints and EndpointSlices, as upstream's ``pkg/apis/core/v1/defaults.go``
(``SetDefaults_Service``, ``SetDefaults_EndpointPort``) and ``pkg/apis/discovery/v1/defaults.go``.

Defaulting runs on every write (create, update, patch), so each rule only fills what is unset.
IP families and the family policy are not defaults upstream: the allocator sets them
(:mod:`.allocation`), because they depend on the cluster's configuration.
"""

from __future__ import annotations

from typing import Any

CLUSTER_IP = "ClusterIP"
NODE_PORT = "NodePort"
LOAD_BALANCER = "LoadBalancer"
EXTERNAL_NAME = "ExternalName"
DEFAULT_CLIENT_IP_TIMEOUT = 10800
"""``DefaultClientIPServiceAffinitySeconds``: three hours."""

Obj = dict[str, Any]


def _spec(obj: Obj) -> dict[str, Any] | None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    return spec if isinstance(spec, dict) else None


def externally_accessible(spec: dict[str, Any]) -> bool:
    """``service.ExternallyAccessible``: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    kind = spec.get("type")
    return kind in (NODE_PORT, LOAD_BALANCER) or (kind == CLUSTER_IP and bool(spec.get("externalIPs")))


def default_service(service: Obj) -> None:
    """``SetDefaults_Service`` plus the status every stored Service shows (``loadBalancer: {}``)."""
    spec = _spec(service)
    if spec is None:
        return
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    ports = spec.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (CLUSTER_IP, NODE_PORT, LOAD_BALANCER):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    status = service.get("status")
    if status is None:
        service["status"] = {"loadBalancer": {}}
    elif isinstance(status, dict) and status.get("loadBalancer") is None:
        status["loadBalancer"] = {}


def default_endpoints(endpoints: Obj) -> None:
    """``SetDefaults_EndpointPort``: ports without a protocol are TCP."""
    subsets = endpoints.get("subsets")
    for subset in subsets if isinstance(subsets, list) else []:
        ports = subset.get("ports") if isinstance(subset, dict) else None
        for port in ports if isinstance(ports, list) else []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def default_endpoint_slice(endpoint_slice: Obj) -> None:
    """discovery/v1 ``SetDefaults_EndpointPort``: an unset port name is ``""``, protocol TCP."""
    ports = endpoint_slice.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if not isinstance(port, dict):
            continue
        if port.get("name") is None:
            port["name"] = ""
        if port.get("protocol") is None:
            port["protocol"] = "TCP"
