"""Informers over ``kubeloop.client``: the list/watch adapter and the shared factory.

:class:`SharedInformerFactory` hands out one informer per (resource, namespace, selectors),
so every controller of a manager shares the same cache and the same watch connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.client import ApiClient, ApiException, Resource
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.informers.informer import SharedIndexInformer, wait_for_cache_sync
from kubeloop.runtime.informers.listdecode import decode_list
from kubeloop.runtime.informers.listwatch import ListPage
from kubeloop.runtime.informers.reflector import Transform
from kubeloop.runtime.informers.store import IndexFunc

Obj = dict[str, Any]


class ClientListerWatcher:
    """Lists and watches one collection through an :class:`ApiClient`."""

    def __init__(
        self,
        client: ApiClient,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self._client = client
        self._resource = resource
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector

    def _selectors(self) -> list[tuple[str, str]]:
        query: list[tuple[str, str]] = []
        if self._label_selector:
            query.append(("labelSelector", self._label_selector))
        if self._field_selector:
            query.append(("fieldSelector", self._field_selector))
        return query

    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        resource = await self._client.resource(self._resource)
        query = self._selectors()
        if continue_token:
            query.append(("continue", continue_token))
        elif resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if limit:
            query.append(("limit", str(limit)))
        path = resource.path(self._namespace if resource.namespaced else None)
        body = await self._client.request("GET", path, query=query)
        try:
            # Items are decoded one by one as the reflector takes them (see listdecode).
            page = decode_list(body)
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise ApiException(code=500, reason="InternalError",
                               message=f"GET {path}: the server sent an invalid list: {exc}") from exc
        meta = page.envelope.get("metadata") or {}
        return ListPage(page, str(meta.get("resourceVersion") or ""), str(meta.get("continue") or "") or None)

    async def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        stream = self._client.watch(
            self._resource,
            namespace=self._namespace,
            resource_version=resource_version,
            label_selector=self._label_selector,
            field_selector=self._field_selector,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
        )
        async with stream:
            async for event in stream:
                yield event.type, event.object


@dataclass(frozen=True)
class InformerKey:
    group: str
    version: str
    plural: str
    namespace: str | None
    label_selector: str | None
    field_selector: str | None


class SharedInformerFactory:
    """One informer per collection and selector set, shared by everybody who asks for it."""

    def __init__(
        self,
        client: ApiClient,
        *,
        resync_period: float = 0.0,
        namespace: str | None = None,
        clock: Clock = REAL_CLOCK,
        detect_mutations: bool | None = None,
        lister_watcher: Callable[..., Any] = ClientListerWatcher,
        transform: Transform | None = None,
        share_subtrees: bool = True,
    ) -> None:
        """``transform`` and ``share_subtrees`` apply to every informer made here (see
        :class:`SharedIndexInformer`)."""
        self.client = client
        self.resync_period = resync_period
        self.namespace = namespace
        self._clock = clock
        self._detect_mutations = detect_mutations
        self._lister_watcher = lister_watcher
        self._transform = transform
        self._share_subtrees = share_subtrees
        self._informers: dict[InformerKey, SharedIndexInformer] = {}
        self._started: set[InformerKey] = set()

    async def informer_for(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        resync_period: float | None = None,
    ) -> SharedIndexInformer:
        """The shared informer for this collection, created on first request.

        ``namespace`` defaults to the factory's (None: all namespaces). Indexers asked for by
        later callers are added to the existing informer (their names must not clash).
        """
        res = await self.client.resource(resource)
        ns = namespace if namespace is not None else self.namespace
        key = InformerKey(res.group, res.version, res.plural, ns, label_selector, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            lw = self._lister_watcher(
                self.client, res, namespace=ns, label_selector=label_selector, field_selector=field_selector
            )
            informer = SharedIndexInformer(
                lw,
                name=res.group_resource if ns is None else f"{res.group_resource}/{ns}",
                resync_period=self.resync_period if resync_period is None else resync_period,
                indexers=indexers,
                clock=self._clock,
                detect_mutations=self._detect_mutations,
                transform=self._transform,
                share_subtrees=self._share_subtrees,
            )
            self._informers[key] = informer
        elif indexers:
            missing = {n: f for n, f in indexers.items() if n not in informer.indexer.indexer_names()}
            if missing:
                informer.add_indexers(missing)
        return informer

    def informers(self) -> list[SharedIndexInformer]:
        return list(self._informers.values())

    async def start(self) -> None:
        """Start every informer not started yet (later requests need another ``start``)."""
        for key, informer in self._informers.items():
            if key not in self._started:
                self._started.add(key)
                await informer.start()

    def has_synced(self) -> bool:
        return all(i.has_synced() for k, i in self._informers.items() if k in self._started)

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """True once every started informer has synced; False if ``timeout`` passed first."""
        try:
            async with asyncio.timeout(timeout):
                await wait_for_cache_sync(self.has_synced)
        except TimeoutError:
            return False
        return True

    async def shutdown(self) -> None:
        """Stop every informer this factory made, however it was started (controllers start theirs)."""
        failure: BaseException | None = None
        for informer in list(self._informers.values()):
            try:
                await informer.stop()
            except Exception as exc:  # a mutation found in one cache must not leave the others running
                failure = failure or exc
        self._started.clear()
        if failure is not None:
            raise failure
