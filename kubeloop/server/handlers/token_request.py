"""``POST .../namespaces/NS/serviceaccounts/NAME/token``: a TokenRequest, answered with a token.

Upstream's ``TokenREST.Create`` (pkg/registry/core/serviceaccount/storage/token.go) with
kube-apiserver 1.33's default feature gates (JTI, node info in pod-bound tokens, node binding
on) and no ``--service-account-max-token-expiration``:

* ``metadata.name`` / ``metadata.namespace``, when set, must match the URL (422);
* the ServiceAccount must exist (404 ``serviceaccounts "NAME" not found``);
* ``spec.expirationSeconds`` defaults to 3600 (v1 defaulting), and must be at least 600 and at
  most 2^32 (422, upstream's ``ValidateTokenRequest`` texts; the error names no object);
* ``spec.audiences`` default to the API audiences;
* ``spec.boundObjectRef`` may name a Pod (running as this ServiceAccount; its node goes into
  the token too), a Secret or a Node (404 when missing); any other kind is 400, a ``uid`` that
  is not the object's is 409;
* a pod-bound token for the API audiences asking for exactly 3607 s (kubelet's projected
  token) lives a year, with ``warnafter`` at the 3607 s (``--service-account-extend-token-expiration``,
  on by default), while ``status.expirationTimestamp`` still says 3607 s;
* the answer (201) is the request with the defaults, ``creationTimestamp`` and
  ``status.token`` / ``status.expirationTimestamp``; nothing is stored.
"""

from __future__ import annotations

import datetime
from typing import Any

from aiohttp import web

from kubeloop.api.meta import format_time
from kubeloop.api.status import (
    ApiError,
    bad_request_error,
    conflict_error,
    go_quote,
    invalid,
    invalid_error,
    not_found_error,
)
from kubeloop.server.auth.serviceaccount_tokens import Ref
from kubeloop.server.handlers.common import read_body
from kubeloop.server.handlers.read import output_for
from kubeloop.server.requests import decode_document, require_object
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType

Obj = dict[str, Any]

API_VERSION = "authentication.k8s.io/v1"
KIND = "TokenRequest"
GROUP = "authentication.k8s.io"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
WARN_ONLY_EXPIRATION_SECONDS = 3600 + 7
"""Upstream's ``WarnOnlyBoundTokenExpirationSeconds``: what kubelet asks for projected tokens."""
EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 3600
"""Upstream's ``ExpirationExtensionSeconds``."""

_BOUND = {"Pod": ResourceType("", "pods"), "Secret": ResourceType("", "secrets"), "Node": ResourceType("", "nodes")}


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _ref(obj: Obj) -> Ref:
    meta = _meta(obj)
    return Ref(str(meta.get("name") or ""), str(meta.get("uid") or ""))


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _check_request(request_obj: Obj, namespace: str, name: str) -> Obj:
    """The request's spec, defaulted and validated (upstream's order: metadata, then spec)."""
    meta = _meta(request_obj)
    if meta.get("name") and meta["name"] != name:
        raise invalid_error(KIND, GROUP, name, [invalid("metadata.name", meta["name"],
                                                        "must match the service account name if specified")])
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise invalid_error(KIND, GROUP, name, [invalid("metadata.namespace", meta["namespace"],
                                                        "must match the service account namespace if specified")])
    spec = request_obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        request_obj["spec"] = spec
    if spec.get("expirationSeconds") is None:
        spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
    return spec


def _validate_expiration(spec: Obj) -> int:
    seconds = spec.get("expirationSeconds")
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise bad_request_error("spec.expirationSeconds must be an integer")
    if seconds < MIN_EXPIRATION_SECONDS:
        raise invalid_error(KIND, GROUP, "", [invalid("spec.expirationSeconds", seconds,
                                                      "may not specify a duration less than 10 minutes")])
    if seconds > MAX_EXPIRATION_SECONDS:
        raise invalid_error(KIND, GROUP, "", [invalid("spec.expirationSeconds", seconds,
                                                      "may not specify a duration larger than 2^32 seconds")])
    return seconds


