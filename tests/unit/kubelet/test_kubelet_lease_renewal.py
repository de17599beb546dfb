"""How the simulated kubelet renews a node's heartbeat Lease, against a small Lease store
behind a MockTransport (optimistic concurrency by resourceVersion, as the server's)."""

from __future__ import annotations

from typing import Any

import orjson

from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, Request
from kubeloop.kubelet import Kubelet
from kubeloop.kubelet.nodes import sim_nodes

LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def status(code: int, reason: str) -> MockResponse:
    return MockResponse.json({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                              "code": code, "message": reason}, code)


class LeaseStore:
    """One Lease at most; a PUT naming a stale resourceVersion is answered 409."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0

    def store(self, lease: dict[str, Any]) -> MockResponse:
        self.version += 1
        self.lease = {**lease, "metadata": {**lease["metadata"], "resourceVersion": str(self.version)}}
        return MockResponse.json(self.lease)

    def handle(self, request: Request) -> MockResponse:
        body: Any = orjson.loads(request.body) if request.body else None
        if request.method == "POST" and request.path == LEASE_PATH:
            return self.store(body)
        assert request.path == f"{LEASE_PATH}/kubeloop-node-1", request.path
        if self.lease is None:
            return status(404, "NotFound")
        if request.method == "GET":
            return MockResponse.json(self.lease)
        assert request.method == "PUT"
        if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
            return status(409, "Conflict")
        return self.store(body)


def kubelet_on(store: LeaseStore) -> tuple[Kubelet, MockTransport]:
    transport = MockTransport(store.handle)
    client = ApiClient(ClientConfig(server="https://k8s.example:6443", qps=0), transport=transport)
    times = iter(float(1_700_000_000 + second) for second in range(100))
    return Kubelet(client, wall=lambda: next(times)), transport


def methods(transport: MockTransport) -> list[str]:
    return [request.method for request in transport.requests]


async def test_a_renewal_is_one_write_of_the_lease_last_written() -> None:
    store = LeaseStore()
    kubelet, transport = kubelet_on(store)
    [node] = sim_nodes(1)
    for _ in range(3):
        await kubelet._renew_lease(node, "node-uid")
    # Read, found missing, created; then two renewals of one PUT each, no read before them.
    assert methods(transport) == ["GET", "POST", "PUT", "PUT"]
    assert store.lease is not None and store.version == 3
    assert store.lease["spec"]["renewTime"] == "2023-11-14T22:13:22.000000Z"


async def test_a_lease_written_by_someone_else_is_read_again_and_renewed() -> None:
    store = LeaseStore()
    kubelet, transport = kubelet_on(store)
    [node] = sim_nodes(1)
    await kubelet._renew_lease(node, "node-uid")
    assert store.lease is not None
    store.store({**store.lease, "spec": {**store.lease["spec"], "holderIdentity": "someone-else"}})
    transport.requests.clear()
    await kubelet._renew_lease(node, "node-uid")
    assert methods(transport) == ["PUT", "GET", "PUT"]
    assert store.lease["spec"]["holderIdentity"] == "kubeloop-node-1"
    assert store.lease["spec"]["renewTime"] == "2023-11-14T22:13:21.000000Z"
