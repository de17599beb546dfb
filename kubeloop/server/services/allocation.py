"""Cluster IP and node port allocation of Services, as upstream's service REST storage
(``pkg/registry/core/service/storage``: ``beginCreate`` / ``beginUpdate``, ``alloc.go``).

Pure: :func:`allocate_on_create` and :func:`allocate_on_update` take a (defaulted) Service and
what is already in use (:class:`InUse`), fill in ``ipFamilyPolicy``, ``ipFamilies``,
``clusterIP(s)``, node ports and the health-check node port, and raise a 422 ``Invalid``
with upstream's texts when a requested value cannot be had. The cluster is single-stack IPv4
(service CIDR :data:`~.ipallocator.DEFAULT_SERVICE_CIDR`), so IPv6 and dual-stack requests
are refused as upstream refuses them on such a cluster.

Releasing needs no code: what is in use is derived from the stored Services, so an address or
port is free again as soon as the Service holding it is deleted or changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.api.status import ApiError, FieldError, internal_error, invalid, invalid_error
from kubeloop.server.services.defaults import EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT
from kubeloop.server.services.ipallocator import AllocationError, IPRange
from kubeloop.server.services.portallocator import PortRange
from kubeloop.server.services.validation import CLUSTER_IP_NONE, family_of, validate_cluster_ips_related_fields

Obj = dict[str, Any]
CLUSTER_FAMILY = "IPv4"
SINGLE_STACK = "SingleStack"
REQUIRE_DUAL_STACK = "RequireDualStack"


@dataclass(frozen=True)
class InUse:
    """Cluster IPs and node ports held by stored Services."""

    ips: frozenset[str] = frozenset()
    node_ports: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Ranges:
    """The cluster's service CIDR and node-port range."""

    ips: IPRange = field(default_factory=IPRange)
    ports: PortRange = field(default_factory=PortRange)


