"""How the simulated scheduler binds a pod, against canned API answers (a MockTransport)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, NotFound, Request
from kubeloop.kubelet import Kubelet

POD = {"metadata": {"name": "web-1", "namespace": "default", "uid": "uid-1"}, "spec": {"containers": []}}
POD_NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
                 "message": 'pods "web-1" not found', "details": {"name": "web-1", "kind": "pods"}}


def kubelet_answering(binding: MockResponse) -> tuple[Kubelet, MockTransport]:
    def handler(request: Request) -> MockResponse:
        if request.path.endswith("/binding"):
            return binding
        raise AssertionError(f"unexpected request {request.method} {request.path}")

    transport = MockTransport(handler)
    client = ApiClient(ClientConfig(server="https://k8s.example:6443", qps=0), transport=transport)
    return Kubelet(client), transport


def sent(request: Request) -> Any:
    return orjson.loads(request.body or b"null")


async def test_binding_posts_a_binding_naming_the_pod_and_node() -> None:
    kubelet, transport = kubelet_answering(MockResponse.json({"kind": "Status", "status": "Success"}, 201))
    await kubelet.bind(POD, "kubeloop-node-2")
    [request] = transport.requests
    assert (request.method, request.path) == ("POST", "/api/v1/namespaces/default/pods/web-1/binding")
    assert sent(request) == {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "web-1", "namespace": "default", "uid": "uid-1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "kubeloop-node-2"},
    }


async def test_binding_a_pod_that_is_gone_raises() -> None:
    kubelet, transport = kubelet_answering(MockResponse.json(POD_NOT_FOUND, 404))
    with pytest.raises(NotFound):
        await kubelet.bind(POD, "kubeloop-node-1")
    assert len(transport.requests) == 1
