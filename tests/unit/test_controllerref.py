from typing import Any

import pytest

from kubeloop.client import PODS, REPLICA_SETS
from kubeloop.client import NotFound as ClientNotFound
from kubeloop.runtime.controllerref import (
    Claim,
    ControllerRefManager,
    OwnerGoneError,
    claim_decision,
    controller_ref_manager,
)

Obj = dict[str, Any]
OWNER = {"metadata": {"name": "rs", "namespace": "ns", "uid": "owner-uid"}}


def pod(name: str, *, owner_uid: str | None = None, namespace: str = "ns", deleting: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if owner_uid is not None:
        meta["ownerReferences"] = [{"uid": owner_uid, "controller": True, "name": "x", "kind": "ReplicaSet"}]
    if deleting:
        meta["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    return {"metadata": meta}


DELETING_OWNER = {"metadata": {**OWNER["metadata"], "deletionTimestamp": "2030-01-01T00:00:00Z"}}


@pytest.mark.parametrize(
    ("owner", "obj", "matches", "expected"),
    [
        (OWNER, pod("a", owner_uid="owner-uid"), True, Claim.CLAIMED),
        (OWNER, pod("a", owner_uid="owner-uid"), False, Claim.RELEASE),
        (DELETING_OWNER, pod("a", owner_uid="owner-uid"), False, Claim.IGNORE),
        (DELETING_OWNER, pod("a", owner_uid="owner-uid"), True, Claim.CLAIMED),
        (OWNER, pod("a", owner_uid="other"), True, Claim.IGNORE),
        (OWNER, pod("a"), True, Claim.ADOPT),
        (OWNER, pod("a"), False, Claim.IGNORE),
        (OWNER, pod("a", deleting=True), True, Claim.IGNORE),
        (OWNER, pod("a", namespace="other"), True, Claim.IGNORE),
        (DELETING_OWNER, pod("a"), True, Claim.IGNORE),
    ],
)
def test_claim_decision(owner: Obj, obj: Obj, matches: bool, expected: Claim) -> None:
    assert claim_decision(owner, obj, matches) is expected


class NotFound(Exception):
    code = 404


async def test_claim_adopts_and_releases_with_uid_preconditions() -> None:
    patches: list[tuple[str, Obj]] = []
    live_reads = 0

    async def patch(obj: Obj, body: Obj) -> Obj:
        patches.append((obj["metadata"]["name"], body))
        if obj["metadata"]["name"] == "gone":
            raise NotFound()
        return {**obj, "patched": True}

    async def get_owner() -> Obj | None:
        nonlocal live_reads
        live_reads += 1
        return OWNER

    manager = ControllerRefManager(
        OWNER, "apps/v1", "ReplicaSet", lambda o: o["metadata"]["name"] != "stale", patch, get_owner
    )
    claimed = await manager.claim(
        [pod("mine", owner_uid="owner-uid"), pod("orphan"), pod("orphan2"), pod("gone"),
         pod("stale", owner_uid="owner-uid")]
    )
    assert [o["metadata"]["name"] for o in claimed] == ["mine", "orphan", "orphan2"]
    assert live_reads == 1  # the owner is re-checked once per sync
    adopt = dict(patches)["orphan"]
    assert adopt == {
        "metadata": {
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "owner-uid",
                                 "controller": True, "blockOwnerDeletion": True}],
            "uid": "uid-orphan",
        }
    }
    assert dict(patches)["stale"] == {
        "metadata": {"ownerReferences": [{"$patch": "delete", "uid": "owner-uid"}], "uid": "uid-stale"}
    }


async def test_adoption_refused_when_the_live_owner_changed() -> None:
    async def patch(obj: Obj, body: Obj) -> Obj:
        raise AssertionError("must not patch")

    async def get_owner() -> Obj | None:
        return {"metadata": {**OWNER["metadata"], "uid": "new-uid"}}

    manager = ControllerRefManager(OWNER, "apps/v1", "ReplicaSet", lambda o: True, patch, get_owner)
    with pytest.raises(OwnerGoneError, match="got uid new-uid, wanted owner-uid"):
        await manager.claim([pod("orphan")])


class RecordingClient:
    """The two calls a client-bound manager makes, recorded with their arguments."""

    def __init__(self, owner: Obj | None) -> None:
        self.owner = owner
        self.calls: list[tuple[Any, ...]] = []

    async def get(self, resource: Any, name: str, *, namespace: str | None = None) -> Obj:
        self.calls.append(("get", resource.plural, name, namespace))
        if self.owner is None:
            raise ClientNotFound(code=404, reason="NotFound", message=f"{name} not found")
        return self.owner

    async def patch(self, resource: Any, name: str, body: Obj, *, patch_type: str, namespace: str | None) -> Obj:
        self.calls.append(("patch", resource.plural, name, patch_type, namespace, body))
        return {"metadata": {"name": name, "patched": True}}


async def test_a_client_bound_manager_patches_dependents_and_reads_the_owner_live() -> None:
    client = RecordingClient(OWNER)
    manager = controller_ref_manager(client, OWNER, REPLICA_SETS, PODS, lambda obj: True)
    claimed = await manager.claim([pod("orphan"), pod("mine", owner_uid="owner-uid")])
    assert claimed == [{"metadata": {"name": "orphan", "patched": True}}, pod("mine", owner_uid="owner-uid")]
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "owner-uid",
           "controller": True, "blockOwnerDeletion": True}
    assert client.calls == [
        ("get", "replicasets", "rs", "ns"),
        ("patch", "pods", "orphan", "strategic", "ns",
         {"metadata": {"ownerReferences": [ref], "uid": "uid-orphan"}}),
    ]


async def test_a_client_bound_manager_refuses_adoption_once_the_owner_is_gone() -> None:
    client = RecordingClient(None)
    manager = controller_ref_manager(client, OWNER, REPLICA_SETS, PODS, lambda obj: True)
    with pytest.raises(OwnerGoneError, match="original ns/rs is gone"):
        await manager.claim([pod("orphan")])
    assert [call[0] for call in client.calls] == ["get"]
