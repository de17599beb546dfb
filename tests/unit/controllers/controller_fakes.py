"""Fakes for controller wiring tests: an API that records calls, caches filled by hand, a recorder, a queue."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from kubeloop.client import Conflict, NotFound, Resource
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import ListPage, SharedIndexInformer

Obj = dict[str, Any]


class NoListerWatcher:
    """Informers in these tests are filled by hand; nothing is ever listed or watched."""

    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        raise AssertionError("not used")

    def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        raise AssertionError("not used")


def cache(*objects: Obj) -> SharedIndexInformer:
    informer = SharedIndexInformer(NoListerWatcher(), name="fake")
    for obj in objects:
        informer.indexer.upsert(obj)
    return informer


class FakeApi:
    """Records every call as ``(verb, resource plural, name)``; ``fail`` makes chosen calls raise."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.bodies: list[Mapping[str, Any]] = []
        self.objects: dict[tuple[str, str], Obj] = {}
        self.fail: Callable[[str, str, str], Exception | None] = lambda verb, plural, name: None
        self._names = itertools.count()

    def _record(self, verb: str, resource: Resource | str, name: str, body: Mapping[str, Any] | None = None) -> None:
        plural = resource if isinstance(resource, str) else resource.plural
        self.calls.append((verb, plural, name))
        if body is not None:
            self.bodies.append(body)
        error = self.fail(verb, plural, name)
        if error is not None:
            raise error

    def verbs(self) -> list[tuple[str, str]]:
        return [(verb, plural) for verb, plural, _ in self.calls]

    async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> Obj:
        self._record("get", resource, name)
        plural = resource if isinstance(resource, str) else resource.plural
        found = self.objects.get((plural, name))
        if found is None:
            raise NotFound(code=404, reason="NotFound", message=f"{name} not found")
        return found

    async def create(self, resource: Resource | str, obj: Mapping[str, Any], *, namespace: str | None = None) -> Obj:
        meta = dict(obj["metadata"])
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName', '')}{next(self._names)}"
        self._record("create", resource, meta["name"], obj)
        return {**obj, "metadata": {**meta, "uid": f"uid-{meta['name']}", "resourceVersion": "1"}}

    async def update(self, resource: Resource | str, obj: Mapping[str, Any], *, namespace: str | None = None) -> Obj:
        self._record("update", resource, obj["metadata"]["name"], obj)
        return dict(obj)

    async def update_status(
        self, resource: Resource | str, obj: Mapping[str, Any], *, namespace: str | None = None
    ) -> Obj:
        self._record("update_status", resource, obj["metadata"]["name"], obj)
        return dict(obj)

    async def patch(self, resource: Resource | str, name: str, patch: Mapping[str, Any], **_: Any) -> Obj:
        self._record("patch", resource, name, patch)
        return {"metadata": {"name": name}, **patch}

    async def delete(self, resource: Resource | str, name: str, **_: Any) -> Obj:
        self._record("delete", resource, name)
        return {}


def conflict() -> Conflict:
    return Conflict(code=409, reason="Conflict", message="the object has been modified")


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str, **_: Any) -> None:
        self.events.append((type_, reason, message))

    def reasons(self) -> list[str]:
        return [reason for _, reason, _ in self.events]


class FakeQueue:
    def __init__(self) -> None:
        self.added: list[Request] = []
        self.delayed: list[tuple[Request, float]] = []
        self.requeues = 0

    def add(self, item: Request) -> None:
        self.added.append(item)

    def add_after(self, item: Request, seconds: float) -> None:
        self.delayed.append((item, seconds))

    def num_requeues(self, item: Request) -> int:
        return self.requeues

    def names(self) -> list[str]:
        return sorted({r.name for r in self.added})
