"""OpenAPI definitions of Services, Endpoints (core/v1) and EndpointSlices (discovery.k8s.io/v1).

Field names, types, required lists and list extensions restate ``k8s.io/api`` (core/v1
``Service*``, ``Endpoint*``, ``LoadBalancer*``; discovery/v1 ``EndpointSlice``, ``Endpoint``,
``EndpointConditions``, ``EndpointPort``, ``EndpointHints``); descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    CORE,
    INT_OR_STRING,
    META,
    Schema,
    array,
    boolean,
    definition,
    gvk,
    int64,
    integer,
    ref,
    string,
    string_map,
    type_meta_fields,
)

DISCOVERY = "io.k8s.api.discovery.v1."

_METADATA = "Standard object metadata: name, namespace, labels, annotations and so on."


def _strings(description: str, list_type: str = "atomic") -> Schema:
    return array(string(), description, list_type=list_type)


DEFINITIONS: dict[str, Schema] = {
    META + "Condition": definition(
        "One aspect of an object's current state.",
        {
            "lastTransitionTime": ref(META + "Time", "When the condition last changed status."),
            "message": string("A human-readable explanation of the transition."),
            "observedGeneration": int64("The generation the condition was set for."),
            "reason": string("A CamelCase reason for the last transition."),
            "status": string("True, False or Unknown."),
            "type": string("The condition's type, in CamelCase."),
        }, ["type", "status", "lastTransitionTime", "reason", "message"],
    ),
    CORE + "Service": definition(
        "A named abstraction of a set of pods: a stable address and ports routed to them.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta", _METADATA),
            "spec": ref(CORE + "ServiceSpec", "The desired behaviour of the Service."),
            "status": ref(CORE + "ServiceStatus", "The most recently observed status of the Service."),
        }, kinds=[gvk("", "v1", "Service")],
    ),
    CORE + "ServiceSpec": definition(
        "The desired behaviour of a Service.",
        {
            "allocateLoadBalancerNodePorts": boolean("Whether a LoadBalancer Service gets node ports."),
            "clusterIP": string("The primary cluster IP: allocated when empty, None for a headless Service."),
            "clusterIPs": _strings("The cluster IPs, one per IP family; the first is clusterIP."),
            "externalIPs": _strings("Addresses outside the cluster the Service also answers on."),
            "externalName": string("The DNS name an ExternalName Service aliases."),
            "externalTrafficPolicy": string("Cluster or Local: how external traffic is routed."),
            "healthCheckNodePort": integer("The health-check node port of a Local LoadBalancer Service."),
            "internalTrafficPolicy": string("Cluster or Local: how in-cluster traffic is routed."),
            "ipFamilies": _strings("IPv4 and/or IPv6: the families of the cluster IPs."),
            "ipFamilyPolicy": string("SingleStack, PreferDualStack or RequireDualStack."),
            "loadBalancerClass": string("The load balancer implementation of a LoadBalancer Service."),
            "loadBalancerIP": string("A requested load balancer address (deprecated)."),
            "loadBalancerSourceRanges": _strings("Client ranges a load balancer admits."),
            "ports": array(ref(CORE + "ServicePort"), "The ports the Service exposes.", strategy="merge",
                           merge_key="port", list_type="map", map_keys=["port", "protocol"]),
            "publishNotReadyAddresses": boolean("Whether endpoints include pods that are not ready."),
            "selector": {**string_map("Labels of the pods traffic is routed to."), "x-kubernetes-map-type": "atomic"},
            "sessionAffinity": string("ClientIP or None."),
            "sessionAffinityConfig": ref(CORE + "SessionAffinityConfig", "Session affinity settings."),
            "trafficDistribution": string("A preference for how traffic is spread over endpoints."),
            "type": string("ClusterIP, NodePort, LoadBalancer or ExternalName."),
        },
    ),
    CORE + "ServicePort": definition(
        "One port of a Service.",
        {
            "appProtocol": string("The application protocol of the port."),
            "name": string("The port's name, unique within the Service; required when it has several."),
            "nodePort": integer("The port on every node, for NodePort and LoadBalancer Services."),
            "port": integer("The port the Service exposes."),
            "protocol": string("TCP, UDP or SCTP."),
            "targetPort": ref(INT_OR_STRING, "The number or name of the port on the pods."),
        }, ["port"],
    ),
    CORE + "SessionAffinityConfig": definition(
        "Settings of session affinity.",
        {"clientIP": ref(CORE + "ClientIPConfig", "Settings of ClientIP affinity.")},
    ),
    CORE + "ClientIPConfig": definition(
        "Settings of ClientIP session affinity.",
        {"timeoutSeconds": integer("How long a client sticks to one endpoint.")},
    ),
    CORE + "ServiceStatus": definition(
        "The observed state of a Service.",
        {
            "conditions": array(ref(META + "Condition"), "The Service's conditions.", strategy="merge",
                                merge_key="type", list_type="map", map_keys=["type"]),
            "loadBalancer": ref(CORE + "LoadBalancerStatus", "The load balancer, when there is one."),
        },
    ),
    CORE + "LoadBalancerStatus": definition(
        "The state of a load balancer.",
        {"ingress": array(ref(CORE + "LoadBalancerIngress"), "The load balancer's addresses.", list_type="atomic")},
    ),
    CORE + "LoadBalancerIngress": definition(
        "One address of a load balancer.",
        {
            "hostname": string("A DNS name of the load balancer."),
            "ip": string("An IP address of the load balancer."),
            "ipMode": string("VIP or Proxy: how traffic reaches the address."),
            "ports": array(ref(CORE + "PortStatus"), "The load balancer's ports.", list_type="atomic"),
        },
    ),
    CORE + "PortStatus": definition(
        "The state of one load balancer port.",
        {
            "error": string("Why the port is in error, if it is."),
            "port": integer("The port number."),
            "protocol": string("TCP, UDP or SCTP."),
        }, ["port", "protocol"],
    ),
    CORE + "Endpoints": definition(
        "The addresses implementing a Service.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta", _METADATA),
            "subsets": array(ref(CORE + "EndpointSubset"), "Groups of addresses sharing a set of ports.",
                             list_type="atomic"),
        }, kinds=[gvk("", "v1", "Endpoints")],
    ),
    CORE + "EndpointSubset": definition(
        "Addresses sharing a set of ports.",
        {
            "addresses": array(ref(CORE + "EndpointAddress"), "Ready addresses.", list_type="atomic"),
            "notReadyAddresses": array(ref(CORE + "EndpointAddress"), "Addresses not ready yet.",
                                       list_type="atomic"),
            "ports": array(ref(CORE + "EndpointPort"), "The ports of the addresses.", list_type="atomic"),
        },
    ),
    CORE + "EndpointAddress": definition(
        "One address of an endpoint.",
        {
            "hostname": string("The endpoint's hostname."),
            "ip": string("The endpoint's IP address."),
            "nodeName": string("The node hosting the endpoint."),
            "targetRef": ref(CORE + "ObjectReference", "The object providing the endpoint (a pod)."),
        }, ["ip"], map_type="atomic",
    ),
    CORE + "EndpointPort": definition(
        "One port of an endpoint.",
        {
            "appProtocol": string("The application protocol of the port."),
            "name": string("The name of the Service port this port implements."),
            "port": integer("The port number."),
            "protocol": string("TCP, UDP or SCTP."),
        }, ["port"], map_type="atomic",
    ),
    DISCOVERY + "EndpointSlice": definition(
        "A subset of the endpoints implementing a Service.",
        {**type_meta_fields(),
            "addressType": string("IPv4, IPv6 or FQDN: the type of every address in the slice."),
            "endpoints": array(ref(DISCOVERY + "Endpoint"), "The endpoints of the slice.", list_type="atomic"),
            "metadata": ref(META + "ObjectMeta", _METADATA),
            "ports": array(ref(DISCOVERY + "EndpointPort"), "The ports every endpoint exposes.",
                           list_type="atomic"),
        }, ["addressType", "endpoints"], kinds=[gvk("discovery.k8s.io", "v1", "EndpointSlice")],
    ),
    DISCOVERY + "Endpoint": definition(
        "One endpoint of a slice.",
        {
            "addresses": array(string(), "The endpoint's addresses.", list_type="set"),
            "conditions": ref(DISCOVERY + "EndpointConditions", "Whether the endpoint is ready, serving, "
                              "terminating."),
            "deprecatedTopology": string_map("Topology labels (deprecated)."),
            "hints": ref(DISCOVERY + "EndpointHints", "Hints for topology-aware routing."),
            "hostname": string("The endpoint's hostname."),
            "nodeName": string("The node hosting the endpoint."),
            "targetRef": ref(CORE + "ObjectReference", "The object providing the endpoint (a pod)."),
            "zone": string("The zone of the endpoint."),
        }, ["addresses"],
    ),
    DISCOVERY + "EndpointConditions": definition(
        "The state of an endpoint.",
        {
            "ready": boolean("Whether the endpoint accepts traffic."),
            "serving": boolean("Whether the endpoint is serving, even while terminating."),
            "terminating": boolean("Whether the endpoint is terminating."),
        },
    ),
    DISCOVERY + "EndpointHints": definition(
        "Hints for topology-aware routing.",
        {
            "forNodes": array(ref(DISCOVERY + "ForNode"), "Nodes this endpoint should serve.", list_type="atomic"),
            "forZones": array(ref(DISCOVERY + "ForZone"), "Zones this endpoint should serve.", list_type="atomic"),
        },
    ),
    DISCOVERY + "ForNode": definition("A node an endpoint should serve.", {"name": string("The node.")}, ["name"]),
    DISCOVERY + "ForZone": definition("A zone an endpoint should serve.", {"name": string("The zone.")}, ["name"]),
    DISCOVERY + "EndpointPort": definition(
        "One port of the endpoints of a slice.",
        {
            "appProtocol": string("The application protocol of the port."),
            "name": string("The name of the Service port this port implements."),
            "port": integer("The port number."),
            "protocol": string("TCP, UDP or SCTP."),
        }, map_type="atomic",
    ),
}
