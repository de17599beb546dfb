"""Validation of Services, Endpoints and EndpointSlices, as upstream's
``pkg/apis/core/validation`` (``ValidateService``, ``ValidateServiceUpdate``,
``ValidateServiceClusterIPsRelatedFields``, ``ValidateEndpoints``) and
``pkg/apis/discovery/validation`` (``ValidateEndpointSlice``).

Pure functions from objects to field errors, with upstream's paths and texts. They see Services
after allocation (:mod:`.allocation`), as upstream's strategy does: cluster IPs, families and
node ports are filled in by then.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.labels import validate_labels
from kubeloop.api.status import FieldError, duplicate, forbidden, go_quote, invalid, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    go_int_or_string,
    index,
    int_at,
    mapping_at,
    objects_at,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.syntax import port_name_errors, port_number_errors
from kubeloop.server.services.defaults import CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT

CLUSTER_IP_NONE = "None"
SERVICE_TYPES = (CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT)
PROTOCOLS = ("SCTP", "TCP", "UDP")
AFFINITIES = ("ClientIP", "None")
IP_FAMILIES = ("IPv4", "IPv6")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
TRAFFIC_POLICIES = ("Cluster", "Local")
MAX_CLIENT_IP_TIMEOUT = 86400
INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_SLICE_ENDPOINTS = 1000
MAX_SLICE_PORTS = 100
MAX_ENDPOINT_ADDRESSES = 100


def _mask_trailing_dash(name: str) -> str:
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """``ValidateServiceName`` (``NameIsDNS1035Label``)."""
    return names.dns1035_label_errors(_mask_trailing_dash(name) if prefix else name)


def is_headless(spec: Mapping[str, Any]) -> bool:
    return spec.get("clusterIP") == CLUSTER_IP_NONE


def family_of(ip: str) -> str:
    return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"


def _valid_ip(ip: str) -> bool:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return False
    return True


def go_service_port_key(protocol: str, port: Any) -> GoLiteral:
    """``%#v`` of the ``core.ServicePort{Protocol, Port}`` key a duplicate port reports."""
    return GoLiteral(f"core.ServicePort{{Name:\"\", Protocol:{go_quote(protocol)}, AppProtocol:(*string)(nil), "
                     f"Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}")


