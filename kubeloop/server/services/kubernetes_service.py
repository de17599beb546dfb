"""The ``default/kubernetes`` Service, Endpoints and EndpointSlice, as kube-apiserver's
``pkg/controlplane/controller/kubernetesservice`` and its endpoint reconciler keep them.

:func:`ensure_kubernetes_service` runs when the server starts, once its port is known: it
creates what is missing and repairs what differs (the port changes when the server is started
on a free port), and leaves everything else alone. The Service has the first address of the
service CIDR and port 443 named ``https`` targeting the server's port; it has no selector, so
its Endpoints and EndpointSlice, which name the server's own address, are written here rather
than by the endpoint controllers. The Endpoints carry ``endpointslice.kubernetes.io/skip-mirror``
and the EndpointSlice only ``kubernetes.io/service-name``, as upstream's reconciler writes them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.server.objects import create_object, update_object
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.services.ipallocator import IPRange
from kubeloop.server.state import ServerState, copy_object

NAME = "kubernetes"
NAMESPACE = "default"
SERVICE_PORT = 443
PORT_NAME = "https"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"

Obj = dict[str, Any]


def advertise_address(host: str) -> str:
    """The address the endpoints name: the bind address, or loopback when it is not a usable IP."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "127.0.0.1"
    return "127.0.0.1" if address.is_unspecified else str(address)


def service_body(port: int) -> Obj:
    ip = IPRange().nth(0)
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "sessionAffinity": "None",
                 "ports": [{"name": PORT_NAME, "port": SERVICE_PORT, "protocol": "TCP", "targetPort": port}]},
    }


def endpoints_body(address: str, port: int) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR_LABEL: "true"}},
        "subsets": [{"addresses": [{"ip": address}],
                     "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]}],
    }


def endpoint_slice_body(address: str, port: int) -> Obj:
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME_LABEL: NAME}},
        "addressType": "IPv6" if ipaddress.ip_address(address).version == 6 else "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
    }


def _service_ports_right(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    spec = current.get("spec")
    return isinstance(spec, Mapping) and spec.get("ports") == wanted["spec"]["ports"]


def _endpoints_right(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return bool(current.get("subsets") == wanted["subsets"])


def _slice_right(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(current.get(key) == wanted[key] for key in ("addressType", "endpoints", "ports"))


def _repaired_service(current: Obj, wanted: Obj) -> Obj:
    repaired: Obj = copy_object(current)
    repaired["spec"]["ports"] = wanted["spec"]["ports"]
    return repaired


def _repaired(current: Obj, wanted: Obj, keys: tuple[str, ...]) -> Obj:
    repaired: Obj = copy_object(current)
    for key in keys:
        repaired[key] = wanted[key]
    return repaired


def _ensure(state: ServerState, info: ResourceInfo | None, wanted: Obj,
            right: Callable[[Obj, Obj], bool], repair: Callable[[Obj, Obj], Obj]) -> None:
    if info is None:
        return
    current = state.storage.get(info.resource_type, NAMESPACE, NAME)
    if current is None:
        create_object(state, info, copy_object(wanted), dry_run=False)
    elif not right(current, wanted):
        update_object(state, info, repair(current, wanted), current, status=False, dry_run=False)


def ensure_kubernetes_service(state: ServerState, host: str, port: int) -> None:
    """Create or repair ``default/kubernetes`` and its endpoints for a server at ``host:port``."""
    address = advertise_address(host)
    registry = state.registry
    _ensure(state, registry.lookup("", "v1", "services"), service_body(port), _service_ports_right,
            _repaired_service)
    _ensure(state, registry.lookup("", "v1", "endpoints"), endpoints_body(address, port), _endpoints_right,
            lambda current, wanted: _repaired(current, wanted, ("subsets",)))
    _ensure(state, registry.lookup("discovery.k8s.io", "v1", "endpointslices"), endpoint_slice_body(address, port),
            _slice_right, lambda current, wanted: _repaired(current, wanted, ("addressType", "endpoints", "ports")))
