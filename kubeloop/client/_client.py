"""``ApiClient``: the Kubernetes verbs on plain dicts, for any resource.

Every verb takes a :class:`Resource` (or a name such as ``"deploy"`` or
``"widgets.example.com"``, resolved through the built-in table and then discovery) and works
on JSON dicts exactly as the server sends them; bodies may also be passed as ready-encoded
JSON bytes. Single-object calls on namespaced resources use, in order, the ``namespace``
argument, the object's ``metadata.namespace`` and the config's default namespace; list,
watch and delete_collection with no namespace span all namespaces.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import orjson

from kubeloop.client._auth import Authenticator
from kubeloop.client._clock import Clock
from kubeloop.client._config import ClientConfig
from kubeloop.client._discovery import Discovery
from kubeloop.client._errors import Gone, TransportError
from kubeloop.client._metrics import RequestMetrics
from kubeloop.client._resources import Resource
from kubeloop.client._rest import RestCore
from kubeloop.client._transport import Response, Transport
from kubeloop.client._watch import LineSplitter, WatchEvent, decode_event

Body = Mapping[str, Any] | bytes
"""An object to send: a dict, or its JSON encoding."""

PATCH_CONTENT_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
"""Patch type names accepted by :meth:`ApiClient.patch` and the content type each sends."""

_JSON = "application/json"


def _encode(body: Any) -> bytes:
    return body if isinstance(body, bytes) else orjson.dumps(body)


def _metadata(obj: Body) -> Mapping[str, Any]:
    if isinstance(obj, bytes):
        decoded = orjson.loads(obj)
        return decoded.get("metadata") or {} if isinstance(decoded, dict) else {}
    return obj.get("metadata") or {}


def _selectors(query: list[tuple[str, str]], label_selector: str | None, field_selector: str | None) -> None:
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))


def _write_options(dry_run: bool, field_manager: str | None, field_validation: str | None) -> list[tuple[str, str]]:
    query: list[tuple[str, str]] = []
    if dry_run:
        query.append(("dryRun", "All"))
    if field_manager:
        query.append(("fieldManager", field_manager))
    if field_validation:
        query.append(("fieldValidation", field_validation))
    return query


def delete_options(
    propagation_policy: str | None = None,
    grace_period_seconds: int | None = None,
    preconditions: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> dict[str, Any] | None:
    """A ``DeleteOptions`` body, or ``None`` when every option is left at its default."""
    options: dict[str, Any] = {}
    if propagation_policy is not None:
        if propagation_policy not in ("Orphan", "Background", "Foreground"):
            raise ValueError(f"propagation_policy must be Orphan, Background or Foreground, "
                             f"not {propagation_policy!r}")
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        options["preconditions"] = {k: v for k, v in preconditions.items() if k in ("uid", "resourceVersion")}
    if dry_run:
        options["dryRun"] = ["All"]
    if not options:
        return None
    return {"kind": "DeleteOptions", "apiVersion": "v1", **options}


class WatchStream:
    """An open watch: iterate it for :class:`WatchEvent` values; close it when done.

    Ends when the server closes the stream cleanly (its timeout) or when :meth:`close` is
    called (from any task); raises the typed exception of an ``ERROR`` event (e.g.
    :class:`Gone` for a too-old resourceVersion) and :class:`TransportError` when the
    connection breaks. ``resource_version`` is that of the last event seen, bookmarks
    included: the point to resume from.
    """

    def __init__(self, client: ApiClient, resource: Resource | str, namespace: str | None,
                 query: list[tuple[str, str]], resource_version: str | None):
        self._client = client
        self._resource = resource
        self._namespace = namespace
        self._query = query
        self._events: AsyncGenerator[WatchEvent, None] | None = None
        self._response: Response | None = None
        self._closed = False
        self.resource_version = resource_version

    def _seen(self, event: WatchEvent) -> WatchEvent:
        rv = (event.object.get("metadata") or {}).get("resourceVersion")
        if rv:
            self.resource_version = rv
        return event

    async def _run(self) -> AsyncGenerator[WatchEvent, None]:
        if self._closed:
            return
        res = await self._client.resource(self._resource)
        path = res.path(self._namespace if res.namespaced else None)
        response = self._response = await self._client.send("GET", path, query=self._query, stream=True)
        splitter = LineSplitter()
        try:
            async for chunk in response.iter_chunks():
                for line in splitter.feed(chunk):
                    yield self._seen(decode_event(line))
            rest = splitter.finish()
            if rest is not None:
                yield self._seen(decode_event(rest))
        except TransportError:
            if not self._closed:
                raise
        finally:
            response.close()

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        if self._events is None:
            self._events = self._run()
        return self._events

    async def close(self) -> None:
        """Stop the watch and release its connection (idempotent, callable from any task)."""
        if self._closed:
            return
        self._closed = True
        if self._response is not None:
            self._response.close()
        # A generator running in another task cannot be closed from here; closing the
        # response above makes it finish on its own.
        if self._events is not None and not getattr(self._events, "ag_running", False):
            await self._events.aclose()

    async def __aenter__(self) -> WatchStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()


class ApiClient(RestCore):
    """Async client for one Kubernetes API server; use as ``async with ApiClient(config)``.

    ``transport`` swaps the HTTP layer (tests use :class:`MockTransport`), ``authenticator``
    the credential source, ``metrics`` receives one observation per HTTP attempt, ``clock``
    drives rate limiting, back-off and credential expiry.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: Transport | None = None,
        authenticator: Authenticator | None = None,
        metrics: RequestMetrics | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(config, transport=transport, authenticator=authenticator, metrics=metrics, clock=clock)
        self.discovery = Discovery(self, clock=self._clock)

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def resource(self, name: str | Resource) -> Resource:
        """Resolve ``"deploy"``, ``"Deployment"``, ``"deployments.apps"``, a CRD plural...
        (built-in table first, then discovery); a :class:`Resource` is returned as is."""
        if isinstance(name, Resource):
            return name
        return await self.discovery.resolve(name)

    def _namespace(self, resource: Resource, namespace: str | None, obj: Body | None = None) -> str | None:
        if not resource.namespaced:
            return None
        if namespace:
            return namespace
        if obj is not None:
            from_obj = _metadata(obj).get("namespace")
            if from_obj:
                return str(from_obj)
        return self.config.namespace

    async def get_version(self) -> dict[str, Any]:
        """``GET /version``."""
        return await self.request_json("GET", "/version")

    async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None,
                  subresource: str | None = None) -> dict[str, Any]:
        """Read one object (or one of its subresources)."""
        res = await self.resource(resource)
        return await self.request_json("GET", res.path(self._namespace(res, namespace), name, subresource))

    async def list_pages(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = 500,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield the list one page (a ``<Kind>List`` dict) at a time, following ``continue``."""
        res = await self.resource(resource)
        path = res.path(namespace if res.namespaced else None)
        base: list[tuple[str, str]] = []
        _selectors(base, label_selector, field_selector)
        if resource_version is not None:
            base.append(("resourceVersion", resource_version))
        if resource_version_match:
            base.append(("resourceVersionMatch", resource_version_match))
        if limit:
            base.append(("limit", str(limit)))
        token = ""
        while True:
            query = base if not token else [*_without_rv(base), ("continue", token)]
            page = await self.request_json("GET", path, query=query)
            yield page
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                return

    async def list(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = 500,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> dict[str, Any]:
        """The whole list as one ``<Kind>List`` dict whose ``metadata.resourceVersion`` is the
        list's (the point to watch from). Fetched in pages of ``limit``; if a continue token
        expires mid-way (410), the list is fetched again in one unpaginated request, as
        client-go's pager does."""
        items: list[Any] = []
        result: dict[str, Any] = {}
        try:
            async for page in self.list_pages(resource, namespace=namespace, label_selector=label_selector,
                                              field_selector=field_selector, limit=limit,
                                              resource_version=resource_version,
                                              resource_version_match=resource_version_match):
                items.extend(page.get("items") or [])
                result = page
        except Gone:
            if not result:
                raise
            return await self.list(resource, namespace=namespace, label_selector=label_selector,
                                   field_selector=field_selector, limit=None, resource_version=resource_version,
                                   resource_version_match=resource_version_match)
        metadata = dict(result.get("metadata") or {})
        metadata.pop("continue", None)
        metadata.pop("remainingItemCount", None)
        return {**result, "metadata": metadata, "items": items}

    async def create(self, resource: Resource | str, obj: Body, *, namespace: str | None = None,
                     subresource: str | None = None, dry_run: bool = False, field_manager: str | None = None,
                     field_validation: str | None = None) -> dict[str, Any]:
        """POST a new object (``subresource`` for e.g. ``pods/{name}/eviction``: pass the
        name in the body's metadata)."""
        res = await self.resource(resource)
        ns = self._namespace(res, namespace, obj)
        if subresource:
            path = res.path(ns, str(_metadata(obj).get("name") or ""), subresource)
        else:
            path = res.path(ns)
        return await self.request_json("POST", path, query=_write_options(dry_run, field_manager, field_validation),
                                       body=_encode(obj), content_type=_JSON)

    async def update(self, resource: Resource | str, obj: Body, *, namespace: str | None = None,
                     subresource: str | None = None, dry_run: bool = False, field_manager: str | None = None,
                     field_validation: str | None = None) -> dict[str, Any]:
        """PUT an object (its ``metadata.resourceVersion``, if set, is the precondition)."""
        res = await self.resource(resource)
        name = str(_metadata(obj).get("name") or "")
        path = res.path(self._namespace(res, namespace, obj), name, subresource)
        return await self.request_json("PUT", path, query=_write_options(dry_run, field_manager, field_validation),
                                       body=_encode(obj), content_type=_JSON)

    async def update_status(self, resource: Resource | str, obj: Body, *, namespace: str | None = None,
                            dry_run: bool = False, field_manager: str | None = None) -> dict[str, Any]:
        """PUT to the ``status`` subresource."""
        return await self.update(resource, obj, namespace=namespace, subresource="status", dry_run=dry_run,
                                 field_manager=field_manager)

    async def patch(
        self,
        resource: Resource | str,
        name: str,
        patch: Mapping[str, Any] | Sequence[Any] | bytes,
        *,
        patch_type: str = "merge",
        namespace: str | None = None,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: str | None = None,
    ) -> dict[str, Any]:
        """PATCH an object: ``patch_type`` is ``json`` (a list of operations), ``merge``,
        ``strategic`` or ``apply`` (server-side apply; needs ``field_manager``, ``force``
        takes over conflicting fields)."""
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"patch_type must be one of {', '.join(PATCH_CONTENT_TYPES)}, not {patch_type!r}")
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        if force is not None and patch_type != "apply":
            raise ValueError("force is only valid for server-side apply")
        res = await self.resource(resource)
        query = _write_options(dry_run, field_manager, field_validation)
        if force is not None:
            query.append(("force", "true" if force else "false"))
        path = res.path(self._namespace(res, namespace), name, subresource)
        return await self.request_json("PATCH", path, query=query, body=_encode(patch), content_type=content_type)

    async def delete(
        self,
        resource: Resource | str,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """DELETE one object; returns what the server answers (the object while finalizers
        or graceful deletion hold it, else a Success Status)."""
        res = await self.resource(resource)
        options = delete_options(propagation_policy, grace_period_seconds, preconditions, dry_run)
        path = res.path(self._namespace(res, namespace), name)
        if options is None:
            return await self.request_json("DELETE", path)
        return await self.request_json("DELETE", path, body=orjson.dumps(options), content_type=_JSON)

    async def delete_collection(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """DELETE every matching object of a collection; returns the deleted objects' list."""
        res = await self.resource(resource)
        query: list[tuple[str, str]] = []
        _selectors(query, label_selector, field_selector)
        options = delete_options(propagation_policy, grace_period_seconds, None, dry_run)
        path = res.path(namespace if res.namespaced else None)
        if options is None:
            return await self.request_json("DELETE", path, query=query)
        return await self.request_json("DELETE", path, query=query, body=orjson.dumps(options),
                                       content_type=_JSON)

    async def get_scale(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Read the ``autoscaling/v1`` Scale of a scalable object."""
        return await self.get(resource, name, namespace=namespace, subresource="scale")

    async def update_scale(self, resource: Resource | str, name: str, scale: int | Mapping[str, Any], *,
                           namespace: str | None = None) -> dict[str, Any]:
        """Set replicas through the scale subresource: ``scale`` is a Scale dict (its
        resourceVersion is a precondition) or just the replica count (unconditional)."""
        res = await self.resource(resource)
        ns = self._namespace(res, namespace)
        if isinstance(scale, int):
            metadata: dict[str, Any] = {"name": name}
            if ns:
                metadata["namespace"] = ns
            body: Mapping[str, Any] = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata,
                                       "spec": {"replicas": scale}}
        else:
            body = scale
        return await self.request_json("PUT", res.path(ns, name, "scale"), body=orjson.dumps(body),
                                       content_type=_JSON)

    async def patch_scale(self, resource: Resource | str, name: str, patch: Mapping[str, Any] | Sequence[Any],
                          *, patch_type: str = "merge", namespace: str | None = None) -> dict[str, Any]:
        """PATCH the scale subresource, e.g. ``{"spec": {"replicas": 3}}``."""
        return await self.patch(resource, name, patch, patch_type=patch_type, namespace=namespace,
                                subresource="scale")

    def watch(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
        send_initial_events: bool | None = None,
        resource_version_match: str | None = None,
    ) -> WatchStream:
        """A watch stream (the request is sent on first iteration): ``async for event in
        client.watch(...)``, or ``async with client.watch(...) as events`` to close it early.

        ``resource_version`` is where to start (``None``: current state as ADDED events,
        then changes); ``timeout_seconds`` asks the server to end the stream cleanly after
        that long.
        """
        query: list[tuple[str, str]] = [("watch", "true")]
        _selectors(query, label_selector, field_selector)
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if resource_version_match:
            query.append(("resourceVersionMatch", resource_version_match))
        if allow_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if send_initial_events is not None:
            query.append(("sendInitialEvents", "true" if send_initial_events else "false"))
        if timeout_seconds is not None:
            query.append(("timeoutSeconds", str(timeout_seconds)))
        return WatchStream(self, resource, namespace, query, resource_version)


def _without_rv(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    # A continue token carries its own resourceVersion; the server rejects both together.
    return [(k, v) for k, v in query if k not in ("resourceVersion", "resourceVersionMatch")]
