"""Where a webhook's ``clientConfig`` sends its call: the URL shown and the address dialled.

Upstream: kubernetes/apiserver ``pkg/util/webhook/client.go`` (``HookClient``: a service is
addressed as ``https://NAME.NAMESPACE.svc:PORT/PATH``, TLS verifies that server name, the dialer
resolves it) and ``pkg/util/proxy/proxy.go``. kube-apiserver resolves a Service by its cluster
IP (``ResolveCluster``), or, with ``--enable-aggregator-routing``, through its Endpoints
(``ResolveEndpoint``). There is no cluster network here, so a ClusterIP, NodePort or
LoadBalancer Service is resolved through its Endpoints, as ``ResolveEndpoint``; an
``ExternalName`` Service goes to its ``externalName`` (``ResolveCluster``), which is how a
webhook process on this machine is reached by service (``externalName: localhost``; endpoint
validation forbids loopback addresses). ``url: https://127.0.0.1:PORT/...`` reaches one directly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kubeloop.api.status import go_quote

Obj = dict[str, Any]
Getter = Callable[[str, str, str, str], Obj | None]
"""Reads a stored object: (group, resource, namespace, name)."""


class ResolveFailure(Exception):
    """The service cannot be reached (upstream's error text)."""


@dataclass(frozen=True)
class Target:
    """One webhook call's destination."""

    url: str
    """The URL the call is made to, as upstream names it in errors (without the timeout query)."""
    host: str
    port: int
    path: str
    server_name: str
    """The name TLS verifies."""


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _resolve_service(get: Getter, namespace: str, name: str, port: int) -> tuple[str, int]:
    service = get("", "services", namespace, name)
    if service is None:
        raise ResolveFailure(f"service {go_quote(name)} not found")
    spec = service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind == "ExternalName":
        return str(spec.get("externalName") or ""), port
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer"):
        raise ResolveFailure(f"unsupported service type {go_quote(str(kind))}")
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("port") == port]
    if not ports:
        raise ResolveFailure(f"no service port {port} found for service {go_quote(name)}")
    port_name = ports[0].get("name") or ""
    endpoints = get("", "endpoints", namespace, name)
    if endpoints is None:
        raise ResolveFailure(f"endpoints {go_quote(name)} not found")
    subsets = [s for s in endpoints.get("subsets") or [] if isinstance(s, dict)]
    if not subsets:
        raise ResolveFailure(f"no endpoints available for service {go_quote(name)}")
    start = random.randrange(len(subsets))
    for offset in range(len(subsets)):
        subset = subsets[(start + offset) % len(subsets)]
        addresses = [a for a in subset.get("addresses") or [] if isinstance(a, dict) and a.get("ip")]
        if not addresses:
            continue
        for endpoint_port in subset.get("ports") or []:
            if isinstance(endpoint_port, dict) and (endpoint_port.get("name") or "") == port_name:
                return str(random.choice(addresses)["ip"]), int(endpoint_port.get("port") or 0)
    raise ResolveFailure(f"no endpoints available for service {go_quote(name)}")


def target_of(client_config: Mapping[str, Any], get: Getter) -> Target:
    """The destination of ``client_config``; :class:`ResolveFailure` when a service has none.

    The failure's text is what the dialer reports; the caller puts it after the URL.
    """
    url = client_config.get("url")
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or 443
        return Target(f"{parts.scheme}://{parts.netloc}{parts.path}", host, port, parts.path or "/", host)
    service = client_config.get("service") or {}
    name, namespace = str(service.get("name") or ""), str(service.get("namespace") or "")
    port = int(service.get("port") or 443)
    path = str(service.get("path") or "")
    server_name = f"{name}.{namespace}.svc"
    shown = f"https://{_join(server_name, port)}{path}"
    host, real_port = _resolve_service(get, namespace, name, port)
    return Target(shown, host, real_port, path or "/", server_name)


def shown_url(client_config: Mapping[str, Any]) -> str:
    """The URL upstream names for ``client_config`` (also when its service does not resolve)."""
    url = client_config.get("url")
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}{parts.path}"
    service = client_config.get("service") or {}
    server_name = f"{service.get('name') or ''}.{service.get('namespace') or ''}.svc"
    return f"https://{_join(server_name, int(service.get('port') or 443))}{service.get('path') or ''}"
