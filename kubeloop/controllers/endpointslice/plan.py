"""The EndpointSlice reconciler, as upstream's ``staging/.../endpointslice`` ``Reconciler``
(``reconcileByAddressType``, ``reconcileByPortMapping``, ``podToEndpoint``, ``getEndpointPorts``).

Pure: :func:`plan_slices` takes a Service, its selected pods, the slices it already has and the
trigger time, and returns a :class:`SlicePlan` of slices to create, update and delete.

* Each pod with an IP that has not finished (terminating pods included) is one endpoint: its
  address of the Service's family, ``conditions`` (``ready`` = serving and not terminating, or
  always with ``publishNotReadyAddresses``; ``serving`` = the pod's Ready condition;
  ``terminating`` = being deleted), ``nodeName``, ``hostname`` when the pod's subdomain is the
  Service, and a ``targetRef`` to the pod.
* Endpoints are grouped by the set of ports they resolve (named target ports may resolve
  differently per pod); each group fills slices of at most 100 endpoints.
* Existing slices keep their endpoints that are still wanted (refreshed), lose the others, are
  deleted when emptied; new endpoints go first into slices already being updated, then into
  other slices with room, then into new slices. Slices of another address type, of port sets no
  longer wanted or owned by an earlier Service of the same name are deleted.
* A Service without endpoints keeps one placeholder slice with no ports and no endpoints.

Slices carry the Service's labels plus ``kubernetes.io/service-name``,
``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`` and, for headless
Services, ``service.kubernetes.io/headless``; a controller owner reference to the Service; and
``endpoints.kubernetes.io/last-change-trigger-time`` on the slices a sync writes.

As upstream's ``finalize``, slices about to be deleted are reused for slices about to be
created. Simplification: no ``zone`` (nodes are not read).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.api.meta import controller_of, is_being_deleted, labels_of, name_of, namespace_of, uid_of
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
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
MAX_ENDPOINTS_PER_SLICE = 100
API_VERSION = "discovery.k8s.io/v1"

PortKey = tuple[tuple[str, int, str], ...]


@dataclass
class SlicePlan:
    """What a sync writes: new slices (``generateName``), replaced slices, slices to delete."""

    create: list[Obj] = field(default_factory=list)
    update: list[Obj] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.create or self.update or self.delete)


def endpoint_ports(service: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """``getEndpointPorts``: each Service port the pod resolves, named as the Service port."""
    ports = spec_of(service).get("ports")
    found: list[Obj] = []
    for service_port in ports if isinstance(ports, list) else []:
        if not isinstance(service_port, Mapping):
            continue
        number = find_port(pod, service_port)
        if number is None:
            continue
        port: Obj = {"name": str(service_port.get("name") or ""), "port": number,
                     "protocol": service_port.get("protocol") or "TCP"}
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        found.append(port)
    return found


def port_key(ports: Iterable[Mapping[str, Any]] | None) -> PortKey:
    """An order-free identity of a set of slice ports."""
    return tuple(sorted((str(p.get("name") or ""), int(p.get("port") or 0), str(p.get("protocol") or ""))
                        for p in ports or []))


def pod_endpoint(pod: Mapping[str, Any], service: Mapping[str, Any], family: str) -> Obj | None:
    """``podToEndpoint``; ``None`` when the pod has no address of the family."""
    ip = pod_ip_for_family(pod, family)
    if ip is None:
        return None
    serving = is_pod_ready(pod)
    terminating = is_being_deleted(pod)
    ready = spec_of(service).get("publishNotReadyAddresses") is True or (serving and not terminating)
    endpoint: Obj = {"addresses": [ip], "conditions": {"ready": ready, "serving": serving, "terminating": terminating}}
    if should_set_hostname(pod, service):
        endpoint["hostname"] = spec_of(pod)["hostname"]
    if node_name(pod):
        endpoint["nodeName"] = node_name(pod)
    endpoint["targetRef"] = target_ref(pod)
    return endpoint


def endpoint_key(endpoint: Mapping[str, Any]) -> tuple[str, str]:
    """Which pod (and address) an endpoint stands for."""
    addresses = endpoint.get("addresses") or [""]
    ref = endpoint.get("targetRef")
    return str(addresses[0]), str(ref.get("uid") or "") if isinstance(ref, Mapping) else ""


def _ip_order(key: tuple[str, str]) -> tuple[int, int, str]:
    try:
        parsed = ipaddress.ip_address(key[0])
    except ValueError:
        return (9, 0, key[0])
    return (parsed.version, int(parsed), key[1])


def desired_endpoints(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
                      ) -> dict[PortKey, tuple[list[Obj], dict[tuple[str, str], Obj]]]:
    """The wanted endpoints of the Service, grouped by their port set (ports, endpoints by key)."""
    family = service_family(service)
    groups: dict[PortKey, tuple[list[Obj], dict[tuple[str, str], Obj]]] = {}
    for pod in pods:
        if not should_be_in_endpoints(pod, True):
            continue
        endpoint = pod_endpoint(pod, service, family)
        if endpoint is None:
            continue
        ports = endpoint_ports(service, pod)
        group = groups.setdefault(port_key(ports), (ports, {}))
        group[1][endpoint_key(endpoint)] = endpoint
    return groups


def slice_labels(service: Mapping[str, Any]) -> dict[str, str]:
    """``setEndpointSliceLabels``: the Service's labels, then the reserved ones."""
    labels = {k: v for k, v in labels_of(service).items()
              if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)}
    labels[SERVICE_NAME_LABEL] = name_of(service)
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    if is_headless(service):
        labels[HEADLESS_LABEL] = ""
    return labels


