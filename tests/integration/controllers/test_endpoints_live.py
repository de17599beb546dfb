"""The endpoint and endpointslice controllers against the embedded API server.

Pods are created and given a status by the test (no kubelet): an IP, Running, Ready or not.
"""

from __future__ import annotations

from typing import Any

from controller_kit import NAMESPACE, ControllerRunner

from kubeloop.api.meta import now_time
from kubeloop.client import ENDPOINTS, PODS, SERVICES, ApiClient
from kubeloop.controllers.endpointslice.controller import ENDPOINT_SLICES
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
CONTROLLERS = ("endpoint", "endpointslice", "garbagecollector")


async def running_pod(client: ApiClient, name: str, ip: str, *, ready: bool = True, app: str = "web") -> Obj:
    container = {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}
    await client.create(PODS, {"metadata": {"name": name, "labels": {"app": app}},
                               "spec": {"nodeName": "node-1", "containers": [container]}}, namespace=NAMESPACE)
    return await set_ready(client, name, ip, ready)


async def set_ready(client: ApiClient, name: str, ip: str, ready: bool) -> Obj:
    status = {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now_time()}]}}
    patched: Obj = await client.patch(PODS, name, status, patch_type="merge", namespace=NAMESPACE,
                                      subresource="status")
    return patched


def web_service(**spec: Any) -> Obj:
    return {"metadata": {"name": "web", "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
                     **spec}}


async def endpoints_of(client: ApiClient) -> Obj | None:
    items = (await client.list(ENDPOINTS, namespace=NAMESPACE, field_selector="metadata.name=web"))["items"]
    return items[0] if items else None


async def slices_of(client: ApiClient) -> list[Obj]:
    return list((await client.list(ENDPOINT_SLICES, namespace=NAMESPACE,
                                   label_selector="kubernetes.io/service-name=web"))["items"])


def ips(addresses: list[Obj] | None) -> list[str]:
    return sorted(a["ip"] for a in addresses or [])


async def test_endpoints_and_slices_follow_the_pods_of_a_service(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await running_pod(client, "a", "10.244.0.1")
    await running_pod(client, "b", "10.244.0.2", ready=False)
    await running_pod(client, "other", "10.244.0.3", app="db")
    service = await client.create(SERVICES, web_service(), namespace=NAMESPACE)

    async def listed() -> Obj | None:
        endpoints = await endpoints_of(client)
        subsets = (endpoints or {}).get("subsets") or []
        if len(subsets) == 1 and ips(subsets[0].get("addresses")) == ["10.244.0.1"] \
                and ips(subsets[0].get("notReadyAddresses")) == ["10.244.0.2"]:
            return endpoints
        return None

    endpoints = await eventually(listed, what="endpoints listing a ready and a not-ready pod")
    assert endpoints["subsets"][0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert endpoints["metadata"]["labels"] == {"tier": "front",
                                               "endpoints.kubernetes.io/managed-by": "endpoint-controller"}
    assert "endpoints.kubernetes.io/last-change-trigger-time" in endpoints["metadata"]["annotations"]

    async def sliced() -> list[Obj] | None:
        slices = await slices_of(client)
        found = sorted((e["addresses"][0], e["conditions"]["ready"]) for s in slices for e in s.get("endpoints") or [])
        return slices if found == [("10.244.0.1", True), ("10.244.0.2", False)] else None

    [slice_] = await eventually(sliced, what="one slice with both pods")
    assert slice_["metadata"]["ownerReferences"][0]["uid"] == service["metadata"]["uid"]
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]

    await set_ready(client, "b", "10.244.0.2", True)
    await client.delete(PODS, "a", namespace=NAMESPACE, grace_period_seconds=0)

    async def moved() -> bool:
        endpoints = await endpoints_of(client)
        subsets = (endpoints or {}).get("subsets") or []
        slices = await slices_of(client)
        sliced_ips = sorted(e["addresses"][0] for s in slices for e in s.get("endpoints") or [])
        return len(subsets) == 1 and ips(subsets[0].get("addresses")) == ["10.244.0.2"] \
            and not subsets[0].get("notReadyAddresses") and sliced_ips == ["10.244.0.2"]

    await eventually(moved, what="the deleted pod to leave and the other to turn ready")

    await client.delete(SERVICES, "web", namespace=NAMESPACE)

    async def cleaned_up() -> bool:
        return await endpoints_of(client) is None and not await slices_of(client)

    await eventually(cleaned_up, what="the Service's Endpoints and slices to go")


async def test_deleted_endpoints_come_back_and_selectorless_services_are_left_alone(
        client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await running_pod(client, "a", "10.244.0.1")
    await client.create(SERVICES, web_service(), namespace=NAMESPACE)
    manual = {"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}}
    await client.create(SERVICES, manual, namespace=NAMESPACE)
    await client.create(ENDPOINTS, {"metadata": {"name": "manual"},
                                    "subsets": [{"addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}]},
                        namespace=NAMESPACE)

    async def has_endpoints() -> Obj | None:
        return await endpoints_of(client)

    first = await eventually(has_endpoints, what="the web Endpoints")
    await client.delete(ENDPOINTS, "web", namespace=NAMESPACE)

    async def recreated() -> bool:
        current = await endpoints_of(client)
        return current is not None and current["metadata"]["uid"] != first["metadata"]["uid"]

    await eventually(recreated, what="the deleted Endpoints to be written again")
    manual_endpoints = await client.get(ENDPOINTS, "manual", namespace=NAMESPACE)
    assert manual_endpoints["subsets"][0]["addresses"] == [{"ip": "192.0.2.1"}]
    assert not (await client.list(ENDPOINT_SLICES, namespace=NAMESPACE,
                                  label_selector="kubernetes.io/service-name=manual"))["items"]
