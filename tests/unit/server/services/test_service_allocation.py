"""Service create and update semantics of the server: defaults, family initialisation,
cluster IP and node port allocation, patching of allocated values, and the refusals."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.services.allocation import InUse, Ranges, allocate_on_create, allocate_on_update, in_use
from kubeloop.server.services.defaults import default_service
from kubeloop.server.services.ipallocator import IPRange
from kubeloop.server.services.validation import validate_service_create, validate_service_update

Obj = dict[str, Any]


def service(name: str = "web", **spec: Any) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                 "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}
    return body


def create(body: Obj, used: InUse | None = None) -> Obj:
    """What the server stores for ``body`` (the hook, then admission); raises the 422 it answers."""
    created = copy.deepcopy(body)
    default_service(created)
    allocate_on_create(created, used or InUse())
    default_service(created)
    errors = validate_service_create(created)
    if errors:
        raise AssertionError([str(e) for e in errors])
    created["metadata"]["resourceVersion"] = "1"
    return created


def update(new: Obj, old: Obj, used: InUse | None = None) -> list[str]:
    """Run an update; returns the field errors (the object is changed in place)."""
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
    default_service(new)
    allocate_on_update(new, old, used if used is not None else in_use([old]))
    default_service(new)
    return [str(e) for e in validate_service_update(new, old)]


def refusal(body: Obj, used: InUse | None = None) -> str:
    with pytest.raises(ApiError) as raised:
        create(body, used)
    assert raised.value.code == 422 or raised.value.code == 500
    return raised.value.message


def test_a_plain_service_gets_upstream_defaults_and_a_cluster_ip_from_the_range() -> None:
    stored = create(service())
    spec = stored["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["ipFamilies"] == ["IPv4"]
    assert spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert "externalTrafficPolicy" not in spec
    assert IPRange().contains(spec["clusterIP"])
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert stored["status"] == {"loadBalancer": {}}


def test_allocation_never_hands_out_an_address_in_use() -> None:
    ranges = Ranges(IPRange("10.0.0.0/28"))  # 14 addresses
    used: set[str] = set()
    for _ in range(14):
        body = service()
        default_service(body)
        allocate_on_create(body, InUse(frozenset(used)), ranges)
        assert body["spec"]["clusterIP"] not in used
        used.add(body["spec"]["clusterIP"])
    assert used == {ranges.ips.nth(i) for i in range(14)}
    with pytest.raises(ApiError) as raised:
        allocate_on_create(service(), InUse(frozenset(used)), ranges)
    assert (raised.value.code, raised.value.message) == (500, "Internal error occurred: failed to allocate a "
                                                              "serviceIP: range is full")


def test_a_requested_ip_is_honoured_and_mirrored_into_cluster_ips() -> None:
    stored = create(service(clusterIP="10.96.0.10"))
    assert stored["spec"]["clusterIPs"] == ["10.96.0.10"]


@pytest.mark.parametrize(("spec", "used", "message"), [
    ({"clusterIP": "10.96.0.10"}, InUse(frozenset({"10.96.0.10"})),
     'Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP '
     '10.96.0.10: provided IP is already allocated'),
    ({"clusterIP": "1.1.1.1"}, InUse(),
     'Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"1.1.1.1"}: failed to allocate IP 1.1.1.1: '
     'the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12'),
    ({"clusterIP": "abc"}, InUse(),
     'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: "abc": must be a valid IP address, '
     '(e.g. 10.9.8.7 or 2001:db8::ffff)'),
    ({"clusterIPs": ["10.96.0.10"]}, InUse(),
     'Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: must be empty when '
     '`clusterIP` is not specified'),
    ({"ipFamilies": ["IPv6"]}, InUse(),
     'Service "web" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'),
    ({"ipFamilyPolicy": "RequireDualStack"}, InUse(),
     'Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not '
     'configured for dual-stack services'),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 8080}]}, InUse(),
     'Service "web" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid '
     'range. The range of valid ports is 30000-32767'),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}, InUse(node_ports=frozenset({30080})),
     'Service "web" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated'),
])
def test_refused_requests_carry_upstream_texts(spec: Obj, used: InUse, message: str) -> None:
    assert refusal(service(**spec), used) == message


def test_headless_services_get_no_address_and_selectorless_ones_require_dual_stack() -> None:
    headless = create(service(clusterIP="None"))["spec"]
    assert headless["clusterIPs"] == ["None"]
    assert (headless["ipFamilyPolicy"], headless["ipFamilies"]) == ("SingleStack", ["IPv4"])
    selectorless = service(clusterIP="None")
    del selectorless["spec"]["selector"]
    spec = create(selectorless)["spec"]
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("RequireDualStack", ["IPv4", "IPv6"])


def test_node_ports_are_allocated_shared_by_protocol_and_requests_honoured() -> None:
    body = service(type="NodePort", ports=[
        {"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
        {"name": "web", "port": 80, "nodePort": 30080}])
    spec = create(body, InUse(node_ports=frozenset({30081})))["spec"]
    udp, tcp, web = (p["nodePort"] for p in spec["ports"])
    assert udp == tcp and 30000 <= udp <= 32767 and udp not in (30080, 30081)
    assert web == 30080
    assert spec["externalTrafficPolicy"] == "Cluster"


def test_a_local_load_balancer_gets_a_health_check_node_port() -> None:
    spec = create(service(type="LoadBalancer", externalTrafficPolicy="Local"))["spec"]
    assert spec["allocateLoadBalancerNodePorts"] is True
    assert 30000 <= spec["healthCheckNodePort"] <= 32767
    assert spec["healthCheckNodePort"] != spec["ports"][0]["nodePort"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"ports": []}, "spec.ports: Required value"),
    ({"type": "Bogus"}, 'spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", '
                        '"LoadBalancer", "NodePort"'),
    ({"ports": [{"port": 80, "nodePort": 30080}]}, "spec.ports[0].nodePort: Forbidden: may not be used when `type` "
                                                   "is 'ClusterIP'"),
    ({"ports": [{"port": 0}]}, "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"),
    ({"ports": [{"port": 80, "name": "a"}, {"port": 81}]}, "spec.ports[1].name: Required value"),
    ({"ports": [{"port": 80, "protocol": "HTTP"}]},
     'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
    ({"sessionAffinity": "Sticky"}, 'spec.sessionAffinity: Unsupported value: "Sticky": supported values: '
                                    '"ClientIP", "None"'),
    ({"type": "ExternalName"}, "spec.externalName: Required value"),
    ({"externalTrafficPolicy": "Local"}, 'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for '
                                         'externally-accessible services'),
])
def test_validation_mistakes_are_reported_with_upstream_texts(spec: Obj, message: str) -> None:
    body = service(**spec)
    default_service(body)
    allocate_on_create(body, InUse())
    assert message in [str(e) for e in validate_service_create(body)]


def test_names_must_be_dns_1035_labels() -> None:
    body = service(name="1web")
    default_service(body)
    allocate_on_create(body, InUse())
    assert any(str(e).startswith('metadata.name: Invalid value: "1web": a DNS-1035 label')
               for e in validate_service_create(body))


def test_an_update_without_cluster_ip_or_node_ports_keeps_what_was_allocated() -> None:
    old = create(service(type="NodePort"))
    replacement = service(type="NodePort")
    assert update(replacement, old) == []
    assert replacement["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert replacement["spec"]["clusterIPs"] == old["spec"]["clusterIPs"]
    assert replacement["spec"]["ports"][0]["nodePort"] == old["spec"]["ports"][0]["nodePort"]


def test_the_cluster_ip_may_not_change_once_set() -> None:
    old = create(service(clusterIP="10.96.0.20"))
    changed = copy.deepcopy(old)
    changed["spec"]["clusterIP"] = "10.96.0.21"
    changed["spec"]["clusterIPs"] = ["10.96.0.21"]
    assert 'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.21"}: may not change once set' in update(changed, old)


def test_type_changes_release_or_allocate_what_the_type_needs() -> None:
    node_port = create(service(type="NodePort"))
    to_cluster_ip = copy.deepcopy(node_port)
    to_cluster_ip["spec"]["type"] = "ClusterIP"
    assert update(to_cluster_ip, node_port) == []
    assert "nodePort" not in to_cluster_ip["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in to_cluster_ip["spec"]
    assert in_use([to_cluster_ip]).node_ports == frozenset()

    to_external = copy.deepcopy(to_cluster_ip)
    to_external["spec"].update(type="ExternalName", externalName="example.com")
    assert update(to_external, to_cluster_ip) == []
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & to_external["spec"].keys()

    back = copy.deepcopy(to_external)
    back["spec"]["type"] = "ClusterIP"
    del back["spec"]["externalName"]
    assert update(back, to_external, InUse(frozenset({to_cluster_ip["spec"]["clusterIP"]}))) == []
    assert IPRange().contains(back["spec"]["clusterIP"])
    assert back["spec"]["clusterIP"] != to_cluster_ip["spec"]["clusterIP"]


def test_switching_to_node_port_allocates_node_ports_and_keeps_requested_ones() -> None:
    old = create(service(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}]))
    new = copy.deepcopy(old)
    new["spec"]["type"] = "NodePort"
    new["spec"]["ports"][1]["nodePort"] = 30081
    assert update(new, old) == []
    first, second = (p["nodePort"] for p in new["spec"]["ports"])
    assert 30000 <= first <= 32767 and first != 30081
    assert second == 30081


def test_in_use_collects_addresses_and_ports_of_stored_services() -> None:
    stored = [create(service("a", type="NodePort", clusterIP="10.96.0.30", ports=[{"port": 80, "nodePort": 30001}])),
              create(service("b", clusterIP="None"))]
    assert in_use(stored) == InUse(frozenset({"10.96.0.30"}), frozenset({30001}))
