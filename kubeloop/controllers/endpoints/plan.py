"""The desired Endpoints of a Service, as upstream's ``pkg/controller/endpoint``
(``syncService``, ``addEndpointSubset``) and ``pkg/api/v1/endpoints.RepackSubsets``.

Pure. :func:`desired_subsets` turns the Service's pods into subsets: every pod with an IP that
is not finished (nor terminating, unless ``publishNotReadyAddresses``) gives one address per
Service port it resolves (:func:`~.pods.find_port`), ready or not ready by its ``Ready``
condition; a headless Service without ports lists bare addresses. Subsets are then repacked:
addresses offering the same ports share one subset. :func:`plan_endpoints` compares with the
current object and returns the object to write, or ``None`` when it is already right.

Ordering differs from upstream in one respect: upstream orders subsets and ports by a hash of
their contents, this orders them by their contents (addresses by IP then pod UID, ports by
name, number and protocol). The sets are the same.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.api.meta import annotations_of, labels_of, name_of, namespace_of
from kubeloop.api.pods import is_pod_ready, node_name
from kubeloop.controllers.endpointutil.pods import (
    HEADLESS_LABEL,
    TRIGGER_TIME_ANNOTATION,
    find_port,
    is_headless,
    pod_ip_for_family,
    service_family,
    should_be_in_endpoints,
    should_set_hostname,
    spec_of,
    target_ref,
)

Obj = dict[str, Any]
MANAGED_BY_LABEL = "endpoints.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpoint-controller"
OVER_CAPACITY_ANNOTATION = "endpoints.kubernetes.io/over-capacity"
MAX_CAPACITY = 1000


def endpoint_address(pod: Mapping[str, Any], service: Mapping[str, Any]) -> Obj | None:
    """``podToEndpointAddressForService``: the pod's address of the Service's family."""
    ip = pod_ip_for_family(pod, service_family(service))
    if ip is None:
        return None
    address: Obj = {"ip": ip}
    if should_set_hostname(pod, service):
        address["hostname"] = spec_of(pod)["hostname"]
    if node_name(pod):
        address["nodeName"] = node_name(pod)
    address["targetRef"] = target_ref(pod)
    return address


def _service_ports(service: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    ports = spec_of(service).get("ports")
    return [p for p in ports if isinstance(p, Mapping)] if isinstance(ports, list) else []


def endpoint_port(service_port: Mapping[str, Any], number: int) -> Obj:
    port: Obj = {"port": number, "protocol": service_port.get("protocol") or "TCP"}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def _address_key(address: Mapping[str, Any]) -> tuple[str, str]:
    ref = address.get("targetRef")
    return str(address.get("ip")), str(ref.get("uid") or "") if isinstance(ref, Mapping) else ""


def _ip_sort_key(address: Mapping[str, Any]) -> tuple[int, int, str]:
    ip = str(address.get("ip"))
    try:
        parsed = ipaddress.ip_address(ip)
    except ValueError:
        return (9, 0, ip)
    return (parsed.version, int(parsed), _address_key(address)[1])


def _port_sort_key(port: Mapping[str, Any]) -> tuple[str, int, str]:
    return (str(port.get("name") or ""), int(port.get("port") or 0), str(port.get("protocol") or ""))


def repack(entries: Iterable[tuple[Obj, Obj | None, bool]]) -> list[Obj]:
    """``RepackSubsets`` of ``(address, port or None, ready)`` entries: one subset per set of
    addresses offering the same ports; an address ready for a port on any entry is ready."""
    addresses: dict[tuple[str, str], Obj] = {}
    by_port: dict[tuple[Any, ...], dict[tuple[str, str], bool]] = {}
    port_of: dict[tuple[Any, ...], Obj | None] = {}
    for address, port, ready in entries:
        key = _address_key(address)
        addresses.setdefault(key, address)
        port_key = tuple(sorted(port.items())) if port is not None else ()
        port_of[port_key] = port
        readiness = by_port.setdefault(port_key, {})
        readiness[key] = readiness.get(key, False) or ready
    groups: dict[tuple[Any, ...], list[Obj | None]] = {}
    group_members: dict[tuple[Any, ...], dict[tuple[str, str], bool]] = {}
    for port_key, readiness in by_port.items():
        members = tuple(sorted(readiness.items()))
        groups.setdefault(members, []).append(port_of[port_key])
        group_members[members] = readiness
    subsets = []
    for members, ports in groups.items():
        readiness = group_members[members]
        ready_list = sorted((addresses[k] for k, r in readiness.items() if r), key=_ip_sort_key)
        not_ready = sorted((addresses[k] for k, r in readiness.items() if not r), key=_ip_sort_key)
        subset: Obj = {}
        if ready_list:
            subset["addresses"] = ready_list
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        real_ports = sorted((p for p in ports if p is not None), key=_port_sort_key)
        if real_ports:
            subset["ports"] = real_ports
        subsets.append(subset)
    return sorted(subsets, key=_subset_sort_key)


def _subset_sort_key(subset: Mapping[str, Any]) -> tuple[Any, ...]:
    first = (subset.get("addresses") or subset.get("notReadyAddresses") or [{}])[0]
    ports = subset.get("ports") or [{}]
    return (_ip_sort_key(first), _port_sort_key(ports[0]))


def desired_subsets(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> list[Obj]:
    """The subsets the Service's Endpoints should hold for ``pods`` (already selected)."""
    spec = spec_of(service)
    publish_not_ready = spec.get("publishNotReadyAddresses") is True
    ports = _service_ports(service)
    entries: list[tuple[Obj, Obj | None, bool]] = []
    for pod in pods:
        if not should_be_in_endpoints(pod, publish_not_ready):
            continue
        address = endpoint_address(pod, service)
        if address is None:
            continue
        ready = publish_not_ready or is_pod_ready(pod)
        if not ports:
            if spec.get("clusterIP") == "None":
                entries.append((address, None, ready))
            continue
        for service_port in ports:
            number = find_port(pod, service_port)
            if number is not None:
                entries.append((address, endpoint_port(service_port, number), ready))
    return repack(entries)


