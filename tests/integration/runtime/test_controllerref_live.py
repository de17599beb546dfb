"""Adoption and release through the embedded API server's strategic merge patch."""

from typing import Any

import pytest

from kubeloop.client import CONFIG_MAPS, ApiClient, Conflict
from kubeloop.runtime.controllerref import ControllerRefManager, adopt_patch


def cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "labels": labels}}


async def test_adopt_and_release(client: ApiClient) -> None:
    owner = await client.create(CONFIG_MAPS, cm("owner"), namespace="default")
    orphan = await client.create(CONFIG_MAPS, cm("orphan", app="web"), namespace="default")
    other_owner_ref = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "other-uid"}
    stale = cm("stale", app="db")
    stale["metadata"]["ownerReferences"] = [
        other_owner_ref,
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
         "controller": True, "blockOwnerDeletion": True},
    ]
    stale = await client.create(CONFIG_MAPS, stale, namespace="default")

    async def patch(obj: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return await client.patch(CONFIG_MAPS, obj["metadata"]["name"], body, patch_type="strategic",
                                  namespace="default")

    async def get_owner() -> dict[str, Any] | None:
        return await client.get(CONFIG_MAPS, "owner", namespace="default")

    manager = ControllerRefManager(owner, "v1", "ConfigMap",
                                   lambda o: o["metadata"].get("labels", {}).get("app") == "web", patch, get_owner)
    claimed = await manager.claim([orphan, stale])
    assert [o["metadata"]["name"] for o in claimed] == ["orphan"]
    adopted = await client.get(CONFIG_MAPS, "orphan", namespace="default")
    refs = adopted["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
                     "controller": True, "blockOwnerDeletion": True}]
    released = await client.get(CONFIG_MAPS, "stale", namespace="default")
    assert released["metadata"]["ownerReferences"] == [other_owner_ref]


async def test_uid_in_the_adopt_patch_is_a_precondition(client: ApiClient) -> None:
    owner = await client.create(CONFIG_MAPS, cm("owner"), namespace="default")
    orphan = await client.create(CONFIG_MAPS, cm("orphan", app="web"), namespace="default")
    await client.delete(CONFIG_MAPS, "orphan", namespace="default")
    await client.create(CONFIG_MAPS, cm("orphan", app="web"), namespace="default")  # same name, new uid
    with pytest.raises(Conflict):
        await client.patch(CONFIG_MAPS, "orphan", adopt_patch(owner, orphan, "v1", "ConfigMap"),
                           patch_type="strategic", namespace="default")