def _bound(state: ServerState, namespace: str, name: str, ref: Obj) -> tuple[Ref | None, Ref | None, Ref | None]:
    """The (pod, secret, node) a ``boundObjectRef`` names, looked up and checked."""
    api_version = str(ref.get("apiVersion") or "")
    kind = str(ref.get("kind") or "")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    ref_name = str(ref.get("name") or "")
    resource_type = _BOUND.get(kind) if group == "" else None
    if resource_type is None:
        version = api_version.rpartition("/")[2]
        raise bad_request_error(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    obj = state.storage.get(resource_type, "" if kind == "Node" else namespace, ref_name)
    if obj is None:
        raise not_found_error(resource_type.resource, "", ref_name)
    pod = secret = node = None
    if kind == "Pod":
        pod_spec = _spec(obj)
        if name != pod_spec.get("serviceAccountName"):
            raise bad_request_error(f"cannot bind token for serviceaccount {go_quote(name)} to pod running with "
                                    "different serviceaccount name.")
        pod = _ref(obj)
        node_name = str(pod_spec.get("nodeName") or "")
        if node_name:
            # A missing node still names itself, without a uid (as upstream).
            stored_node = state.storage.get(_BOUND["Node"], "", node_name)
            node = _ref(stored_node) if stored_node is not None else Ref(node_name, "")
        uid = pod.uid
    elif kind == "Secret":
        secret = _ref(obj)
        uid = secret.uid
    else:
        node = _ref(obj)
        uid = node.uid
    wanted = str(ref.get("uid") or "")
    if wanted and wanted != uid:
        raise conflict_error(kind, "", ref_name, f"the UID in the bound object reference ({wanted}) does not match "
                                                 "the UID in record. The object might have been deleted and then "
                                                 "recreated")
    return pod, secret, node


async def handle_token_request(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    tokens = state.service_account_tokens
    if tokens is None:
        raise ApiError(503, "ServiceUnavailable", "service account token issuing is not configured")
    output = output_for(state, request, target.info, api_version=API_VERSION, kind=KIND)
    raw = await read_body(request)
    obj: Obj = require_object(decode_document(raw, request.headers.get("Content-Type"), into=(API_VERSION, KIND)))
    namespace, name = str(target.namespace or ""), str(target.name or "")
    spec = _check_request(obj, namespace, name)
    account = state.storage.get(target.info.resource_type, namespace, name)
    if account is None:
        raise not_found_error("serviceaccounts", "", name)
    if not spec.get("audiences"):
        spec["audiences"] = list(tokens.api_audiences)
    meta = _meta(obj)
    obj["metadata"] = meta
    meta.setdefault("name", name)
    meta["name"] = meta["name"] or name
    meta["namespace"] = meta.get("namespace") or namespace
    now = state.clock()
    meta["creationTimestamp"] = format_time(now)
    obj.pop("status", None)
    seconds = _validate_expiration(spec)
    pod = secret = node = None
    bound = spec.get("boundObjectRef")
    if isinstance(bound, dict):
        pod, secret, node = _bound(state, namespace, name, bound)
    audiences = [str(a) for a in spec["audiences"]]
    lifetime, warn_after = seconds, 0
    if pod is not None and seconds == WARN_ONLY_EXPIRATION_SECONDS and set(audiences) <= set(tokens.api_audiences):
        lifetime, warn_after = EXTENDED_EXPIRATION_SECONDS, seconds
    token, claims = tokens.issue(namespace, _ref(account), audiences, lifetime, pod, secret, node, warn_after)
    obj["apiVersion"], obj["kind"] = API_VERSION, KIND
    expires = datetime.datetime.fromtimestamp(claims.issued_at + seconds, datetime.UTC)
    obj["status"] = {"token": token, "expirationTimestamp": format_time(expires)}
    return output.answer(obj, 201)