def validate_cluster_ips_related_fields(service: Mapping[str, Any]) -> Errors:
    """``ValidateServiceClusterIPsRelatedFields``: the cluster IP fields against each other."""
    errs: Errors = []
    spec = mapping_at(service, "spec", "", errs)
    if spec.get("type") == EXTERNAL_NAME:
        return errs
    cluster_ip = str_at(spec, "clusterIP", "spec", errs)
    cluster_ips = str_list_at(spec, "clusterIPs", "spec", errs)
    if cluster_ip:
        if not cluster_ips:
            errs.append(required("spec.clusterIPs"))
        elif cluster_ips[0] != cluster_ip:
            errs.append(invalid("spec.clusterIPs", cluster_ips, "first value must match `clusterIP`"))
    elif cluster_ips:
        errs.append(invalid("spec.clusterIPs", cluster_ips, "must be empty when `clusterIP` is not specified"))
    families = str_list_at(spec, "ipFamilies", "spec", errs)
    seen: set[str] = set()
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            errs.append(not_supported(index("spec.ipFamilies", i), family, IP_FAMILIES))
        if family in seen:
            errs.append(duplicate(index("spec.ipFamilies", i), family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad_ips = False
    for i, ip in enumerate(cluster_ips):
        if i == 0 and ip == CLUSTER_IP_NONE:
            if len(cluster_ips) > 1:
                bad_ips = True
                errs.append(invalid("spec.clusterIPs", cluster_ips, "'None' must be the first and only value"))
            continue
        if not _valid_ip(ip):
            bad_ips = True
            errs.append(invalid(index("spec.clusterIPs", i), ip, INVALID_IP))
    if len(cluster_ips) > 2:
        errs.append(invalid("spec.clusterIPs", cluster_ips, "may only hold up to 2 values"))
    if bad_ips:
        return errs
    if len(cluster_ips) > 1 and len({family_of(ip) for ip in cluster_ips}) != len(cluster_ips):
        errs.append(invalid("spec.clusterIPs", cluster_ips, "may specify no more than one IP for each IP family"))
    if not is_headless(spec):
        for i, (ip, family) in enumerate(zip(cluster_ips, families, strict=False)):
            if family in IP_FAMILIES and family_of(ip) != family:
                errs.append(invalid(index("spec.clusterIPs", i), ip,
                                    f"expected an {family} value as indicated by `ipFamilies[{i}]`"))
    return errs


def _validate_port(port: Mapping[str, Any], path: str, require_name: bool, seen_names: set[str],
                   errs: Errors) -> None:
    name = str_at(port, "name", path, errs)
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs.extend(invalid(f"{path}.name", name, m) for m in names.dns1123_label_errors(name))
        if name in seen_names:
            errs.append(duplicate(f"{path}.name", name))
        seen_names.add(name)
    number = int_at(port, "port", path, errs)
    errs.extend(invalid(f"{path}.port", number or 0, m) for m in port_number_errors(number or 0))
    protocol = str_at(port, "protocol", path, errs)
    if not protocol:
        errs.append(required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, int) and not isinstance(target, bool):
        errs.extend(invalid(f"{path}.targetPort", target, m) for m in port_number_errors(target))
    elif isinstance(target, str):
        errs.extend(invalid(f"{path}.targetPort", target, m) for m in port_name_errors(target))
    else:
        errs.append(invalid(f"{path}.targetPort", go_int_or_string(target), "must be between 1 and 65535, inclusive"))


def validate_service(service: Mapping[str, Any]) -> Errors:
    """``ValidateService`` (without the generic metadata pass, which the admission package runs)."""
    errs = validate_object_meta(service, True, name_is_dns1035_label)
    spec = mapping_at(service, "spec", "", errs)
    kind = str_at(spec, "type", "spec", errs)
    ports = objects_at(spec, "ports", "spec", errs)
    cluster_ips = str_list_at(spec, "clusterIPs", "spec", errs)
    headless = is_headless(spec)
    if not ports and not headless and kind != EXTERNAL_NAME:
        errs.append(required("spec.ports"))
    if kind in (LOAD_BALANCER, NODE_PORT) and cluster_ips and cluster_ips[0] == CLUSTER_IP_NONE:
        errs.append(invalid("spec.clusterIPs[0]", CLUSTER_IP_NONE, f"may not be set to 'None' for {kind} services"))
    if kind == EXTERNAL_NAME:
        if cluster_ips:
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if spec.get("ipFamilies"):
            errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = str_at(spec, "externalName", "spec", errs).removesuffix(".")
        if cname:
            errs.extend(invalid("spec.externalName", cname, m) for m in names.dns1123_subdomain_errors(cname))
        else:
            errs.append(required("spec.externalName"))
    seen_names: set[str] = set()
    for path, port in ports:
        _validate_port(port, path, len(ports) > 1, seen_names, errs)
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        errs.extend(validate_labels(selector, "spec.selector"))
    affinity = spec.get("sessionAffinity")
    if affinity not in AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, AFFINITIES) if affinity
                    else required("spec.sessionAffinity"))
    elif affinity == "ClientIP":
        timeout = mapping_at(mapping_at(spec, "sessionAffinityConfig", "spec", errs), "clientIP",
                             "spec.sessionAffinityConfig", errs).get("timeoutSeconds")
        if not isinstance(timeout, int) or not 0 < timeout <= MAX_CLIENT_IP_TIMEOUT:
            errs.append(invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout,
                                f"must be greater than 0 and less than {MAX_CLIENT_IP_TIMEOUT}"))
    elif spec.get("sessionAffinityConfig") is not None:
        errs.append(invalid("spec.sessionAffinityConfig", GoLiteral("{}"),
                            "must not be set when session affinity is None"))
    if kind not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, SERVICE_TYPES) if kind else required("spec.type"))
    if kind == CLUSTER_IP:
        for path, port in ports:
            if port.get("nodePort"):
                errs.append(forbidden(f"{path}.nodePort", "may not be used when `type` is 'ClusterIP'"))
    seen_node_ports: set[tuple[str, int]] = set()
    seen_ports: set[tuple[str, Any]] = set()
    for path, port in ports:
        protocol = str(port.get("protocol") or "")
        node_port = port.get("nodePort")
        if isinstance(node_port, int) and node_port:
            if (protocol, node_port) in seen_node_ports:
                errs.append(duplicate(f"{path}.nodePort", node_port))
            seen_node_ports.add((protocol, node_port))
        key = (protocol, port.get("port"))
        if key in seen_ports:
            errs.append(duplicate(path, go_service_port_key(protocol, port.get("port"))))
        seen_ports.add(key)
    _validate_traffic_policies(spec, kind, errs)
    errs.extend(validate_cluster_ips_related_fields(service))
    return errs


