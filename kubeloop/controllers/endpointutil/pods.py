"""What the endpoint controllers read from pods, as upstream's ``pkg/controller/util/endpoint``
and ``endpointslice/util`` helpers (``ShouldPodBeInEndpoints``, ``ShouldSetHostname``) and
``podutil.FindPort``.

Pure functions on plain dicts, shared by the Endpoints and EndpointSlice controllers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.api.meta import is_being_deleted, labels_of, name_of, namespace_of, uid_of
from kubeloop.api.nested import section
from kubeloop.api.pods import POD_FAILED, POD_SUCCEEDED, pod_phase

Obj = dict[str, Any]
HEADLESS_LABEL = "service.kubernetes.io/headless"
TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(obj, "spec")


def service_selector(service: Mapping[str, Any]) -> Mapping[str, str] | None:
    """The selector of a Service the controllers manage, ``None`` for the others: Services
    without a selector (their endpoints are someone else's) and ExternalName Services."""
    spec = spec_of(service)
    selector = spec.get("selector")
    if spec.get("type") == "ExternalName" or not isinstance(selector, Mapping):
        return None
    return selector


def selects(selector: Mapping[str, str], pod: Mapping[str, Any]) -> bool:
    """``labels.SelectorFromSet``: every pair present (an empty selector selects every pod)."""
    labels = labels_of(pod)
    return all(labels.get(key) == value for key, value in selector.items())


def services_selecting(pod: Mapping[str, Any], services: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The managed Services of the pod's namespace whose selector matches the pod."""
    namespace = namespace_of(pod)
    found = []
    for service in services:
        selector = service_selector(service)
        if selector is not None and namespace_of(service) == namespace and selects(selector, pod):
            found.append(service)
    return found


def should_be_in_endpoints(pod: Mapping[str, Any], include_terminating: bool) -> bool:
    """``ShouldPodBeInEndpoints``: not finished, has an IP, and not terminating unless asked."""
    if pod_phase(pod) in (POD_SUCCEEDED, POD_FAILED):
        return False
    if not pod_ips(pod):
        return False
    return include_terminating or not is_being_deleted(pod)


def pod_ips(pod: Mapping[str, Any]) -> list[str]:
    status = section(pod, "status")
    ips = [str(section(entry).get("ip") or "") for entry in _list(status.get("podIPs"))]
    ips = [ip for ip in ips if ip]
    if not ips and status.get("podIP"):
        ips = [str(status["podIP"])]
    return ips


def pod_ip_for_family(pod: Mapping[str, Any], family: str) -> str | None:
    """The pod's address of ``family`` (IPv4 or IPv6), ``None`` without one."""
    wanted = 6 if family == "IPv6" else 4
    for ip in pod_ips(pod):
        try:
            if ipaddress.ip_address(ip).version == wanted:
                return ip
        except ValueError:
            continue
    return None


def service_family(service: Mapping[str, Any]) -> str:
    """The address family the endpoints of a Service use: its first IP family (IPv4 by default)."""
    families = _list(spec_of(service).get("ipFamilies"))
    return str(families[0]) if families else "IPv4"


def is_headless(service: Mapping[str, Any]) -> bool:
    """``!IsServiceIPSet``: no cluster IP, or ``None``."""
    cluster_ip = spec_of(service).get("clusterIP")
    return not cluster_ip or cluster_ip == "None"


def should_set_hostname(pod: Mapping[str, Any], service: Mapping[str, Any]) -> bool:
    spec = spec_of(pod)
    return bool(spec.get("hostname")) and spec.get("subdomain") == name_of(service) and \
        namespace_of(pod) == namespace_of(service)


def find_port(pod: Mapping[str, Any], service_port: Mapping[str, Any]) -> int | None:
    """``FindPort``: a numeric target port as is, a named one looked up in the pod's containers
    (same protocol); ``None`` when the pod has no such port."""
    target = service_port.get("targetPort")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target:
        if target.isdigit():
            return int(target)
        protocol = service_port.get("protocol") or "TCP"
        spec = spec_of(pod)
        containers = _list(spec.get("containers")) + [
            c for c in _list(spec.get("initContainers")) if section(c).get("restartPolicy") == "Always"]
        for container in containers:
            for port in _list(section(container).get("ports")):
                port = section(port)
                if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                    number = port.get("containerPort")
                    if isinstance(number, int):
                        return number
    return None


def target_ref(pod: Mapping[str, Any]) -> Obj:
    return {"kind": "Pod", "namespace": namespace_of(pod), "name": name_of(pod), "uid": uid_of(pod)}


