"""Claiming dependents: adopt matching orphans, release owned objects that stopped matching.

A controller (a ReplicaSet for pods, a Deployment for ReplicaSets) owns the objects whose
controller reference points at it. Each sync it *claims* the candidates it sees:

- controlled by someone else -> ignored;
- controlled by us and matching our selector -> claimed;
- controlled by us but no longer matching -> released (our reference removed), unless we are
  being deleted;
- orphan, matching, neither side being deleted, same namespace -> adopted (a controller
  reference to us added), after checking once per sync with a live read that we still exist
  under the same uid and are not being deleted.

Patches are strategic merge patches carrying the dependent's uid as a precondition. A
dependent that vanished meanwhile is skipped; a release that is Invalid is skipped too.

:class:`ControllerRefManager` takes its two writes as callables (tests pass fakes);
:func:`controller_ref_manager` binds them to an API client, the one closure every owner
shares (upstream's ``NewPodControllerRefManager`` / ``NewReplicaSetControllerRefManager`` with
``RecheckDeletionTimestamp``, pkg/controller/controller_ref_manager.go).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from kubeloop.api.errorstatus import status_code
from kubeloop.api.meta import (
    controller_of,
    is_being_deleted,
    metadata,
    name_of,
    namespace_of,
    new_controller_ref,
    uid_of,
)
from kubeloop.client import Resource, is_not_found

Obj = dict[str, Any]


class Claim(enum.Enum):
    CLAIMED = "claimed"
    ADOPT = "adopt"
    RELEASE = "release"
    IGNORE = "ignore"


def claim_decision(owner: Obj, obj: Obj, matches: bool) -> Claim:
    """What to do with one candidate, given whether it matches the owner's selector."""
    ref = controller_of(obj)
    owner_deleting = is_being_deleted(owner)
    if ref is not None:
        if ref.get("uid") != uid_of(owner):
            return Claim.IGNORE
        if matches:
            return Claim.CLAIMED
        return Claim.IGNORE if owner_deleting else Claim.RELEASE
    if owner_deleting or not matches or is_being_deleted(obj) or namespace_of(obj) != namespace_of(owner):
        return Claim.IGNORE
    return Claim.ADOPT


def adopt_patch(owner: Obj, obj: Obj, api_version: str, kind: str) -> Obj:
    return {"metadata": {"ownerReferences": [new_controller_ref(owner, api_version, kind)], "uid": uid_of(obj)}}


def release_patch(owner: Obj, obj: Obj) -> Obj:
    return {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid_of(owner)}], "uid": uid_of(obj)}}


class OwnerGoneError(Exception):
    """Adoption refused: the live owner is gone, replaced, or being deleted."""


class ControllerRefManager:
    """Claims dependents for one owner during one sync.

    ``patch(obj, patch)`` applies a strategic merge patch to a dependent and returns the
    result; ``get_owner()`` reads the owner live (not from a cache) or returns None.
    """

    def __init__(
        self,
        owner: Obj,
        api_version: str,
        kind: str,
        matches: Callable[[Obj], bool],
        patch: Callable[[Obj, Obj], Awaitable[Obj]],
        get_owner: Callable[[], Awaitable[Obj | None]],
    ) -> None:
        self.owner = owner
        self.api_version = api_version
        self.kind = kind
        self._matches = matches
        self._patch = patch
        self._get_owner = get_owner
        self._can_adopt_checked = False

    async def _check_can_adopt(self) -> None:
        if self._can_adopt_checked:
            return
        fresh = await self._get_owner()
        where = f"{namespace_of(self.owner)}/{name_of(self.owner)}"
        if fresh is None or uid_of(fresh) != uid_of(self.owner):
            got = uid_of(fresh) if fresh is not None else ""
            raise OwnerGoneError(f"original {where} is gone: got uid {got}, wanted {uid_of(self.owner)}")
        if is_being_deleted(fresh):
            raise OwnerGoneError(f"{where} has just been deleted at {metadata(fresh).get('deletionTimestamp')}")
        self._can_adopt_checked = True

    async def claim(self, candidates: Iterable[Obj]) -> list[Obj]:
        """Claim every candidate; returns the objects we own afterwards (adopted ones as patched)."""
        claimed: list[Obj] = []
        errors: list[BaseException] = []
        for obj in candidates:
            decision = claim_decision(self.owner, obj, self._matches(obj))
            if decision is Claim.CLAIMED:
                claimed.append(obj)
            elif decision is Claim.ADOPT:
                try:
                    await self._check_can_adopt()
                    claimed.append(await self._patch(obj, adopt_patch(self.owner, obj, self.api_version, self.kind)))
                except OwnerGoneError:
                    raise
                except Exception as exc:
                    if status_code(exc) != 404:
                        errors.append(exc)
            elif decision is Claim.RELEASE:
                try:
                    await self._patch(obj, release_patch(self.owner, obj))
                except Exception as exc:
                    if status_code(exc) not in (404, 422):
                        errors.append(exc)
        if errors:
            raise errors[0]
        return claimed


class ClaimClient(Protocol):
    """What a claim needs of the client: patch a dependent, read the owner (``ApiClient`` fits)."""

    async def get(self, resource: Resource, name: str, /, *, namespace: str | None) -> Obj: ...

    async def patch(self, resource: Resource, name: str, patch: Obj, /, *, patch_type: str,
                    namespace: str | None) -> Obj: ...


def controller_ref_manager(
    client: ClaimClient,
    owner: Obj,
    owner_resource: Resource,
    dependents: Resource,
    matches: Callable[[Obj], bool],
) -> ControllerRefManager:
    """A :class:`ControllerRefManager` for ``owner`` (an object of ``owner_resource``) over its
    ``dependents`` in its namespace: strategic merge patches through ``client``, and a live
    read of the owner (``None`` once it is gone) before the first adoption."""
    namespace = namespace_of(owner)

    async def patch(obj: Obj, body: Obj) -> Obj:
        result: Obj = await client.patch(dependents, name_of(obj), body, patch_type="strategic", namespace=namespace)
        return result

    async def get_owner() -> Obj | None:
        try:
            fresh: Obj = await client.get(owner_resource, name_of(owner), namespace=namespace)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise
        return fresh

    return ControllerRefManager(owner, owner_resource.api_version, owner_resource.kind, matches, patch, get_owner)
