"""The HTTPS application: authentication, error mapping, bootstrap and lifecycle.

:class:`KubeServer` opens the store, serves the built-in kinds and every stored CRD (plus the
CloneSet CRD when its manifest is available), creates the default namespaces and the bootstrap
RBAC policy, and answers over HTTPS; requests are authorized by RBAC (``authorization_mode``),
so anonymous users reach only what the bootstrap policy grants them (the health and version
paths). Every error leaves as a ``Status``; an
unexpected exception is logged and answered as a 500 ``InternalError`` Status, never as a
stack trace.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from kubeloop.api import kruise
from kubeloop.api.status import ApiError, internal_error
from kubeloop.server import crd, protocol_errors
from kubeloop.server.admission import BUILTIN_RULES
from kubeloop.server.admission.cloneset import cloneset_rules
from kubeloop.server.auth import impersonation
from kubeloop.server.auth.attributes import PUBLIC_INFO_PATHS, RequestAttributes, forbidden, request_attributes
from kubeloop.server.auth.authenticator import Authenticator
from kubeloop.server.auth.authorizer import AlwaysAllow, Authorizer
from kubeloop.server.auth.rbac.bootstrap import ensure_rbac_policy
from kubeloop.server.auth.rbac.resolver import RBACAuthorizer
from kubeloop.server.auth.service_accounts import ServiceAccountTokens
from kubeloop.server.auth.user import CURRENT_USER, USER_KEY, UserInfo
from kubeloop.server.builtins import BUILTIN_RESOURCES, DEFAULT_NAMESPACES
from kubeloop.server.certs import (
    KUBECONFIG_FILE,
    Credentials,
    ensure_credentials,
    load_service_account_key,
    server_url,
    write_kubeconfig,
)
from kubeloop.server.codec.serving import error_body
from kubeloop.server.compression import compress_response
from kubeloop.server.connection_limits import HEADER_TIMEOUT, IDLE_TIMEOUT, ConnectionLimits
from kubeloop.server.crds import BUILTIN_CRDS
from kubeloop.server.discovery import VERSION_INFO
from kubeloop.server.dispatch import dispatch
from kubeloop.server.http2 import ALPN_PROTOCOLS, AlpnSwitch, Http2Server
from kubeloop.server.kinds import upstream
from kubeloop.server.mandatory import mandatory_objects
from kubeloop.server.metrics import metrics_response, stored_object_counts
from kubeloop.server.namespace_defaults import ensure_namespace_defaults
from kubeloop.server.namespace_finalizer import NamespaceFinalizer
from kubeloop.server.objects import create_object
from kubeloop.server.openapi import OpenAPIService
from kubeloop.server.openapi import http as openapi_http
from kubeloop.server.private_files import private_directory
from kubeloop.server.registry import Registry
from kubeloop.server.requests import MAX_BODY_BYTES
from kubeloop.server.services.kubernetes_service import ensure_kubernetes_service
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import DEFAULT_WATCH_CACHE_SIZE, ResourceType, Storage
from kubeloop.server.webhook_admission import WebhookAdmission

log = logging.getLogger(__name__)

PUBLIC_PATHS = PUBLIC_INFO_PATHS
_STATE_KEY = web.AppKey("state", ServerState)
_OPENAPI_KEY = web.AppKey("openapi", OpenAPIService)
_READY_KEY: web.AppKey[Callable[[], bool] | None] = web.AppKey("ready_check")


@dataclass(frozen=True)
class ServerConfig:
    """How to run the server."""

    data_dir: Path
    """Holds the database (unless ``memory``), credentials and the kubeconfig."""
    host: str = "127.0.0.1"
    """Address to bind; loopback by default."""
    port: int = 6443
    """TCP port; 0 picks a free one."""
    memory: bool = False
    """Keep objects in memory only (a throwaway cluster)."""
    watch_cache_size: int = DEFAULT_WATCH_CACHE_SIZE
    """Changes kept per resource type for watches; older resourceVersions get 410."""
    ready_check: Callable[[], bool] | None = None
    """Extra readiness: ``/readyz`` answers 500 while it returns False (``kubeloop up`` passes
    "every controller's caches have synced"; the server itself knows nothing of controllers)."""
    client_cert: bool = False
    """The kubeconfig written to ``data_dir`` carries an admin client certificate, not the token."""
    authorization_mode: str = "RBAC"
    """``RBAC`` (kube-apiserver's default here) or ``AlwaysAllow`` (``--authorization-mode``)."""
    kruise_admission: bool = True
    """Run OpenKruise's admission in-process (CloneSet defaults and validation, the pods' launch
    priority barrier). ``False`` is a kube-apiserver without them, as in a real cluster, where
    ``kubeloop webhook`` (:mod:`kubeloop.webhook`) does them when its configurations exist."""


AUTHORIZATION_MODES = ("RBAC", "AlwaysAllow")


def build_authorizer(mode: str, storage: Storage) -> Authorizer:
    """The authorizer of ``--authorization-mode``; ValueError for an unknown mode."""
    if mode == "RBAC":
        return RBACAuthorizer(storage)
    if mode == "AlwaysAllow":
        return AlwaysAllow()
    raise ValueError(f"unknown authorization mode {mode!r} (known: {', '.join(AUTHORIZATION_MODES)})")


def error_response(error: ApiError, accept: str | None = None) -> web.Response:
    """``error``'s Status in the media type ``accept`` allows (JSON, YAML or protobuf, see
    :func:`kubeloop.server.codec.serving.error_body`)."""
    body, content_type = error_body(error.status(), accept)
    return web.Response(body=body, status=error.code, content_type=content_type, headers=error.headers or None)


def _peer_certificate(request: web.Request) -> bytes | None:
    """The DER bytes of the client's TLS certificate, if it sent one: the handshake verified it
    against the cluster CA (``CERT_OPTIONAL``). The same for HTTP/1.1 and HTTP/2, whose
    requests both carry the connection's TLS transport."""
    transport = request.transport
    ssl_object = None if transport is None else transport.get_extra_info("ssl_object")
    if not isinstance(ssl_object, ssl.SSLObject):
        return None
    return ssl_object.getpeercert(binary_form=True)


@web.middleware
async def _api_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        # A credential must authenticate (401); no credential is system:anonymous. Then the
        # authorizer decides (403), except for system:masters (see kubeloop.server.auth).
        state = request.app[_STATE_KEY]
        assert state.authenticator is not None, "build_app sets it"
        user = state.authenticator.authenticate(request.headers.get("Authorization"), _peer_certificate(request))
        asked = impersonation.requested(request.headers)
        if asked is not None:
            authorizer = state.authorizer

            def allowed(requester: UserInfo, attributes: RequestAttributes) -> tuple[bool, str]:
                decision = authorizer.authorize(requester, attributes)
                return decision.allowed, decision.reason

            user = impersonation.impersonate(user, asked, allowed)
        if not user.privileged:
            attributes = request_attributes(request.method, request.path, request.query)
            decision = state.authorizer.authorize(user, attributes)
            if not decision.allowed:
                raise forbidden(user.username, attributes, decision.reason)
        request[USER_KEY] = user
        reset = CURRENT_USER.set(user)
        try:
            response: web.StreamResponse = await handler(request)
        finally:
            CURRENT_USER.reset(reset)
        return response
    except ApiError as error:
        return error_response(error, request.headers.get("Accept"))
    except web.HTTPException:
        raise
    except ConnectionError as error:
        # The client went away mid-answer (a reset, a closed transport): routine, and there is
        # no one left to answer.
        log.debug("client left during %s %s: %s", request.method, request.path_qs, error)
        raise
    except Exception as error:
        log.exception("unexpected error serving %s %s", request.method, request.path_qs)
        return error_response(internal_error(type(error).__name__), request.headers.get("Accept"))


async def _handle(request: web.Request) -> web.StreamResponse:
    path = request.path
    if path == "/readyz":
        check = request.app[_READY_KEY]
        if check is not None and not check():
            body = "[+]ping ok\n[-]controllers failed: reason withheld\nreadyz check failed\n"
            return web.Response(status=500, text=body, content_type="text/plain")
        return web.Response(text="ok", content_type="text/plain")
    if path in ("/healthz", "/livez"):
        return web.Response(text="ok", content_type="text/plain")
    if path in ("/version", "/version/"):
        # Upstream writes /version with WriteRawJSON: indented by two spaces, no final newline.
        return web.Response(body=orjson.dumps(VERSION_INFO, option=orjson.OPT_INDENT_2),
                            content_type="application/json")
    if path == "/metrics":
        if request.method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        return metrics_response(request.app[_STATE_KEY].metrics)
    if openapi_http.is_openapi_path(path):
        if request.method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        service = request.app[_OPENAPI_KEY]
        openapi_http.refresh(service, request.app[_STATE_KEY])
        return openapi_http.openapi_response(service, path, request.headers.get("Accept"),
                                             request.headers.get("If-None-Match"), request.query.get("hash"))
    # Only API answers are compressed (upstream's SerializeObject); see kubeloop.server.compression.
    return compress_response(request, await dispatch(request.app[_STATE_KEY], request))


def _no_create_mutation(obj: dict[str, Any]) -> None:
    del obj


def build_registry(storage: Storage, kruise_admission: bool = True) -> Registry:
    """The kinds one server serves, each with its admission rules: the built-ins', and the
    CloneSet's, whose ``podsToDelete`` check reads this server's pods.

    Without ``kruise_admission``, CloneSets get only the generic rules and pods no launch
    priority barrier (see :attr:`ServerConfig.kruise_admission`).
    """
    pods = ResourceType("", "pods")

    def read_pod(namespace: str, name: str) -> dict[str, Any] | None:
        return storage.get(pods, namespace, name)

    if kruise_admission:
        rules = {**BUILTIN_RULES, (kruise.GROUP, kruise.CLONESET_KIND): cloneset_rules(read_pod)}
    else:
        pod_rules = replace(BUILTIN_RULES[("", "Pod")], mutate_on_create=_no_create_mutation)
        rules = {**BUILTIN_RULES, ("", "Pod"): pod_rules}
    registry = Registry(rules)
    registry.add_all(BUILTIN_RESOURCES)
    return registry


def bootstrap(state: ServerState) -> None:
    """Default namespaces, the mandatory configuration objects (:mod:`.mandatory`), the bootstrap
    RBAC policy (:mod:`.auth.rbac.bootstrap`, reconciled) and built-in CRDs exist from the start
    (each created only when missing).

    Namespaces created from now on get their default content (``default`` ServiceAccount,
    ``kube-root-ca.crt``) as they are stored.
    """
    state.on_namespace_created.append(lambda name: ensure_namespace_defaults(state, name))
    namespaces = state.namespace_info()
    for name in DEFAULT_NAMESPACES:
        if state.storage.get(namespaces.resource_type, "", name) is None:
            create_object(state, namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                          dry_run=False)
    for group, version, resource, body in mandatory_objects():
        info = state.registry.lookup(group, version, resource)
        if info is not None and state.storage.get(info.resource_type, "", body["metadata"]["name"]) is None:
            create_object(state, info, body, dry_run=False)
    ensure_rbac_policy(state)
    crd_info = state.registry.lookup(crd.GROUP, "v1", "customresourcedefinitions")
    if crd_info is None:
        return
    for manifest in BUILTIN_CRDS:
        name = str(manifest.get("metadata", {}).get("name", ""))
        if state.storage.get(crd_info.resource_type, "", name) is None:
            create_object(state, crd_info, copy_object(manifest), dry_run=False)


def build_app(state: ServerState, token: str, ready_check: Callable[[], bool] | None = None) -> web.Application:
    """The application serving ``state``; ``token`` authenticates the administrator (unless the
    state already has an authenticator of its own)."""
    app = web.Application(middlewares=[_api_middleware], client_max_size=MAX_BODY_BYTES)
    app[_STATE_KEY] = state
    app[_READY_KEY] = ready_check
    if state.authenticator is None:
        tokens = state.service_account_tokens
        state.authenticator = Authenticator(token, None if tokens is None else tokens.validator)
    app[_OPENAPI_KEY] = OpenAPIService()
    state.metrics.object_counts = lambda: stored_object_counts(state.registry, state.storage)
    # `[\s\S]` rather than `.`: a decoded path may hold a newline, which `.` does not match.
    app.router.add_route("*", "/{tail:[\\s\\S]*}", _handle)

    async def close_watches(_: web.Application) -> None:
        for watcher in list(state.watchers):
            watcher.close()

    app.on_shutdown.append(close_watches)
    if state.webhooks is None:
        state.webhooks = WebhookAdmission(state.storage, state.registry)

    async def close_webhook_client(_: web.Application) -> None:
        await state.webhooks.close()

    app.on_cleanup.append(close_webhook_client)
    return app


class KubeServer:
    """One running API server; ``start`` and ``stop`` from the same event loop."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.state: ServerState | None = None
        self.credentials: Credentials | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._protocols: set[RequestHandler] = set()
        self.http2: Http2Server | None = None
        """The HTTP/2 connections (and how many requests they answered) while serving."""
        self.port = config.port
        self.namespace_finalizer: NamespaceFinalizer | None = None
        self.connection_limits: ConnectionLimits | None = None

    def _track(self, protocol: RequestHandler) -> None:
        """Remember a connection so that ``stop`` can abort it (handlers are not weak-referenceable)."""
        if len(self._protocols) >= 256:
            self._protocols = {p for p in self._protocols if p.transport is not None}
        self._protocols.add(protocol)

    @property
    def url(self) -> str:
        return server_url(self.config.host, self.port)

    @property
    def kubeconfig_path(self) -> Path:
        return self.config.data_dir / KUBECONFIG_FILE

    async def start(self) -> None:
        config = self.config
        private_directory(config.data_dir)
        storage = Storage.open(config.data_dir, memory=config.memory, watch_cache_size=config.watch_cache_size)
        # The kinds' schemas (some 15,000 containers) are read now rather than on the first
        # request, so that the freeze below takes them out of every later collection too.
        upstream.preload()
        # Stored objects hold no reference cycles: move everything loaded so far out of the
        # collector's reach, or each full collection walks every object (0.5 s at 50k pods).
        gc.collect()
        gc.freeze()
        try:
            state = ServerState(storage, build_registry(storage, config.kruise_admission))
            credentials = ensure_credentials(config.data_dir, config.host)
            state.admin_token = credentials.token
            state.authorizer = build_authorizer(config.authorization_mode, storage)
            state.root_ca = credentials.ca_cert.read_text()
            state.service_account_tokens = ServiceAccountTokens(
                load_service_account_key(credentials), storage, lambda: state.clock().timestamp())
            crd.install(state)
            bootstrap(state)
            # Client certificates are optional and verified against the cluster CA only (not the
            # system's roots): x509 authentication trusts what that CA signed.
            tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(credentials.ca_cert))
            tls.verify_mode = ssl.CERT_OPTIONAL
            tls.load_cert_chain(credentials.server_cert, credentials.server_key)
            tls.set_alpn_protocols(ALPN_PROTOCOLS)
            app = build_app(state, credentials.token, config.ready_check)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=IDLE_TIMEOUT)
            await runner.setup()
            handler_factory = runner.server
            assert handler_factory is not None

            def http1() -> asyncio.Protocol:
                protocol = protocol_errors.handler_factory(handler_factory)
                self._track(protocol)
                return protocol

            http2 = Http2Server(handler_factory)

            def protocol_factory() -> asyncio.BaseProtocol:
                # HTTP/1.1 or HTTP/2, as the client's ALPN offer and ours agree (kubeloop.server.http2).
                return AlpnSwitch(http1, http2.protocol)

            self.connection_limits = ConnectionLimits(protocol_factory)
            listener = await asyncio.get_running_loop().create_server(
                self.connection_limits.protocol, config.host, config.port, ssl=tls, reuse_address=True,
                ssl_shutdown_timeout=2.0, ssl_handshake_timeout=HEADER_TIMEOUT)
            if listener.sockets:
                self.port = int(listener.sockets[0].getsockname()[1])
            # Only now is the port known (0 picks a free one): the kubernetes Service targets it.
            ensure_kubernetes_service(state, config.host, self.port)
        except BaseException:
            storage.close()
            raise
        self.state, self.credentials, self._runner, self._listener = state, credentials, runner, listener
        self.http2 = http2
        # After the listener: a terminating namespace resumed now is emptied while clients are served.
        self.namespace_finalizer = NamespaceFinalizer(state)
        self.namespace_finalizer.start()
        write_kubeconfig(self.kubeconfig_path, self.url, credentials, client_cert=config.client_cert)

    async def stop(self) -> None:
        """Stop serving (ending open watches) and close the store; idempotent."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        finalizer, self.namespace_finalizer = self.namespace_finalizer, None
        if finalizer is not None:
            await finalizer.stop()
        # Closing a TLS connection waits for the peer's close_notify; remember every transport
        # now (the handlers forget theirs on close) so that what is still open can be aborted.
        transports = [p.transport for p in self._protocols if p.transport is not None]
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        for transport in transports:
            transport.abort()
        http2, self.http2 = self.http2, None
        if http2 is not None:
            http2.close()
        self._protocols.clear()
        if self.state is not None:
            self.state.storage.close()
            self.state = None
