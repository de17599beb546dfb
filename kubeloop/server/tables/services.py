"""Rows of the service and networking kinds: Services, Endpoints, EndpointSlices, Ingresses,
IngressClasses, NetworkPolicies, ServiceCIDRs and IPAddresses.

As kube-apiserver 1.33's printers (``pkg/printers/internalversion/printers.go``: ``printService``,
``printEndpoints``, ``printEndpointSlice``, ``printIngress``, ``printIngressClass``,
``printNetworkPolicy``, ``printServiceCIDR``, ``printIPAddress``). The server renders tables
wide, so load-balancer addresses are never clipped. Lists of endpoints, slices' ports and
ingress hosts show three entries and then `` + N more...``. The IPAddress printer declares two
columns and fills three cells (the age has no column upstream; kubectl prints the first two).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.api.labels import format_label_selector
from kubeloop.server.tables.ages import age
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    format_labels,
    integer,
    items,
    mapping,
    name_of,
    or_none,
    text,
)

MORE_LIMIT = 3
"""How many endpoints, ports or hosts a cell lists before `` + N more...``."""


def _with_more(listed: list[str], more: bool, count: int, empty: str) -> str:
    joined = ",".join(listed)
    if more:
        return f"{joined} + {count - MORE_LIMIT} more..."
    return joined or empty


def _load_balancer(ingress: Any) -> str:
    """IPs (else hostnames) of load-balancer ingress points, sorted and without duplicates."""
    points = {text(point.get("ip")) or text(point.get("hostname")) for point in items(ingress)}
    return ",".join(sorted(point for point in points if point))


def service_external_ip(service: Obj) -> str:
    """EXTERNAL-IP by service type: external IPs (``<none>``), the load balancer's addresses
    and external IPs (``<pending>`` without any), the external name; ``<unknown>`` otherwise."""
    service_type = text(dig(service, "spec", "type"))
    external = [text(ip) for ip in dig(service, "spec", "externalIPs") or () if isinstance(ip, str)]
    if service_type in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if service_type == "LoadBalancer":
        balancer = _load_balancer(dig(service, "status", "loadBalancer", "ingress"))
        if external:
            return ",".join([*(balancer.split(",") if balancer else []), *external])
        return balancer or "<pending>"
    if service_type == "ExternalName":
        return text(dig(service, "spec", "externalName"))
    return "<unknown>"


def service_ports(ports: Any) -> str:
    """``port/protocol`` (``port:nodePort/protocol`` with a node port), comma-separated."""
    pieces = []
    for port in items(ports):
        node_port = integer(port.get("nodePort"))
        number = integer(port.get("port"))
        protocol = text(port.get("protocol"))
        pieces.append(f"{number}:{node_port}/{protocol}" if node_port > 0 else f"{number}/{protocol}")
    return ",".join(pieces)


def service_cells(service: Obj, now: datetime) -> list[Any]:
    cluster_ips = [ip for ip in dig(service, "spec", "clusterIPs") or () if isinstance(ip, str)]
    # Objects written with only the singular field still show it (the registry fills both).
    cluster_ip = cluster_ips[0] if cluster_ips else text(dig(service, "spec", "clusterIP")) or "<none>"
    return [
        name_of(service), text(dig(service, "spec", "type")), cluster_ip, service_external_ip(service),
        or_none(service_ports(dig(service, "spec", "ports"))), age(created(service), now),
        format_labels(dig(service, "spec", "selector")),
    ]


def _spec(field: str) -> FieldDoc:
    return FieldDoc("core.v1.ServiceSpec", field)


SERVICE_PRINTER = Printer(
    (
        NAME,
        Column("Type", "string", _spec("type")),
        Column("Cluster-IP", "string", _spec("clusterIP")),
        Column("External-IP", "string", _spec("externalIPs")),
        Column("Port(s)", "string", _spec("ports")),
        AGE,
        Column("Selector", "string", _spec("selector"), priority=1),
    ),
    service_cells,
)


def _host_port(ip: str, port: int) -> str:
    """Go's ``net.JoinHostPort``: IPv6 addresses in brackets."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def format_endpoints(endpoints: Obj) -> str:
    """``ip:port`` of every address and port (bare IPs for subsets without ports), three at most."""
    subsets = items(endpoints.get("subsets"))
    if not subsets:
        return "<none>"
    listed: list[str] = []
    more = False
    count = 0
    for subset in subsets:
        addresses = [text(a.get("ip")) for a in items(subset.get("addresses"))]
        ports = items(subset.get("ports"))
        if not ports:
            count += len(addresses)
            for ip in addresses:
                if len(listed) == MORE_LIMIT:
                    more = True
                    break
                listed.append(ip)
            continue
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(listed) == MORE_LIMIT:
                    more = True
                    break
                listed.append(_host_port(ip, integer(port.get("port"))))
    joined = ",".join(listed)
    return f"{joined} + {count - MORE_LIMIT} more..." if more else joined


ENDPOINTS_PRINTER = Printer(
    (NAME, Column("Endpoints", "string", FieldDoc("core.v1.Endpoints", "subsets")), AGE),
    lambda endpoints, now: [name_of(endpoints), format_endpoints(endpoints), age(created(endpoints), now)],
)


