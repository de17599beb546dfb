"""Columns and cells of Services, Endpoints and EndpointSlices, as kube-apiserver prints them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.server.tables import printer_for

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
META = {"name": "web", "creationTimestamp": "2024-05-01T11:55:00Z"}


def headers(group: str, kind: str) -> list[tuple[str, int]]:
    return [(c.name, c.priority) for c in printer_for(group, "v1", kind).columns]


def cells(group: str, kind: str, obj: dict[str, Any]) -> list[Any]:
    return printer_for(group, "v1", kind).cells(obj, NOW)


def test_service_columns() -> None:
    assert headers("", "Service") == [("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0),
                                      ("Port(s)", 0), ("Age", 0), ("Selector", 1)]


@pytest.mark.parametrize(("spec", "status", "expected"), [
    ({"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 80, "protocol": "TCP"}],
      "selector": {"tier": "a", "app": "web"}},
     {}, ["web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "5m", "app=web,tier=a"]),
    ({"type": "NodePort", "clusterIPs": ["10.96.0.11"], "externalIPs": ["1.2.3.4"],
      "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}, {"port": 53, "protocol": "UDP"}]},
     {}, ["web", "NodePort", "10.96.0.11", "1.2.3.4", "80:30080/TCP,53/UDP", "5m", "<none>"]),
    ({"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"], "ports": []},
     {"loadBalancer": {}}, ["web", "LoadBalancer", "10.96.0.12", "<pending>", "<none>", "5m", "<none>"]),
    ({"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"]},
     {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example"}]}},
     ["web", "LoadBalancer", "10.96.0.12", "5.6.7.8,lb.example", "<none>", "5m", "<none>"]),
    ({"type": "ExternalName", "externalName": "example.com"},
     {}, ["web", "ExternalName", "<none>", "example.com", "<none>", "5m", "<none>"]),
    ({"type": "ClusterIP", "clusterIPs": ["None"]}, {},
     ["web", "ClusterIP", "None", "<none>", "<none>", "5m", "<none>"]),
])
def test_service_cells(spec: dict[str, Any], status: dict[str, Any], expected: list[Any]) -> None:
    assert cells("", "Service", {"metadata": META, "spec": spec, "status": status}) == expected


@pytest.mark.parametrize(("subsets", "expected"), [
    (None, "<none>"),
    ([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}]}],
     "10.0.0.1:80,10.0.0.2:80"),
    ([{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 4)], "ports": [{"port": 80}, {"port": 443}]}],
     "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 3 more..."),
    ([{"addresses": [{"ip": "10.0.0.1"}]}], "10.0.0.1"),
    ([{"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}], ""),
])
def test_endpoints_cells(subsets: Any, expected: str) -> None:
    assert headers("", "Endpoints") == [("Name", 0), ("Endpoints", 0), ("Age", 0)]
    obj: dict[str, Any] = {"metadata": META}
    if subsets is not None:
        obj["subsets"] = subsets
    assert cells("", "Endpoints", obj) == ["web", expected, "5m"]


@pytest.mark.parametrize(("ports", "endpoints", "expected_ports", "expected_endpoints"), [
    ([], [], "<unset>", "<unset>"),
    ([{"name": "", "port": 80}], [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}], "80", "10.0.0.1,10.0.0.2"),
    ([{"name": "a", "port": p} for p in (1, 2, 3, 4)], [{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)],
     "1,2,3 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."),
])
def test_endpoint_slice_cells(ports: list[Any], endpoints: list[Any], expected_ports: str,
                              expected_endpoints: str) -> None:
    assert headers("discovery.k8s.io", "EndpointSlice") == [("Name", 0), ("AddressType", 0), ("Ports", 0),
                                                            ("Endpoints", 0), ("Age", 0)]
    obj = {"metadata": META, "addressType": "IPv4", "ports": ports, "endpoints": endpoints}
    assert cells("discovery.k8s.io", "EndpointSlice", obj) == ["web", "IPv4", expected_ports, expected_endpoints,
                                                                "5m"]
