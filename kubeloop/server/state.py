"""What every request handler works with: the store, the registry and the clock.

One :class:`ServerState` exists per running server; handlers receive it explicitly instead of
reaching for globals, so tests can build one around a memory store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from kubeloop.api.meta import format_time, now
from kubeloop.server.auth.authenticator import Authenticator
from kubeloop.server.auth.authorizer import AlwaysAllow, Authorizer
from kubeloop.server.auth.service_accounts import ServiceAccountTokens
from kubeloop.server.metrics import ApiMetrics
from kubeloop.server.registry import Registry, ResourceInfo
from kubeloop.server.storage import ResourceType, Storage, Watcher

Obj = dict[str, Any]


_PODS = ResourceType("", "pods")


@dataclass
class ServerState:
    """The server's shared state; touched only from its event loop."""

    storage: Storage
    registry: Registry
    clock: Callable[[], datetime] = now
    """Source of the current time (timestamps, deadlines); injectable for tests."""
    on_crd_change: list[Callable[[Obj | None, Obj | None], None]] = field(default_factory=list)
    """Called with (old, new) after a CRD is stored or removed, to (re)serve its resources."""
    watchers: set[Watcher] = field(default_factory=set)
    """Open watch streams, closed at shutdown so that no request outlives the server."""
    admin_token: str = ""
    """The bearer token of the cluster administrator (token reviews recognise it)."""
    on_namespace_created: list[Callable[[str], None]] = field(default_factory=list)
    """Called with the name of each namespace just stored (to create its default content)."""
    root_ca: str = ""
    """The cluster CA certificate (PEM) published in every namespace; empty when unknown."""
    metrics: ApiMetrics = field(default_factory=ApiMetrics)
    """This server's Prometheus metrics (``/metrics``)."""
    authenticator: Authenticator | None = None
    """Who sent a request (None until the app is built around a token)."""
    authorizer: Authorizer = field(default_factory=AlwaysAllow)
    """Whether a user other than ``system:masters`` may do what a request asks."""
    service_account_tokens: ServiceAccountTokens | None = None
    """Issues (TokenRequest) and validates service-account tokens; None: no signing key."""
    webhooks: Any = None
    """The admission webhooks' dispatcher (:class:`kubeloop.server.webhook_admission.WebhookAdmission`),
    set by ``build_app``; None: writes call no webhook."""

    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    """Facts derived from stored objects, memoised per server by the modules that compute them,
    each under its own key and together with what it was derived from (for example
    :meth:`Storage.last_change`), so a stale entry is recomputed rather than served."""

    _time_cache: tuple[int, str] = field(default=(-1, ""), init=False, repr=False)

    def now_text(self) -> str:
        """The current time as ``metav1.Time`` (formatted once per second: writes are frequent)."""
        moment = self.clock()
        second = int(moment.timestamp())
        if self._time_cache[0] != second:
            self._time_cache = (second, format_time(moment))
        return self._time_cache[1]

    def read_pod(self, namespace: str, name: str) -> Obj | None:
        """A stored pod (admission rules that look at pods read through this)."""
        return self.storage.get(_PODS, namespace, name)

    def namespace_info(self) -> ResourceInfo:
        info = self.registry.lookup("", "v1", "namespaces")
        assert info is not None, "namespaces are always served"
        return info

    def namespace_created(self, name: str) -> None:
        for callback in self.on_namespace_created:
            callback(name)

    def crd_changed(self, old: Obj | None, new: Obj | None) -> None:
        for callback in self.on_crd_change:
            callback(old, new)


def copy_object(obj: Any) -> Any:
    """A private deep copy of a stored JSON value, safe to mutate."""
    return orjson.loads(orjson.dumps(obj))