def _count(subsets: list[Obj]) -> int:
    return sum(len(s.get("addresses") or []) + len(s.get("notReadyAddresses") or []) for s in subsets)


def truncate(subsets: list[Obj]) -> tuple[list[Obj], bool]:
    """``truncateEndpoints``: at most 1000 addresses, ready ones first, spread over subsets in
    proportion; returns the subsets and whether anything was cut."""
    total = _count(subsets)
    if total <= MAX_CAPACITY:
        return subsets, False
    cut: list[Obj] = []
    remaining = MAX_CAPACITY
    for subset in subsets:
        share = min(remaining, round(MAX_CAPACITY * _count([subset]) / total) or 1)
        ready = list(subset.get("addresses") or [])[:share]
        not_ready = list(subset.get("notReadyAddresses") or [])[:max(0, share - len(ready))]
        remaining -= len(ready) + len(not_ready)
        cut.append({**subset, "addresses": ready, "notReadyAddresses": not_ready})
        cut[-1] = {k: v for k, v in cut[-1].items() if v}
    return cut, True


def desired_labels(service: Mapping[str, Any]) -> dict[str, str]:
    """The Service's labels, plus the headless marker for Services without a cluster IP, plus
    the controller's managed-by label."""
    labels = dict(labels_of(service))
    if is_headless(service):
        labels[HEADLESS_LABEL] = ""
    else:
        labels.pop(HEADLESS_LABEL, None)
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return labels


def plan_endpoints(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], current: Mapping[str, Any] | None,
                   trigger_time: str | None) -> Obj | None:
    """The Endpoints to write for ``service`` (created when ``current`` is ``None``), or ``None``
    when ``current`` already lists the same subsets, labels and capacity annotation."""
    subsets, truncated = truncate(desired_subsets(service, pods))
    labels = desired_labels(service)
    if current is not None:
        annotations = annotations_of(current)
        same_capacity = (OVER_CAPACITY_ANNOTATION in annotations) == truncated
        if (current.get("subsets") or []) == subsets and dict(labels_of(current)) == labels and same_capacity:
            return None
    annotations_out = dict(annotations_of(current)) if current is not None else {}
    if trigger_time:
        annotations_out[TRIGGER_TIME_ANNOTATION] = trigger_time
    else:
        annotations_out.pop(TRIGGER_TIME_ANNOTATION, None)
    if truncated:
        annotations_out[OVER_CAPACITY_ANNOTATION] = "truncated"
    else:
        annotations_out.pop(OVER_CAPACITY_ANNOTATION, None)
    metadata: Obj = dict(current["metadata"]) if current is not None else {
        "name": name_of(service), "namespace": namespace_of(service)}
    metadata["labels"] = labels
    if annotations_out:
        metadata["annotations"] = annotations_out
    else:
        metadata.pop("annotations", None)
    endpoints: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": metadata}
    if subsets:
        endpoints["subsets"] = subsets
    return endpoints
