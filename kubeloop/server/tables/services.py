"""Rows of Services, Endpoints and EndpointSlices, as kube-apiserver's printers
(``pkg/printers/internalversion``: ``printService``, ``printEndpoints``, ``printEndpointSlice``).

Service: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE, wide SELECTOR. Endpoints: NAME ENDPOINTS
AGE (at most three ``ip:port`` then "+ N more..."). EndpointSlice: NAME ADDRESSTYPE PORTS
ENDPOINTS AGE (three of each then "+ N more...", ``<unset>`` when empty).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    integer,
    items,
    mapping,
    name_of,
    text,
)

_MAX_LISTED = 3


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def port_string(ports: Any) -> str:
    """``80/TCP``, or ``80:30080/TCP`` with a node port, comma-separated."""
    pieces = []
    for port in items(ports):
        node_port = integer(port.get("nodePort"))
        number = integer(port.get("port"))
        protocol = text(port.get("protocol"))
        pieces.append(f"{number}:{node_port}/{protocol}" if node_port > 0 else f"{number}/{protocol}")
    return ",".join(pieces)


def external_ip(service: Obj) -> str:
    spec = mapping(service.get("spec"))
    external = _strings(spec.get("externalIPs"))
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = [text(i.get("ip")) or text(i.get("hostname"))
                   for i in items(dig(service, "status", "loadBalancer", "ingress"))]
        found = [i for i in ingress if i] + external
        return ",".join(found) if found else "<pending>"
    if kind == "ExternalName":
        return text(spec.get("externalName"))
    return "<unknown>"


def format_labels(labels: Any) -> str:
    pairs = sorted(mapping(labels).items())
    return ",".join(f"{k}={v}" for k, v in pairs) or "<none>"


def service_cells(service: Obj, now: datetime) -> list[Any]:
    spec = mapping(service.get("spec"))
    cluster_ips = _strings(spec.get("clusterIPs"))
    return [name_of(service), text(spec.get("type")), cluster_ips[0] if cluster_ips else "<none>",
            external_ip(service), port_string(spec.get("ports")) or "<none>", age(created(service), now),
            format_labels(spec.get("selector"))]


SERVICE_PRINTER = Printer(
    (
        NAME,
        Column("Type", "string", "How the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName."),
        Column("Cluster-IP", "string", "The IP address of the Service inside the cluster."),
        Column("External-IP", "string", "Addresses outside the cluster the Service answers on."),
        Column("Port(s)", "string", "The ports the Service exposes."),
        AGE,
        Column("Selector", "string", "The labels of the pods the Service routes to.", priority=1),
    ),
    service_cells,
)


def _more(listed: list[str], count: int) -> str:
    joined = ",".join(listed)
    return f"{joined} + {count - _MAX_LISTED} more..." if count > len(listed) else joined


def format_endpoints(endpoints: Obj) -> str:
    subsets = items(endpoints.get("subsets"))
    if not subsets:
        return "<none>"
    listed: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [text(a.get("ip")) for a in items(subset.get("addresses"))]
        ports = items(subset.get("ports"))
        if not ports:
            count += len(addresses)
            listed.extend(addresses[:max(0, _MAX_LISTED - len(listed))])
            continue
        for port in ports:
            count += len(addresses)
            number = integer(port.get("port"))
            for ip in addresses:
                if len(listed) == _MAX_LISTED:
                    break
                listed.append(f"[{ip}]:{number}" if ":" in ip else f"{ip}:{number}")
    return _more(listed, count)


ENDPOINTS_PRINTER = Printer(
    (NAME, Column("Endpoints", "string", "The addresses and ports of the endpoints."), AGE),
    lambda endpoints, now: [name_of(endpoints), format_endpoints(endpoints), age(created(endpoints), now)],
)


def _listed_or_unset(values: list[str]) -> str:
    shown = _more(values[:_MAX_LISTED], len(values))
    return shown or "<unset>"


def slice_ports(endpoint_slice: Obj) -> str:
    values = []
    for port in items(endpoint_slice.get("ports")):
        number = port.get("port")
        values.append(str(number) if isinstance(number, int) else (text(port.get("name")) if "name" in port else "*"))
    return _listed_or_unset(values)


def slice_endpoints(endpoint_slice: Obj) -> str:
    return _listed_or_unset([a for e in items(endpoint_slice.get("endpoints")) for a in _strings(e.get("addresses"))])


ENDPOINT_SLICE_PRINTER = Printer(
    (
        NAME,
        Column("AddressType", "string", "The type of the addresses: IPv4, IPv6 or FQDN."),
        Column("Ports", "string", "The ports of the endpoints."),
        Column("Endpoints", "string", "The addresses of the endpoints."),
        AGE,
    ),
    lambda es, now: [name_of(es), text(es.get("addressType")), slice_ports(es), slice_endpoints(es),
                     age(created(es), now)],
)