def _validate_traffic_policies(spec: Mapping[str, Any], kind: str, errs: Errors) -> None:
    external = spec.get("externalTrafficPolicy")
    accessible = kind in (NODE_PORT, LOAD_BALANCER) or (kind == CLUSTER_IP and bool(spec.get("externalIPs")))
    if not accessible:
        if external:
            errs.append(invalid("spec.externalTrafficPolicy", external,
                                "may only be set for externally-accessible services"))
    elif not external:
        errs.append(required("spec.externalTrafficPolicy"))
    elif external not in TRAFFIC_POLICIES:
        errs.append(not_supported("spec.externalTrafficPolicy", external, TRAFFIC_POLICIES))
    internal = spec.get("internalTrafficPolicy")
    if kind != EXTERNAL_NAME:
        if internal is None:
            errs.append(required("spec.internalTrafficPolicy"))
        elif internal not in TRAFFIC_POLICIES:
            errs.append(not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))


def validate_service_create(service: Mapping[str, Any]) -> Errors:
    return validate_service(service)


def validate_service_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateServiceUpdate``: the primary (and secondary) cluster IP never change, except
    to or from ExternalName; then the whole Service is validated again."""
    errs = validate_object_meta_update(new, old)
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    if EXTERNAL_NAME not in (new_spec.get("type"), old_spec.get("type")):
        new_ips = str_list_at(new_spec, "clusterIPs", "spec", [])
        old_ips = str_list_at(old_spec, "clusterIPs", "spec", [])
        if old_ips:
            if not new_ips:
                errs.append(required("spec.clusterIPs[0]", "primary clusterIP can not be unset"))
            elif new_ips[0] != old_ips[0]:
                errs.append(invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
        if len(old_ips) > 1 and len(new_ips) > 1 and new_ips[1] != old_ips[1]:
            errs.append(invalid("spec.clusterIPs[1]", new_ips, "may not change once set"))
        new_families = str_list_at(new_spec, "ipFamilies", "spec", [])
        old_families = str_list_at(old_spec, "ipFamilies", "spec", [])
        if old_families and new_families and new_families[0] != old_families[0]:
            errs.append(invalid("spec.ipFamilies[0]", new_families[0], "may not change once set"))
    errs.extend(validate_service(new))
    return errs


def validate_service_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateServiceStatusUpdate``: metadata, and the load balancer ingress IPs."""
    errs = validate_object_meta_update(new, old)
    ingress = objects_at(mapping_at(mapping_at(new, "status", "", errs), "loadBalancer", "status", errs),
                         "ingress", "status.loadBalancer", errs)
    for path, entry in ingress:
        ip = entry.get("ip")
        if isinstance(ip, str) and ip and not _valid_ip(ip):
            errs.append(invalid(f"{path}.ip", ip, INVALID_IP))
    return errs


# ------------------------------------------------------------------------------------ endpoints


def _validate_endpoint_port(port: Mapping[str, Any], path: str, require_name: bool, errs: Errors) -> None:
    name = str_at(port, "name", path, errs)
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs.extend(invalid(f"{path}.name", name, m) for m in names.dns1123_label_errors(name))
    number = int_at(port, "port", path, errs)
    errs.extend(invalid(f"{path}.port", number or 0, m) for m in port_number_errors(number or 0))
    protocol = str_at(port, "protocol", path, errs)
    if not protocol:
        errs.append(required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))


