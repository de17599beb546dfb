"""networking.k8s.io/v1: Ingresses, IngressClasses, NetworkPolicies, IPAddresses, ServiceCIDRs.

Defaults as upstream's ``pkg/apis/networking/v1/defaults.go``: NetworkPolicy ports speak TCP,
a policy without ``policyTypes`` is an ``Ingress`` policy (and an ``Egress`` one when it has
egress rules), IngressClass parameters are cluster-scoped. Validation as
``pkg/apis/networking/validation/validation.go``: an Ingress needs a default backend or rules,
every HTTP path a ``pathType`` and a backend that is either a Service (with a port name or
number) or a resource; an IngressClass's controller is a domain-prefixed path that never
changes; NetworkPolicy peers, ports and policy types; IPAddresses are named by a canonical IP
and keep their parent; ServiceCIDRs hold one or two CIDRs (of two families) that never change.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import forbidden, invalid, not_supported, required, too_long
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_string_list,
    index,
    int_at,
    mapping_at,
    objects_at,
    semantically_equal,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.syntax import port_name_errors, port_number_errors

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
PROTOCOLS = ("TCP", "UDP", "SCTP")
POLICY_TYPES = ("Ingress", "Egress")
PARAMETER_SCOPES = ("Cluster", "Namespace")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
MAX_CONTROLLER_LENGTH = 250
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
_WILDCARD_FMT = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD_RE = re.compile(f"^{_WILDCARD_FMT}$")
_DOMAIN_PATH_RE = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")
_CIDR_MESSAGE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


# ---------------------------------------------------------------------------------- defaults


def default_network_policy(policy: dict[str, Any]) -> None:
    spec = policy.get("spec")
    if spec is None:
        spec = policy["spec"] = {}
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        rules = spec.get(direction)
        for rule in rules if isinstance(rules, list) else []:
            ports = rule.get("ports") if isinstance(rule, dict) else None
            for port in ports if isinstance(ports, list) else []:
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def default_ingress(ingress: dict[str, Any]) -> None:
    """An Ingress always shows ``status.loadBalancer`` (a struct Go writes even when empty)."""
    status = ingress.get("status")
    if status is None:
        ingress["status"] = {"loadBalancer": {}}
    elif isinstance(status, dict) and status.get("loadBalancer") is None:
        status["loadBalancer"] = {}


def default_ingress_class(ingress_class: dict[str, Any]) -> None:
    spec = ingress_class.get("spec")
    params = spec.get("parameters") if isinstance(spec, dict) else None
    if isinstance(params, dict) and params.get("scope") is None:
        params["scope"] = "Cluster"


# --------------------------------------------------------------------------------- ingresses


def wildcard_subdomain_errors(host: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``."""
    errors: list[str] = []
    if len(host) > names.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(names.max_len_error(names.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _WILDCARD_RE.match(host):
        errors.append(names.regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
            "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            _WILDCARD_FMT, "*.example.com"))
    return errors


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _backend_errors(backend: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateIngressBackend``."""
    resource = backend.get("resource")
    service = backend.get("service")
    if resource is not None and service is not None:
        errs.append(invalid(path, "", "cannot set both resource and service backends"))
    elif resource is not None:
        _typed_reference_errors(mapping_at(backend, "resource", path, errs), child(path, "resource"), errs)
    elif service is not None:
        svc = mapping_at(backend, "service", path, errs)
        svc_path = child(path, "service")
        name = str_at(svc, "name", svc_path, errs)
        if not name:
            errs.append(required(child(svc_path, "name")))
        else:
            errs.extend(invalid(child(svc_path, "name"), name, m) for m in names.dns1035_label_errors(name))
        port = mapping_at(svc, "port", svc_path, errs)
        port_path = child(svc_path, "port")
        port_name = str_at(port, "name", port_path, errs)
        number = int_at(port, "number", port_path, errs) or 0
        if port_name and number:
            errs.append(invalid(path, "", "cannot set both port name & port number"))
        elif port_name:
            errs.extend(invalid(child(port_path, "name"), port_name, m) for m in port_name_errors(port_name))
        elif number:
            errs.extend(invalid(child(port_path, "number"), number, m) for m in port_number_errors(number))
        else:
            errs.append(required(path, "port name or number is required"))
    else:
        errs.append(invalid(path, "", "resource or service backend is required"))


def _typed_reference_errors(ref: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateIngressTypedLocalObjectReference``."""
    api_group = ref.get("apiGroup")
    if isinstance(api_group, str):
        errs.extend(invalid(child(path, "apiGroup"), api_group, m) for m in names.dns1123_subdomain_errors(api_group))
    for name in ("kind", "name"):
        value = str_at(ref, name, path, errs)
        if not value:
            errs.append(required(child(path, name), f"{name} is required"))
        else:
            errs.extend(invalid(child(path, name), value, m) for m in name_is_path_segment(value, False))


def _http_path_errors(http_path: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateHTTPIngressPath``."""
    path_type = http_path.get("pathType")
    value = str_at(http_path, "path", path, errs)
    value_path = child(path, "path")
    if path_type is None:
        errs.append(required(child(path, "pathType"), "pathType must be specified"))
        return
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
        errs.extend(invalid(value_path, value, f"must not contain '{seq}'")
                    for seq in _INVALID_PATH_SEQUENCES if seq in value)
        errs.extend(invalid(value_path, value, f"cannot end with '{suffix}'")
                    for suffix in _INVALID_PATH_SUFFIXES if value.endswith(suffix))
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
    else:
        errs.append(not_supported(child(path, "pathType"), path_type, PATH_TYPES))
    _backend_errors(mapping_at(http_path, "backend", path, errs), child(path, "backend"), errs)


def _host_errors(host: str, path: str) -> Errors:
    if not host:
        return []
    if _is_ip(host):
        return [invalid(path, host, "must be a DNS name, not an IP address")]
    messages = wildcard_subdomain_errors(host) if "*" in host else names.dns1123_subdomain_errors(host)
    return [invalid(path, host, m) for m in messages]


def _ingress_spec_errors(ingress: Mapping[str, Any], errs: Errors) -> None:
    spec = mapping_at(ingress, "spec", "", errs)
    rules = objects_at(spec, "rules", "spec", errs)
    if spec.get("defaultBackend") is not None:
        _backend_errors(mapping_at(spec, "defaultBackend", "spec", errs), "spec.defaultBackend", errs)
    elif not rules:
        shown = "[]networking.IngressRule{}" if spec.get("rules") == [] else "[]networking.IngressRule(nil)"
        errs.append(invalid("spec", GoLiteral(shown), "either `defaultBackend` or `rules` must be specified"))
    for rule_path, rule in rules:
        errs.extend(_host_errors(str_at(rule, "host", rule_path, errs), child(rule_path, "host")))
        if rule.get("http") is None:
            continue
        http = mapping_at(rule, "http", rule_path, errs)
        http_path = child(rule_path, "http")
        paths = objects_at(http, "paths", http_path, errs)
        if not paths:
            errs.append(required(child(http_path, "paths")))
        for item_path, item in paths:
            _http_path_errors(item, item_path, errs)
    for tls_path, tls in objects_at(spec, "tls", "spec", errs):
        for position, host in enumerate(str_list_at(tls, "hosts", tls_path, errs)):
            host_path = index(child(tls_path, "hosts"), position)
            messages = wildcard_subdomain_errors(host) if "*" in host else names.dns1123_subdomain_errors(host)
            errs.extend(invalid(host_path, host, m) for m in messages)
        secret = str_at(tls, "secretName", tls_path, errs)
        if secret:
            errs.extend(invalid(child(tls_path, "secretName"), secret, m) for m in name_is_dns_subdomain(secret, False))
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        errs.extend(invalid("spec.ingressClassName", class_name, m) for m in name_is_dns_subdomain(class_name, False))


def validate_ingress_create(ingress: Mapping[str, Any]) -> Errors:
    """``ValidateIngressCreate``: the spec, and a class annotation that agrees with ``ingressClassName``."""
    errs = validate_object_meta(ingress, True, name_is_dns_subdomain)
    _ingress_spec_errors(ingress, errs)
    annotations = mapping_at(mapping_at(ingress, "metadata", "", []), "annotations", "", [])
    class_name = mapping_at(ingress, "spec", "", []).get("ingressClassName")
    annotation = annotations.get(INGRESS_CLASS_ANNOTATION)
    if class_name is not None and annotation is not None and annotation != class_name:
        errs.append(invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                            "must match `ingressClassName` when both are specified"))
    return errs


def validate_ingress_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_object_meta(new, True, name_is_dns_subdomain))
    _ingress_spec_errors(new, errs)
    return errs


def validate_ingress_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """Load-balancer entries hold IPs (``ip``) and hostnames that are not IPs."""
    errs = validate_object_meta_update(new, old)
    load_balancer = mapping_at(mapping_at(new, "status", "", errs), "loadBalancer", "status", errs)
    for item_path, entry in objects_at(load_balancer, "ingress", "status.loadBalancer", errs):
        ip = str_at(entry, "ip", item_path, errs)
        if ip and not _is_ip(ip):
            errs.append(invalid(child(item_path, "ip"), ip, "must be a valid IP address"))
        hostname = str_at(entry, "hostname", item_path, errs)
        if hostname:
            errs.extend(invalid(child(item_path, "hostname"), hostname, m)
                        for m in names.dns1123_subdomain_errors(hostname))
            if _is_ip(hostname):
                errs.append(invalid(child(item_path, "hostname"), hostname, "must be a DNS name, not an IP address"))
    return errs


# ---------------------------------------------------------------------------- ingress classes


def _domain_prefixed_path_errors(value: str, path: str) -> Errors:
    """``IsDomainPrefixedPath``."""
    if not value:
        return [required(path)]
    host, sep, rest = value.partition("/")
    if not sep:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, m) for m in names.dns1123_subdomain_errors(host)]
    if not _DOMAIN_PATH_RE.match(rest):
        errs.append(invalid(path, rest, "must be a valid path"))
    return errs


def _parameters_errors(params: Mapping[str, Any], path: str, errs: Errors) -> None:
    _typed_reference_errors(params, path, errs)
    scope = params.get("scope")
    if scope is None:
        errs.append(required(child(path, "scope")))
        return
    if scope not in PARAMETER_SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, PARAMETER_SCOPES))
        return
    namespace = params.get("namespace")
    if scope == "Namespace":
        if namespace is None:
            errs.append(required(child(path, "namespace"), "`parameters.scope` is set to 'Namespace'"))
        else:
            errs.extend(invalid(child(path, "namespace"), namespace, m)
                        for m in name_is_dns_label(str(namespace), False))
    if scope == "Cluster" and namespace is not None:
        errs.append(forbidden(child(path, "namespace"), "`parameters.scope` is set to 'Cluster'"))


def validate_ingress_class_create(ingress_class: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(ingress_class, False, name_is_dns_subdomain)
    spec = mapping_at(ingress_class, "spec", "", errs)
    controller = str_at(spec, "controller", "spec", errs)
    if len(controller) > MAX_CONTROLLER_LENGTH:
        errs.append(too_long("spec.controller", MAX_CONTROLLER_LENGTH))
    errs.extend(_domain_prefixed_path_errors(controller, "spec.controller"))
    if spec.get("parameters") is not None:
        _parameters_errors(mapping_at(spec, "parameters", "spec", errs), "spec.parameters", errs)
    return errs


def validate_ingress_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    new_controller = mapping_at(new, "spec", "", []).get("controller") or ""
    if new_controller != (mapping_at(old, "spec", "", []).get("controller") or ""):
        errs.append(invalid("spec.controller", new_controller, FIELD_IMMUTABLE))
    errs.extend(validate_ingress_class_create(new))
    return errs


# --------------------------------------------------------------------------- network policies


def _cidr_errors(text: str, path: str) -> Errors:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return [invalid(path, text, _CIDR_MESSAGE)]
    return []


def _ip_block_errors(block: Mapping[str, Any], path: str, errs: Errors) -> None:
    cidr = str_at(block, "cidr", path, errs)
    if not cidr:
        errs.append(required(child(path, "cidr")))
        return
    cidr_errs = _cidr_errors(cidr, child(path, "cidr"))
    errs.extend(cidr_errs)
    if cidr_errs:
        return
    outer = ipaddress.ip_network(cidr, strict=False)
    for position, excepted in enumerate(str_list_at(block, "except", path, errs)):
        except_path = index(child(path, "except"), position)
        except_errs = _cidr_errors(excepted, except_path)
        errs.extend(except_errs)
        if except_errs:
            continue
        inner = ipaddress.ip_network(excepted, strict=False)
        if inner.version != outer.version or not inner.subnet_of(outer) or inner.prefixlen <= outer.prefixlen:  # type: ignore[arg-type]
            errs.append(invalid(except_path, excepted, "must be a strict subset of `cidr`"))


def _peer_errors(peer: Mapping[str, Any], path: str, errs: Errors) -> None:
    count = 0
    for selector in ("podSelector", "namespaceSelector"):
        if peer.get(selector) is not None:
            count += 1
            errs.extend(validate_label_selector(peer.get(selector), child(path, selector)))
    if peer.get("ipBlock") is not None:
        count += 1
        _ip_block_errors(mapping_at(peer, "ipBlock", path, errs), child(path, "ipBlock"), errs)
    if count == 0:
        errs.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))


def _port_errors(port: Mapping[str, Any], path: str, errs: Errors) -> None:
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(not_supported(child(path, "protocol"), protocol, PROTOCOLS))
    value = port.get("port")
    port_path = child(path, "port")
    if isinstance(value, str):
        errs.extend(invalid(port_path, value, m) for m in port_name_errors(value))
    elif isinstance(value, int) and not isinstance(value, bool):
        errs.extend(invalid(port_path, value, m) for m in port_number_errors(value))
    end = int_at(port, "endPort", path, errs)
    end_path = child(path, "endPort")
    if end is None:
        return
    if isinstance(value, str):
        errs.append(invalid(end_path, end, "may not be specified when `port` is non-numeric"))
    elif value is None:
        errs.append(invalid(end_path, end, "may not be specified when `port` is not specified"))
    elif isinstance(value, int):
        if end < value:
            errs.append(invalid(end_path, value, "must be greater than or equal to `port`"))
        errs.extend(invalid(end_path, end, m) for m in port_number_errors(end))


def _network_policy_spec_errors(policy: Mapping[str, Any], errs: Errors) -> None:
    spec = mapping_at(policy, "spec", "", errs)
    errs.extend(validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for rule_path, rule in objects_at(spec, direction, "spec", errs):
            for port_path, port in objects_at(rule, "ports", rule_path, errs):
                _port_errors(port, port_path, errs)
            for peer_path, peer in objects_at(rule, peers, rule_path, errs):
                _peer_errors(peer, peer_path, errs)
    types = str_list_at(spec, "policyTypes", "spec", errs)
    if len(types) > len(POLICY_TYPES):
        shown = "[]networking.PolicyType{" + ", ".join(f'"{t}"' for t in types) + "}"
        errs.append(invalid("spec.policyTypes", GoLiteral(shown), "may not specify more than two policyTypes"))
        return
    for position, policy_type in enumerate(types):
        if policy_type not in POLICY_TYPES:
            errs.append(not_supported(index("spec.policyTypes", position), policy_type, POLICY_TYPES))


def validate_network_policy_create(policy: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(policy, True, name_is_dns_subdomain)
    _network_policy_spec_errors(policy, errs)
    return errs


def validate_network_policy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_network_policy_create(new))
    return errs


# ------------------------------------------------------------------- IP addresses, service CIDRs


def _ip_name_errors(name: str, prefix: bool) -> list[str]:
    """``ValidateIPAddressName``: ``IsValidIP``'s messages, a canonical IP (``prefix`` is ignored)."""
    del prefix
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    if str(address) != name:
        return [f"must be in canonical form (\"{address}\")"]
    return []


def validate_ip_address_create(address: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(address, False, _ip_name_errors)
    spec = mapping_at(address, "spec", "", errs)
    if spec.get("parentRef") is None:
        errs.append(required("spec.parentRef"))
        return errs
    ref = mapping_at(spec, "parentRef", "spec", errs)
    group = str_at(ref, "group", "spec.parentRef", errs)
    if group:
        errs.extend(invalid("spec.parentRef.group", group, m) for m in names.dns1123_subdomain_errors(group))
    for name in ("resource", "name"):
        if not str_at(ref, name, "spec.parentRef", errs):
            errs.append(required(child("spec.parentRef", name)))
    for name in ("resource", "name", "namespace"):
        value = str_at(ref, name, "spec.parentRef", errs)
        if value:
            errs.extend(invalid(child("spec.parentRef", name), value, m) for m in name_is_path_segment(value, False))
    return errs


def validate_ip_address_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    new_ref = mapping_at(new, "spec", "", []).get("parentRef")
    if not semantically_equal(new_ref, mapping_at(old, "spec", "", []).get("parentRef")):
        errs.append(invalid("spec.parentRef", new_ref, FIELD_IMMUTABLE))
    return errs


def _family(text: str) -> int | None:
    try:
        return ipaddress.ip_network(text, strict=False).version
    except ValueError:
        return None


def _service_cidr_errors(cidr: Mapping[str, Any], errs: Errors) -> None:
    """``ValidateServiceCIDR``: one or two CIDRs, two of different families (checked first)."""
    spec = mapping_at(cidr, "spec", "", errs)
    cidrs = str_list_at(spec, "cidrs", "spec", errs)
    if not cidrs:
        errs.append(required("spec.cidrs", "at least one CIDR required"))
        return
    if len(cidrs) > 2:
        errs.append(invalid("spec.cidrs", GoLiteral(_go_cidr_spec(cidrs)), "may only hold up to 2 values"))
        return
    if len(cidrs) == 2:
        families = {_family(text) for text in cidrs}
        if None in families or len(families) != 2:
            errs.append(invalid("spec.cidrs", GoLiteral(_go_cidr_spec(cidrs)), "may specify no more than one IP for "
                                "each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
            return
    for position, text in enumerate(cidrs):
        errs.extend(_cidr_errors(text, index("spec.cidrs", position)))


def _go_cidr_spec(cidrs: list[str]) -> str:
    return "networking.ServiceCIDRSpec{CIDRs:" + go_string_list(cidrs) + "}"


def validate_service_cidr_create(cidr: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(cidr, False, name_is_dns_subdomain)
    _service_cidr_errors(cidr, errs)
    return errs


def validate_service_cidr_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    new_cidrs = mapping_at(new, "spec", "", []).get("cidrs") or []
    if new_cidrs != (mapping_at(old, "spec", "", []).get("cidrs") or []):
        errs.append(invalid("spec.cidrs", new_cidrs, FIELD_IMMUTABLE))
    return errs
