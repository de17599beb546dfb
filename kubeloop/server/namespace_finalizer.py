"""The server's namespace controller: empties terminating namespaces, then lets them go.

Upstream, kube-controller-manager's namespace controller (``pkg/controller/namespace``) does
this; the embedded cluster must work with ``kubeloop server`` alone, so here it is a
background asyncio task of the server (started and stopped with
:class:`kubeloop.server.app.KubeServer`). For each namespace with a ``deletionTimestamp`` it:

1. makes sure ``status.phase`` is ``Terminating``;
2. deletes the content (:func:`kubeloop.server.namespace_content.delete_content`), in chunks
   that yield to the event loop;
3. writes the deletion conditions (:mod:`kubeloop.server.namespace_conditions`);
4. when nothing remains, removes the ``kubernetes`` token from ``spec.finalizers`` through the
   ``finalize`` path, which deletes the namespace once no finalizer is left.

What remains (pods in their grace period, objects held by finalizers) is re-checked every
``retry_seconds`` (upstream waits half its estimate plus one second). All progress lives in
the store: at start every namespace found terminating is picked up again, so a server killed
mid-way finishes the job after a restart.

The same task keeps each live namespace's default content (:mod:`kubeloop.server.namespace_defaults`):
a deleted ``default`` ServiceAccount or ``kube-root-ca.crt`` ConfigMap comes back, and so does
changed CA data. It learns of changes from store watches, as upstream's controllers do from
informers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from kubeloop.api.status import ApiError
from kubeloop.server.namespace_conditions import updated_conditions
from kubeloop.server.namespace_content import CHUNK_SIZE, delete_content
from kubeloop.server.namespace_defaults import (
    DEFAULT_SERVICE_ACCOUNT,
    ROOT_CA_CONFIGMAP,
    ensure_all_namespace_defaults,
    ensure_namespace_defaults,
)
from kubeloop.server.namespace_lifecycle import KUBERNETES_FINALIZER, is_terminating, spec_finalizers, without_finalizer
from kubeloop.server.objects import update_object
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import ResourceType, Watcher, WatchEvent

log = logging.getLogger(__name__)

Obj = dict[str, Any]

RETRY_SECONDS = 1.0
_NAMESPACES = ResourceType("", "namespaces")
_SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")
_CONFIG_MAPS = ResourceType("", "configmaps")


class NamespaceFinalizer:
    """The background task; ``start`` and ``stop`` from the server's event loop."""

    def __init__(self, state: ServerState, *, retry_seconds: float = RETRY_SECONDS, chunk: int = CHUNK_SIZE) -> None:
        self.state = state
        self.retry_seconds = retry_seconds
        self.chunk = chunk
        self._due: dict[str, float] = {}
        """Terminating namespaces -> loop time of their next pass."""
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._watchers: list[Watcher] = []

    def start(self) -> None:
        """Resume every terminating namespace, repair default content, and follow changes."""
        state = self.state
        revision = state.storage.revision
        # Watches start at the revision the listing below sees: no change falls in between.
        follows: list[tuple[ResourceType, Callable[[WatchEvent], None]]] = [
            (_NAMESPACES, self._on_namespace), (_SERVICE_ACCOUNTS, self._on_service_account),
            (_CONFIG_MAPS, self._on_config_map)]
        for rt, handle in follows:
            watcher = state.storage.watch(rt, None, revision)
            self._watchers.append(watcher)
            self._tasks.append(asyncio.create_task(self._follow(watcher, handle), name=f"namespaces-follow-{rt}"))
        namespaces, _, _ = state.storage.list(_NAMESPACES, None)
        for namespace in namespaces:
            if is_terminating(namespace):
                self.enqueue(namespace["metadata"]["name"])
        ensure_all_namespace_defaults(state)
        self._tasks.append(asyncio.create_task(self._run(), name="namespace-finalizer"))

    async def stop(self) -> None:
        for watcher in self._watchers:
            watcher.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self._watchers.clear()

    def enqueue(self, name: str) -> None:
        """Have ``name`` looked at now."""
        self._due[name] = 0.0
        self._wake.set()

    @property
    def pending(self) -> list[str]:
        """Namespaces still being finalized (for tests and diagnostics)."""
        return sorted(self._due)

    # Watches.

    async def _follow(self, watcher: Watcher, handle: Callable[[WatchEvent], None]) -> None:
        async for event in watcher:
            try:
                handle(event)
            except Exception:
                log.exception("namespace controller: handling %s event failed", event.type)

    def _on_namespace(self, event: WatchEvent) -> None:
        if event.type != "DELETED" and is_terminating(event.object):
            self.enqueue(event.object["metadata"]["name"])

    def _on_service_account(self, event: WatchEvent) -> None:
        self._on_default_content(event, DEFAULT_SERVICE_ACCOUNT)

    def _on_config_map(self, event: WatchEvent) -> None:
        self._on_default_content(event, ROOT_CA_CONFIGMAP)

    def _on_default_content(self, event: WatchEvent, wanted: str) -> None:
        meta = event.object["metadata"]
        if meta["name"] == wanted and event.type != "ADDED":
            ensure_namespace_defaults(self.state, meta.get("namespace") or "")

    # The finalizing loop.

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            now = loop.time()
            for name in sorted(n for n, due in self._due.items() if due <= now):
                self._due[name] = now + self.retry_seconds
                try:
                    done = await self.sync(name)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("namespace controller: finalizing %s failed", name)
                    done = False
                if done and self._due.get(name, 0.0) > now:
                    # Not re-enqueued meanwhile (enqueue sets 0): finished.
                    del self._due[name]
            if self._due:
                timeout = max(0.0, min(self._due.values()) - loop.time())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
            else:
                await self._wake.wait()

    async def sync(self, name: str) -> bool:
        """One pass over namespace ``name``; True when there is nothing more to do for it."""
        state = self.state
        info = state.namespace_info()
        namespace = state.storage.get(_NAMESPACES, "", name)
        if namespace is None or not is_terminating(namespace):
            return True
        if (namespace.get("status") or {}).get("phase") != "Terminating":
            marked = copy_object(namespace)
            marked.setdefault("status", {})["phase"] = "Terminating"
            namespace = update_object(state, info, marked, namespace, status=True, dry_run=False)
        if KUBERNETES_FINALIZER not in spec_finalizers(namespace):
            return True
        uid = namespace["metadata"].get("uid")
        estimate, report = await delete_content(state, namespace, self.chunk)
        namespace = state.storage.get(_NAMESPACES, "", name)
        if namespace is None or namespace["metadata"].get("uid") != uid:
            return True
        conditions = updated_conditions(list((namespace.get("status") or {}).get("conditions") or []), report,
                                        state.now_text())
        if conditions is not None:
            written = copy_object(namespace)
            written.setdefault("status", {})["conditions"] = conditions
            try:
                namespace = update_object(state, info, written, namespace, status=True, dry_run=False)
            except ApiError as error:
                log.warning("namespace controller: could not update the conditions of %s: %s", name, error)
        if report.errors or report.remaining or estimate > 0:
            return False
        finalized = copy_object(namespace)
        finalized.setdefault("spec", {})["finalizers"] = without_finalizer(spec_finalizers(namespace),
                                                                           KUBERNETES_FINALIZER)
        update_object(state, info, finalized, namespace, status=False, dry_run=False, finalize=True)
        return True
