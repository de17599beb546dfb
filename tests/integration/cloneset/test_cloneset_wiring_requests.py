"""Which requests a new CloneSet pod costs the controller, against the embedded API server: its
create, ``InPlaceUpdateReady`` True through ``/status`` from the create's answer (no GET of the
pod), and the lifecycle ``PreparingNormal -> Normal`` patch (kubeloop/controllers/cloneset/
aftercreate.py; upstream's ``inplaceupdate.Refresh`` and ``refreshPodState``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from cloneset_kit import NAMESPACE, cloneset, condition, owned_pods, state_of

from kubeloop.api import kruise
from kubeloop.client import PODS, ApiClient, Resource, load_kubeconfig
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.controller import add_cloneset_controller
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.server.app import KubeServer
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]


class RecordingClient(ApiClient):
    """Records the controller's reads of single objects and its writes, by verb and plural."""

    calls: list[tuple[str, str]]

    async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> Obj:
        self.calls.append(("get", resource if isinstance(resource, str) else resource.plural))
        return await super().get(resource, name, namespace=namespace)

    async def update_status(self, resource: Resource | str, obj: Any, *, namespace: str | None = None) -> Obj:
        self.calls.append(("update_status", resource if isinstance(resource, str) else resource.plural))
        return await super().update_status(resource, obj, namespace=namespace)


@pytest.fixture
async def recording(server: KubeServer) -> AsyncIterator[RecordingClient]:
    api = RecordingClient(load_kubeconfig(str(server.kubeconfig_path)))
    api.calls = []
    manager = Manager(api, ManagerOptions(name="cloneset-requests", detect_cache_mutations=True))
    await add_cloneset_controller(manager)
    await manager.start()
    yield api
    await manager.stop()
    for informer in manager.factory.informers():
        await informer.stop()
    await api.aclose()


async def test_new_pods_get_their_condition_without_a_read(client: ApiClient, recording: RecordingClient) -> None:
    # No kubelet: nothing else writes the pods, so every write the controller makes is its own.
    await client.create(CLONESETS, cloneset("req", 3), namespace=NAMESPACE)

    async def settled() -> list[Obj] | None:
        pods = await owned_pods(client, "req")
        done = len(pods) == 3 and all(state_of(p) == kruise.STATE_NORMAL for p in pods)
        return pods if done else None

    pods = await eventually(settled, timeout=30)
    for pod in pods:
        ready = condition(pod, kruise.INPLACE_UPDATE_READY)
        assert ready is not None and ready["status"] == "True"
    assert ("get", PODS.plural) not in recording.calls
    assert recording.calls.count(("update_status", PODS.plural)) == 3