def owner_reference(service: Mapping[str, Any]) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "name": name_of(service), "uid": uid_of(service),
            "controller": True, "blockOwnerDeletion": True}


def slice_prefix(service_name: str) -> str:
    """``getEndpointSlicePrefix``: ``<service>-``, shortened to leave room for the random suffix."""
    prefix = f"{service_name}-"
    return prefix if len(prefix) <= 58 else service_name[:57] + "-"


def new_slice(service: Mapping[str, Any], family: str, ports: list[Obj], endpoints: list[Obj]) -> Obj:
    return {
        "apiVersion": API_VERSION, "kind": "EndpointSlice",
        "metadata": {"generateName": slice_prefix(name_of(service)), "namespace": namespace_of(service),
                     "labels": slice_labels(service), "ownerReferences": [owner_reference(service)]},
        "addressType": family,
        "endpoints": endpoints,
        "ports": ports,
    }


def _with_trigger_time(slice_: Obj, trigger_time: str | None) -> Obj:
    meta = slice_["metadata"]
    annotations = dict(meta.get("annotations") or {})
    if trigger_time:
        annotations[TRIGGER_TIME_ANNOTATION] = trigger_time
    else:
        annotations.pop(TRIGGER_TIME_ANNOTATION, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return slice_


def _owned_by(slice_: Mapping[str, Any], service: Mapping[str, Any]) -> bool:
    owner = controller_of(slice_)
    return owner is not None and owner.get("kind") == "Service" and owner.get("uid") == uid_of(service)


def _is_placeholder_of(slice_: Mapping[str, Any], service: Mapping[str, Any], family: str) -> bool:
    return (not slice_.get("endpoints") and not slice_.get("ports") and slice_.get("addressType") == family
            and dict(labels_of(slice_)) == slice_labels(service) and _owned_by(slice_, service))


def plan_slices(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], existing: Iterable[Mapping[str, Any]],
                trigger_time: str | None) -> SlicePlan:
    """Which slices to create, update and delete so the Service's slices list its pods."""
    family = service_family(service)
    labels = slice_labels(service)
    desired = desired_endpoints(service, pods)
    plan = SlicePlan()
    by_key: dict[PortKey, list[Mapping[str, Any]]] = {}
    existing = list(existing)
    for slice_ in existing:
        if slice_.get("addressType") != family or not _owned_by(slice_, service):
            plan.delete.append(dict(slice_))
        else:
            by_key.setdefault(port_key(slice_.get("ports")), []).append(slice_)
    for key in sorted(set(by_key) | set(desired)):
        ports, wanted = desired.get(key, ([], {}))
        _reconcile_port_set(service, family, labels, ports, dict(wanted), by_key.get(key, []), trigger_time, plan)
    if len(plan.delete) == len(existing) and not plan.create:
        placeholders = [s for s in plan.delete if _is_placeholder_of(s, service, family)]
        if len(plan.delete) == 1 and placeholders:
            plan.delete.clear()
        else:
            plan.create.append(_with_trigger_time(new_slice(service, family, [], []), trigger_time))
    _reuse_deleted(plan, service)
    return plan


def _reuse_deleted(plan: SlicePlan, service: Mapping[str, Any]) -> None:
    """Upstream's ``finalize``: a slice about to be deleted (owned by the Service, same address
    type) is rewritten as one about to be created, sparing a delete and a create."""
    kept: list[Obj] = []
    for doomed in plan.delete:
        fresh = plan.create[-1] if plan.create else None
        if fresh is not None and _owned_by(doomed, service) and doomed.get("addressType") == fresh["addressType"]:
            plan.create.pop()
            meta = dict(fresh["metadata"])
            meta.pop("generateName", None)
            meta["name"] = name_of(doomed)
            plan.update.append({**fresh, "metadata": meta})
        else:
            kept.append(doomed)
    plan.delete = kept


def _reconcile_port_set(service: Mapping[str, Any], family: str, labels: dict[str, str], ports: list[Obj],
                        wanted: dict[tuple[str, str], Obj], slices: list[Mapping[str, Any]],
                        trigger_time: str | None, plan: SlicePlan) -> None:
    updated: list[Obj] = []
    unchanged: list[Obj] = []
    for slice_ in sorted(slices, key=name_of):
        current = [e for e in slice_.get("endpoints") or [] if isinstance(e, Mapping)]
        kept = [wanted.pop(endpoint_key(e)) for e in current if endpoint_key(e) in wanted]
        if not kept:
            plan.delete.append(dict(slice_))
            continue
        copy: Obj = {**slice_, "metadata": dict(slice_["metadata"]), "endpoints": kept}
        if kept != current or dict(labels_of(slice_)) != labels:
            copy["metadata"]["labels"] = dict(labels)
            updated.append(copy)
        else:
            unchanged.append(copy)
    remaining = [wanted[k] for k in sorted(wanted, key=_ip_order)]
    for slice_ in updated + unchanged:
        room = MAX_ENDPOINTS_PER_SLICE - len(slice_["endpoints"])
        if remaining and room > 0:
            slice_["endpoints"] = slice_["endpoints"] + remaining[:room]
            remaining = remaining[room:]
            if slice_ in unchanged:
                unchanged.remove(slice_)
                updated.append(slice_)
    plan.update.extend(_with_trigger_time(s, trigger_time) for s in updated)
    for start in range(0, len(remaining), MAX_ENDPOINTS_PER_SLICE):
        chunk = remaining[start:start + MAX_ENDPOINTS_PER_SLICE]
        plan.create.append(_with_trigger_time(new_slice(service, family, ports, chunk), trigger_time))
