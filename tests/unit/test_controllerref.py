from typing import Any

import pytest

from kubeloop.runtime.controllerref import Claim, ControllerRefManager, OwnerGoneError, claim_decision

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