def _spec(service: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = service.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _ports(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    ports = spec.get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _node_port(port: Mapping[str, Any]) -> int:
    value = port.get("nodePort")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def service_node_ports(service: Mapping[str, Any]) -> set[int]:
    """Every node port a Service holds (its ports' and its health-check node port)."""
    spec = _spec(service)
    held = {_node_port(p) for p in _ports(spec)}
    health = spec.get("healthCheckNodePort")
    if isinstance(health, int) and not isinstance(health, bool):
        held.add(health)
    held.discard(0)
    return held


def in_use(services: Iterable[Mapping[str, Any]]) -> InUse:
    """What the given (stored) Services hold."""
    ips: set[str] = set()
    ports: set[int] = set()
    for service in services:
        spec = _spec(service)
        cluster_ips = spec.get("clusterIPs")
        for ip in cluster_ips if isinstance(cluster_ips, list) else [spec.get("clusterIP")]:
            if isinstance(ip, str) and ip and ip != CLUSTER_IP_NONE:
                ips.add(ip)
        ports |= service_node_ports(service)
    return InUse(frozenset(ips), frozenset(ports))


def _name(service: Mapping[str, Any]) -> str:
    meta = service.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""


def _invalid(service: Mapping[str, Any], errors: list[FieldError]) -> ApiError:
    return invalid_error("Service", "", _name(service), errors)


def needs_cluster_ip(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") != EXTERNAL_NAME


def needs_node_port(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") in (NODE_PORT, LOAD_BALANCER)


def should_allocate_node_ports(spec: Mapping[str, Any]) -> bool:
    if spec.get("type") == NODE_PORT:
        return True
    return spec.get("type") == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is not False


def needs_health_check(spec: Mapping[str, Any]) -> bool:
    """``NeedsHealthCheck``: a LoadBalancer with ``externalTrafficPolicy: Local``."""
    return spec.get("type") == LOAD_BALANCER and spec.get("externalTrafficPolicy") == "Local"


def _str_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


# ------------------------------------------------------------------------------ ip families


def init_ip_family_fields(service: Obj, old: Mapping[str, Any] | None) -> None:
    """``initIPFamilyFields`` on a single-stack IPv4 cluster: default the family policy and
    families, refusing what this cluster cannot give."""
    spec = service["spec"]
    if spec.get("type") == EXTERNAL_NAME:
        return
    selectorless_headless = spec.get("clusterIP") == CLUSTER_IP_NONE and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        old_policy = _spec(old).get("ipFamilyPolicy") if old is not None else None
        if old_policy is not None:
            spec["ipFamilyPolicy"] = old_policy
        else:
            spec["ipFamilyPolicy"] = REQUIRE_DUAL_STACK if selectorless_headless else SINGLE_STACK
    errors = validate_cluster_ips_related_fields(service)
    if errors:
        raise _invalid(service, errors)
    policy = spec["ipFamilyPolicy"]
    cluster_ips = _str_list(spec.get("clusterIPs"))
    families = _str_list(spec.get("ipFamilies"))
    if old is not None:
        old_spec = _spec(old)
        if policy == SINGLE_STACK:
            if cluster_ips == _str_list(old_spec.get("clusterIPs")) and len(cluster_ips) > 1:
                cluster_ips = spec["clusterIPs"] = cluster_ips[:1]
            if families == _str_list(old_spec.get("ipFamilies")) and len(families) > 1:
                families = spec["ipFamilies"] = families[:1]
        else:
            if len(cluster_ips) < len(_str_list(old_spec.get("clusterIPs"))):
                errors.append(invalid("spec.ipFamilyPolicy", policy,
                                      "must be 'SingleStack' to release the secondary cluster IP"))
            if len(families) < len(_str_list(old_spec.get("ipFamilies"))):
                errors.append(invalid("spec.ipFamilyPolicy", policy,
                                      "must be 'SingleStack' to release the secondary IP family"))
    if policy == SINGLE_STACK:
        if len(cluster_ips) == 2:
            errors.append(invalid("spec.ipFamilyPolicy", policy,
                                  "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are "
                                  "specified"))
        if len(families) == 2:
            errors.append(invalid("spec.ipFamilyPolicy", policy,
                                  "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are "
                                  "specified"))
    for i, ip in enumerate(cluster_ips):
        if ip == CLUSTER_IP_NONE:
            break
        if i >= len(families):
            family = family_of(ip)
            if family != CLUSTER_FAMILY:
                errors.append(invalid(f"spec.clusterIPs[{i}]", cluster_ips,
                                      f"{family} is not configured on this cluster"))
            else:
                families.append(family)
    if errors:
        raise _invalid(service, errors)
    if selectorless_headless:
        if not families:
            families = [CLUSTER_FAMILY]
        if len(families) < 2 and policy != SINGLE_STACK:
            families.append("IPv6" if families[0] == "IPv4" else "IPv4")
        spec["ipFamilies"] = families
        return
    if policy == REQUIRE_DUAL_STACK:
        errors.append(invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
    for i, family in enumerate(families):
        if family != CLUSTER_FAMILY:
            errors.append(invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster"))
    if errors:
        raise _invalid(service, errors)
    spec["ipFamilies"] = families or [CLUSTER_FAMILY]


# ------------------------------------------------------------------------------ cluster IPs


def allocate_cluster_ips(service: Obj, used: InUse, ranges: Ranges) -> None:
    """``allocClusterIPs``: one address per family, the requested one or a free one."""
    spec = service["spec"]
    if spec.get("type") == EXTERNAL_NAME:
        return
    cluster_ips = _str_list(spec.get("clusterIPs"))
    if cluster_ips and cluster_ips[0] == CLUSTER_IP_NONE:
        return
    families = _str_list(spec.get("ipFamilies"))
    while len(cluster_ips) < len(families):
        cluster_ips.append("")
    for i, requested in enumerate(cluster_ips[:len(families)]):
        if requested:
            try:
                ranges.ips.check(requested, used.ips)
            except AllocationError as error:
                raise _invalid(service, [invalid("spec.clusterIPs", cluster_ips,
                                                 f"failed to allocate IP {requested}: {error}")]) from None
        else:
            try:
                cluster_ips[i] = ranges.ips.allocate_next(used.ips)
            except AllocationError as error:
                raise internal_error(f"failed to allocate a serviceIP: {error}") from None
    spec["clusterIPs"] = cluster_ips
    if cluster_ips:
        spec["clusterIP"] = cluster_ips[0]


# ------------------------------------------------------------------------------- node ports


def _port_error(service: Obj, i: int, value: int, error: AllocationError) -> ApiError:
    return _invalid(service, [invalid(f"spec.ports[{i}].nodePort", value, str(error))])


def _allocate_next_port(taken: set[int], ranges: Ranges) -> int:
    try:
        port = ranges.ports.allocate_next(taken)
    except AllocationError as error:
        raise internal_error(f"failed to allocate a nodePort: {error}") from None
    taken.add(port)
    return port


def init_node_ports(service: Obj, used: InUse, ranges: Ranges) -> None:
    """``initNodePorts``: ports sharing a port number (TCP and UDP 53) share one node port."""
    spec = service["spec"]
    ports = _ports(spec)
    taken = set(used.node_ports)
    by_port: dict[Any, int] = {}
    allocate = should_allocate_node_ports(spec)
    for i, port in enumerate(ports):
        requested = _node_port(port)
        if not requested and not allocate:
            continue
        shared = by_port.get(port.get("port"), 0)
        if not shared:
            wanted = next((_node_port(p) for p in ports[i:] if p.get("port") == port.get("port") and _node_port(p)), 0)
            if wanted:
                try:
                    ranges.ports.check(wanted, taken)
                except AllocationError as error:
                    raise _port_error(service, i, wanted, error) from None
                taken.add(wanted)
                port["nodePort"] = by_port[port.get("port")] = wanted
            else:
                port["nodePort"] = by_port[port.get("port")] = _allocate_next_port(taken, ranges)
        elif requested != shared:
            if not requested:
                port["nodePort"] = shared
            else:
                try:
                    ranges.ports.check(requested, taken)
                except AllocationError as error:
                    raise _port_error(service, i, requested, error) from None
                taken.add(requested)
    if needs_health_check(spec):
        _allocate_health_check_port(service, taken, ranges)


def _allocate_health_check_port(service: Obj, taken: set[int], ranges: Ranges) -> None:
    spec = service["spec"]
    requested = spec.get("healthCheckNodePort")
    if isinstance(requested, int) and requested:
        try:
            ranges.ports.check(requested, taken)
        except AllocationError as error:
            raise internal_error(f"failed to allocate requested HealthCheck NodePort {requested}: {error}") from None
        taken.add(requested)
    else:
        spec["healthCheckNodePort"] = _allocate_next_port(taken, ranges)


def update_node_ports(service: Obj, old: Mapping[str, Any], used: InUse, ranges: Ranges) -> None:
    """``updateNodePorts``: ports the old Service held are kept, new requests are checked,
    unset ports are allocated."""
    spec = service["spec"]
    old_ports = service_node_ports(old)
    taken = set(used.node_ports)
    newly: set[int] = set()
    allocate = should_allocate_node_ports(spec)
    for i, port in enumerate(_ports(spec)):
        requested = _node_port(port)
        if not requested and not allocate:
            continue
        if requested:
            if requested not in old_ports and requested not in newly:
                try:
                    ranges.ports.check(requested, taken)
                except AllocationError as error:
                    raise _port_error(service, i, requested, error) from None
                taken.add(requested)
                newly.add(requested)
        else:
            port["nodePort"] = _allocate_next_port(taken, ranges)


def _update_health_check_port(service: Obj, old: Mapping[str, Any], used: InUse, ranges: Ranges) -> None:
    spec = service["spec"]
    old_spec = _spec(old)
    needed, needs = needs_health_check(old_spec), needs_health_check(spec)
    if not needed and needs:
        _allocate_health_check_port(service, set(used.node_ports), ranges)
    elif needed and not needs:
        spec.pop("healthCheckNodePort", None)
    elif needs and spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort"):
        raise _invalid(service, [invalid("spec.healthCheckNodePort", spec.get("healthCheckNodePort"),
                                         "cannot change healthCheckNodePort on loadBalancer service with "
                                         "externalTraffic=Local during update")])


# ---------------------------------------------------------------------------------- create


def normalize_cluster_ips(service: Obj, old: Mapping[str, Any] | None) -> None:
    """``normalizeClusterIPs``: keep ``clusterIP`` and ``clusterIPs`` in step for clients that set only one."""
    spec = service["spec"]
    cluster_ip = spec.get("clusterIP") or ""
    cluster_ips = _str_list(spec.get("clusterIPs"))
    if old is None:
        if cluster_ip and not cluster_ips:
            spec["clusterIPs"] = [cluster_ip]
        return
    old_spec = _spec(old)
    old_ip = old_spec.get("clusterIP") or ""
    old_ips = _str_list(old_spec.get("clusterIPs"))
    if old_ips and not cluster_ips and old_ip == cluster_ip:
        cluster_ips = spec["clusterIPs"] = list(old_ips)
    if old_ip != cluster_ip:
        if old_ip and not cluster_ip:
            spec.pop("clusterIPs", None)
            return
        if cluster_ips == old_ips:
            spec["clusterIPs"] = [cluster_ip]


def allocate_on_create(service: Obj, used: InUse, ranges: Ranges | None = None) -> None:
    """``beginCreate``: families, cluster IPs, node ports of a new (defaulted) Service."""
    ranges = ranges or Ranges()
    if not isinstance(service.get("spec"), dict):
        return
    normalize_cluster_ips(service, None)
    init_ip_family_fields(service, None)
    allocate_cluster_ips(service, used, ranges)
    if needs_node_port(service["spec"]):
        init_node_ports(service, used, ranges)
    elif needs_health_check(service["spec"]):
        _allocate_health_check_port(service, set(used.node_ports), ranges)


# ---------------------------------------------------------------------------------- update


def patch_allocated_values(service: Obj, old: Mapping[str, Any]) -> None:
    """``patchAllocatedValues``: values the client left out keep what was allocated before
    (so a replace or apply without ``clusterIP`` or ``nodePort`` is no change)."""
    spec = service["spec"]
    old_spec = _spec(old)
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_port(old_spec) and needs_node_port(spec):
        old_ports = _ports(old_spec)
        new_ports = _ports(spec)
        used = {_node_port(p) for p in old_ports} & {_node_port(p) for p in new_ports}
        by_name = {str(p.get("name") or ""): _node_port(p) for p in old_ports}
        for port in new_ports:
            if not _node_port(port):
                previous = by_name.get(str(port.get("name") or ""), 0)
                if previous and previous not in used:
                    port["nodePort"] = previous
    if (needs_health_check(old_spec) and needs_health_check(spec) and not spec.get("healthCheckNodePort")
            and old_spec.get("healthCheckNodePort")):
        spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def drop_type_dependent_fields(service: Obj, old: Mapping[str, Any]) -> None:
    """``dropTypeDependentFields``: on a type change, clear what the old type had allocated
    and the client left unchanged."""
    spec = service["spec"]
    old_spec = _spec(old)
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
        if (spec.get("clusterIP") or "") == (old_spec.get("clusterIP") or "") and \
                _str_list(spec.get("clusterIPs")) == _str_list(old_spec.get("clusterIPs")):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if _str_list(spec.get("ipFamilies")) == _str_list(old_spec.get("ipFamilies")):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    same_node_ports = [_node_port(p) for p in _ports(spec)] == [_node_port(p) for p in _ports(old_spec)]
    if needs_node_port(old_spec) and not needs_node_port(spec) and same_node_ports:
        for port in _ports(spec):
            port.pop("nodePort", None)
    if needs_health_check(old_spec) and not needs_health_check(spec) and \
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == LOAD_BALANCER and spec.get("type") != LOAD_BALANCER and \
            spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
        spec.pop("allocateLoadBalancerNodePorts", None)
    was_external = old_spec.get("type") in (NODE_PORT, LOAD_BALANCER) or bool(old_spec.get("externalIPs"))
    is_external = spec.get("type") in (NODE_PORT, LOAD_BALANCER) or bool(spec.get("externalIPs"))
    if was_external and not is_external and spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != LOAD_BALANCER:
        status = service.get("status")
        if isinstance(status, dict):
            status["loadBalancer"] = {}


def allocate_on_update(service: Obj, old: Mapping[str, Any], used: InUse, ranges: Ranges | None = None) -> None:
    """``beginUpdate`` and the allocation half of ``PrepareForUpdate``."""
    ranges = ranges or Ranges()
    if not isinstance(service.get("spec"), dict):
        return
    spec = service["spec"]
    old_spec = _spec(old)
    patch_allocated_values(service, old)
    normalize_cluster_ips(service, old)
    drop_type_dependent_fields(service, old)
    init_ip_family_fields(service, old)
    if old_spec.get("type") == EXTERNAL_NAME and spec.get("type") != EXTERNAL_NAME:
        allocate_cluster_ips(service, used, ranges)
    if needs_node_port(spec):
        update_node_ports(service, old, used, ranges)
    _update_health_check_port(service, old, used, ranges)