def validate_endpoints_create(endpoints: Mapping[str, Any]) -> Errors:
    """``ValidateEndpoints``: addresses are IPs, ports are valid and named when several."""
    errs = validate_object_meta(endpoints, True, name_is_dns_subdomain)
    for subset_path, subset in objects_at(endpoints, "subsets", "", errs):
        addresses = objects_at(subset, "addresses", subset_path, errs)
        not_ready = objects_at(subset, "notReadyAddresses", subset_path, errs)
        if not addresses and not not_ready:
            errs.append(required(subset_path, "must specify `addresses` or `notReadyAddresses`"))
        for path, address in addresses + not_ready:
            ip = str_at(address, "ip", path, errs)
            if not _valid_ip(ip):
                errs.append(invalid(f"{path}.ip", ip, INVALID_IP))
        ports = objects_at(subset, "ports", subset_path, errs)
        for path, port in ports:
            _validate_endpoint_port(port, path, len(ports) > 1, errs)
    return errs


def validate_endpoints_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_endpoints_create(new))
    return errs


def validate_endpoint_slice_create(endpoint_slice: Mapping[str, Any]) -> Errors:
    """``ValidateEndpointSlice``: address type, endpoint addresses and conditions, ports."""
    errs = validate_object_meta(endpoint_slice, True, name_is_dns_subdomain)
    address_type = str_at(endpoint_slice, "addressType", "", errs)
    if not address_type:
        errs.append(required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = objects_at(endpoint_slice, "endpoints", "", errs)
    if len(endpoints) > MAX_SLICE_ENDPOINTS:
        errs.append(FieldError("FieldValueTooMany", "endpoints", len(endpoints),
                               f"must have at most {MAX_SLICE_ENDPOINTS} items"))
    for path, endpoint in endpoints:
        addresses = str_list_at(endpoint, "addresses", path, errs)
        if not addresses:
            errs.append(required(f"{path}.addresses", "must contain at least 1 address"))
        elif len(addresses) > MAX_ENDPOINT_ADDRESSES:
            errs.append(FieldError("FieldValueTooMany", f"{path}.addresses", len(addresses),
                                   f"must have at most {MAX_ENDPOINT_ADDRESSES} items"))
        for i, address in enumerate(addresses[:1]):
            errs.extend(_address_errors(address_type, address, index(f"{path}.addresses", i)))
    ports = objects_at(endpoint_slice, "ports", "", errs)
    if len(ports) > MAX_SLICE_PORTS:
        errs.append(FieldError("FieldValueTooMany", "ports", len(ports), f"must have at most {MAX_SLICE_PORTS} items"))
    seen: set[str] = set()
    for path, port in ports:
        name = str_at(port, "name", path, errs)
        if name:
            errs.extend(invalid(f"{path}.name", name, m) for m in names.dns1123_label_errors(name))
        if name in seen:
            errs.append(duplicate(f"{path}.name", name))
        seen.add(name)
        protocol = port.get("protocol")
        if protocol not in PROTOCOLS:
            errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS) if protocol
                        else required(f"{path}.protocol"))
        number = port.get("port")
        if number is not None:
            errs.extend(invalid(f"{path}.port", number, m) for m in port_number_errors(int(number)))
    return errs


def _address_errors(address_type: str, address: str, path: str) -> Errors:
    if address_type == "IPv4":
        ok = _valid_ip(address) and family_of(address) == "IPv4"
        return [] if ok else [invalid(path, address, "must be a valid IPv4 address")]
    if address_type == "IPv6":
        ok = _valid_ip(address) and family_of(address) == "IPv6"
        return [] if ok else [invalid(path, address, "must be a valid IPv6 address")]
    if address_type == "FQDN":
        return [invalid(path, address, m) for m in names.dns1123_subdomain_errors(address)]
    return []


def validate_endpoint_slice_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """The address type is immutable."""
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_endpoint_slice_create(new))
    if new.get("addressType") != old.get("addressType"):
        errs.append(invalid("addressType", new.get("addressType"), FIELD_IMMUTABLE))
    return errs

