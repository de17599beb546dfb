"""Ingresses, IngressClasses, NetworkPolicies, IPAddresses and ServiceCIDRs."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create, stored, update

NET = "networking.k8s.io"


def ingress(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "default", **meta}, "spec": spec}


def http_rule(path: dict[str, Any], host: str = "example.com") -> dict[str, Any]:
    return {"rules": [{"host": host, "http": {"paths": [path]}}]}


SERVICE = {"service": {"name": "web", "port": {"number": 80}}}


@pytest.mark.parametrize(
    ("spec", "meta", "expected"),
    [
        (http_rule({"path": "/", "pathType": "Prefix", "backend": SERVICE}), {}, []),
        ({}, {}, ["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be "
                  "specified"]),
        ({"rules": []}, {}, ["spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` "
                             "must be specified"]),
        (http_rule({"path": "/", "backend": SERVICE}), {},
         ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]),
        (http_rule({"path": "a//b", "pathType": "Exact", "backend": SERVICE}), {},
         ['spec.rules[0].http.paths[0].path: Invalid value: "a//b": must be an absolute path',
          "spec.rules[0].http.paths[0].path: Invalid value: \"a//b\": must not contain '//'"]),
        (http_rule({"path": "/", "pathType": "Regex", "backend": SERVICE}), {},
         ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
          '"ImplementationSpecific", "Prefix"']),
        (http_rule({"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web"}}}), {},
         ["spec.rules[0].http.paths[0].backend: Required value: port name or number is required"]),
        (http_rule({"path": "/", "pathType": "Prefix", "backend": {}}), {},
         ['spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required']),
        (http_rule({"path": "/", "pathType": "Prefix", "backend": SERVICE}, host="10.0.0.1"), {},
         ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']),
        (http_rule({"path": "/", "pathType": "Prefix", "backend": SERVICE}, host="*.example.com"), {}, []),
        ({"defaultBackend": SERVICE, "ingressClassName": "nginx"},
         {"annotations": {"kubernetes.io/ingress.class": "nginx"}}, []),
        ({"defaultBackend": SERVICE, "ingressClassName": "nginx"},
         {"annotations": {"kubernetes.io/ingress.class": "traefik"}},
         ['annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match `ingressClassName` when '
          "both are specified"]),
        ({"defaultBackend": {"resource": {"kind": "Bucket"}}}, {},
         ["spec.defaultBackend.resource.name: Required value: name is required"]),
        ({"rules": [{"host": "example.com", "http": {"paths": []}}]}, {},
         ["spec.rules[0].http.paths: Required value"]),
    ],
)
def test_ingress_validation(spec: dict[str, Any], meta: dict[str, Any], expected: list[str]) -> None:
    assert create(NET, "Ingress", ingress(spec, **meta), namespaced=True) == expected


def test_ingress_class_controller_and_parameters() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "nginx"}, "spec": {
        "controller": "k8s.io/ingress-nginx", "parameters": {"kind": "Config", "name": "c"}}}
    old = stored(NET, "IngressClass", obj)
    assert old["spec"]["parameters"]["scope"] == "Cluster"
    assert update(NET, "IngressClass", old, lambda new: new["spec"].update(controller="example.com/other")) == [
        'spec.controller: Invalid value: "example.com/other": field is immutable']
    assert create(NET, "IngressClass", {"metadata": {"name": "x"}, "spec": {"controller": "nginx"}}) == [
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']
    namespaced = {"kind": "Config", "name": "c", "scope": "Namespace"}
    assert create(NET, "IngressClass", {"metadata": {"name": "x"}, "spec": {
        "controller": "a.io/b", "parameters": namespaced}}) == [
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]


def test_network_policy_defaults() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "np", "namespace": "default"}, "spec": {
        "podSelector": {}, "egress": [{"ports": [{"port": 53}, {"port": 53, "protocol": "UDP"}]}]}}
    assert create(NET, "NetworkPolicy", obj, namespaced=True) == []
    assert obj["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert [p["protocol"] for p in obj["spec"]["egress"][0]["ports"]] == ["TCP", "UDP"]
    ingress_only: dict[str, Any] = {"metadata": {"name": "np", "namespace": "default"}, "spec": {"podSelector": {}}}
    assert create(NET, "NetworkPolicy", ingress_only, namespaced=True) == []
    assert ingress_only["spec"]["policyTypes"] == ["Ingress"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"ingress": [{"from": [{}]}]}, ["spec.ingress[0].from[0]: Required value: must specify a peer"]),
        ({"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]},
         ["spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"]),
        ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}]},
         ['spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`']),
        ({"ingress": [{"ports": [{"port": 70000, "protocol": "ICMP"}]}]},
         ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
          "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"]),
        ({"ingress": [{"ports": [{"port": "http", "endPort": 90}]}]},
         ["spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric"]),
        ({"policyTypes": ["Ingress", "Egress", "Ingress"]},
         ['spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not '
          "specify more than two policyTypes"]),
        ({"policyTypes": ["Sideways"]},
         ['spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"']),
    ],
)
def test_network_policy_validation(spec: dict[str, Any], expected: list[str]) -> None:
    obj = {"metadata": {"name": "np", "namespace": "default"}, "spec": {"podSelector": {}, **spec}}
    assert create(NET, "NetworkPolicy", obj, namespaced=True) == expected


def test_ip_address_names_and_parent() -> None:
    ref = {"group": "", "resource": "services", "name": "kubernetes", "namespace": "default"}
    assert create(NET, "IPAddress", {"metadata": {"name": "10.96.0.1"}, "spec": {"parentRef": ref}}) == []
    assert create(NET, "IPAddress", {"metadata": {"name": "2001:db8:0::1"}, "spec": {"parentRef": ref}}) == [
        'metadata.name: Invalid value: "2001:db8:0::1": must be in canonical form ("2001:db8::1")']
    assert create(NET, "IPAddress", {"metadata": {"name": "10.96.0.2"}, "spec": {}}) == [
        "spec.parentRef: Required value"]
    old = stored(NET, "IPAddress", {"metadata": {"name": "10.96.0.1"}, "spec": {"parentRef": dict(ref)}})
    errors = update(NET, "IPAddress", old, lambda new: new["spec"]["parentRef"].update(name="other"))
    assert len(errors) == 1 and errors[0].startswith("spec.parentRef: Invalid value:")


def test_service_cidr() -> None:
    assert create(NET, "ServiceCIDR", {"metadata": {"name": "extra"}, "spec": {"cidrs": []}}) == [
        "spec.cidrs: Required value: at least one CIDR required"]
    assert create(NET, "ServiceCIDR", {"metadata": {"name": "extra"}, "spec": {"cidrs": ["bad"]}}) == [
        'spec.cidrs[0]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']
    old = stored(NET, "ServiceCIDR", {"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.0.0.0/16"]}})
    assert update(NET, "ServiceCIDR", old, lambda new: new["spec"].update(cidrs=["10.1.0.0/16"])) == [
        'spec.cidrs: Invalid value: []string{"10.1.0.0/16"}: field is immutable']
    assert update(NET, "ServiceCIDR", old, lambda new: new["spec"].update(cidrs=["10.0.0.0/16", "fd00::/108"])) == [
        'spec.cidrs: Invalid value: []string{"10.0.0.0/16", "fd00::/108"}: field is immutable']
    same_family = {"metadata": {"name": "x"}, "spec": {"cidrs": ["10.0.0.0/16", "10.1.0.0/16"]}}
    assert create(NET, "ServiceCIDR", same_family) == [
        'spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/16", "10.1.0.0/16"}}: may '
        "specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"]