def _limited(values: list[str]) -> str:
    listed = values[:MORE_LIMIT]
    return _with_more(listed, len(values) > MORE_LIMIT, len(values), "<unset>")


def slice_ports(ports: Any) -> str:
    """Port numbers (the name when unnumbered, ``*`` without either); ``<unset>`` when none."""
    values = []
    for port in items(ports):
        number = port.get("port")
        name = port.get("name")
        values.append(str(integer(number)) if number is not None else text(name) if name is not None else "*")
    return _limited(values)


def slice_endpoints(endpoints: Any) -> str:
    return _limited([text(address) for endpoint in items(endpoints) for address in endpoint.get("addresses") or ()])


def _slice_doc(field: str) -> FieldDoc:
    return FieldDoc("discovery.v1.EndpointSlice", field)


ENDPOINT_SLICE_PRINTER = Printer(
    (
        NAME,
        Column("AddressType", "string", _slice_doc("addressType")),
        Column("Ports", "string", _slice_doc("ports")),
        Column("Endpoints", "string", _slice_doc("endpoints")),
        AGE,
    ),
    lambda slice_, now: [name_of(slice_), text(slice_.get("addressType")), slice_ports(slice_.get("ports")),
                         slice_endpoints(slice_.get("endpoints")), age(created(slice_), now)],
)


def ingress_hosts(rules: Any) -> str:
    """The first three hosts (rules without a host are skipped), ``*`` when none; the count of
    further rules after `` + ``."""
    all_rules = items(rules)
    listed: list[str] = []
    more = False
    for rule in all_rules:
        if len(listed) == MORE_LIMIT:
            more = True
        host = text(rule.get("host"))
        if not more and host:
            listed.append(host)
    if not listed:
        return "*"
    joined = ",".join(listed)
    return f"{joined} + {len(all_rules) - MORE_LIMIT} more..." if more else joined


def ingress_cells(ingress: Obj, now: datetime) -> list[Any]:
    class_name = dig(ingress, "spec", "ingressClassName")
    ports = "80, 443" if items(dig(ingress, "spec", "tls")) else "80"
    return [
        name_of(ingress), class_name if isinstance(class_name, str) else "<none>",
        ingress_hosts(dig(ingress, "spec", "rules")), _load_balancer(dig(ingress, "status", "loadBalancer", "ingress")),
        ports, age(created(ingress), now),
    ]


INGRESS_PRINTER = Printer(
    (
        NAME,
        Column("Class", "string",
               "The name of the IngressClass resource that should be used for additional configuration"),
        Column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
        Column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
        Column("Ports", "string", "Ports of TLS configurations that open"),
        AGE,
    ),
    ingress_cells,
)


def ingress_class_parameters(ingress_class: Obj) -> str:
    """``Kind[.apiGroup]/name`` of the parameters reference, ``<none>`` without one."""
    parameters = dig(ingress_class, "spec", "parameters")
    if not isinstance(parameters, dict):
        return "<none>"
    reference = text(parameters.get("kind"))
    if isinstance(parameters.get("apiGroup"), str):
        reference += "." + parameters["apiGroup"]
    return f"{reference}/{text(parameters.get('name'))}"


INGRESS_CLASS_PRINTER = Printer(
    (
        NAME,
        Column("Controller", "string", "Controller that is responsible for handling this class"),
        Column("Parameters", "string", "A reference to a resource with additional parameters"),
        AGE,
    ),
    lambda ingress_class, now: [name_of(ingress_class), text(dig(ingress_class, "spec", "controller")),
                                ingress_class_parameters(ingress_class), age(created(ingress_class), now)],
)

NETWORK_POLICY_PRINTER = Printer(
    (NAME, Column("Pod-Selector", "string", FieldDoc("networking.v1.NetworkPolicySpec", "podSelector")), AGE),
    lambda policy, now: [name_of(policy), format_label_selector(mapping(dig(policy, "spec", "podSelector"))),
                         age(created(policy), now)],
)

SERVICE_CIDR_PRINTER = Printer(
    (NAME, Column("CIDRs", "string", FieldDoc("networking.v1.ServiceCIDRSpec", "cidrs")), AGE),
    lambda cidr, now: [name_of(cidr), ",".join(text(c) for c in dig(cidr, "spec", "cidrs") or ()),
                       age(created(cidr), now)],
)


def ip_address_parent(address: Obj) -> str:
    """``<resource>[.<group>][/<namespace>]/<name>`` of the parent reference, lower case up to the
    name; ``<none>`` without one."""
    parent = dig(address, "spec", "parentRef")
    if not isinstance(parent, dict):
        return "<none>"
    group = text(parent.get("group"))
    resource = text(parent.get("resource"))
    reference = (f"{resource}.{group}" if group else resource).lower()
    namespace = text(parent.get("namespace"))
    if namespace:
        reference += "/" + namespace
    return f"{reference}/{text(parent.get('name'))}"


IP_ADDRESS_PRINTER = Printer(
    (NAME, Column("ParentRef", "string", FieldDoc("networking.v1.IPAddressSpec", "parentRef"))),
    lambda address, now: [name_of(address), ip_address_parent(address), age(created(address), now)],
)
