"""Where a webhook's clientConfig points (kubeloop.server.webhook_admission.endpoints)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.webhook_admission.endpoints import ResolveFailure, Target, shown_url, target_of

Obj = dict[str, Any]


def store(*objects: tuple[str, Obj]) -> Any:
    found = {(resource, obj["metadata"]["namespace"], obj["metadata"]["name"]): obj for resource, obj in objects}

    def get(group: str, resource: str, namespace: str, name: str) -> Obj | None:
        assert group == ""
        return found.get((resource, namespace, name))

    return get


def service(name: str, spec: Obj) -> tuple[str, Obj]:
    return "services", {"metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def endpoints(name: str, subsets: list[Obj]) -> tuple[str, Obj]:
    return "endpoints", {"metadata": {"name": name, "namespace": "ns"}, "subsets": subsets}


def by_service(name: str, port: int = 443, path: str = "/p") -> Obj:
    return {"service": {"namespace": "ns", "name": name, "port": port, "path": path}}


def test_url() -> None:
    target = target_of({"url": "https://127.0.0.1:9443/hook"}, store())
    assert target == Target("https://127.0.0.1:9443/hook", "127.0.0.1", 9443, "/hook", "127.0.0.1")


def test_external_name_goes_to_its_name_at_the_service_port() -> None:
    get = store(service("hooks", {"type": "ExternalName", "externalName": "localhost"}))
    assert target_of(by_service("hooks", 8443), get) == Target(
        "https://hooks.ns.svc:8443/p", "localhost", 8443, "/p", "hooks.ns.svc")


def test_cluster_ip_goes_through_the_endpoints_port_of_the_same_name() -> None:
    get = store(service("hooks", {"type": "ClusterIP", "ports": [{"name": "https", "port": 443, "targetPort": 9443}]}),
                endpoints("hooks", [{"addresses": [{"ip": "10.0.0.5"}],
                                     "ports": [{"name": "metrics", "port": 1}, {"name": "https", "port": 9443}]}]))
    target = target_of(by_service("hooks"), get)
    assert (target.url, target.host, target.port, target.server_name) == (
        "https://hooks.ns.svc:443/p", "10.0.0.5", 9443, "hooks.ns.svc")


@pytest.mark.parametrize(("objects", "text"), [
    ((), 'service "hooks" not found'),
    ((service("hooks", {"ports": [{"port": 80}]}),), 'no service port 443 found for service "hooks"'),
    ((service("hooks", {"ports": [{"port": 443}]}), endpoints("hooks", [])),
     'no endpoints available for service "hooks"'),
    ((service("hooks", {"ports": [{"port": 443}]}), endpoints("hooks", [{"notReadyAddresses": [{"ip": "10.0.0.1"}],
                                                                        "ports": [{"port": 1}]}])),
     'no endpoints available for service "hooks"'),
])
def test_unresolvable_services(objects: tuple[tuple[str, Obj], ...], text: str) -> None:
    with pytest.raises(ResolveFailure) as raised:
        target_of(by_service("hooks"), store(*objects))
    assert str(raised.value) == text


def test_shown_url_needs_no_resolution() -> None:
    assert shown_url(by_service("absent", 443, "")) == "https://absent.ns.svc:443"
