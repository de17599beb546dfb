"""Kinds that are answered, never stored: reviews and component statuses.

kube-apiserver computes these per request (``pkg/registry/authentication/tokenreview``,
``selfsubjectreview``, ``pkg/registry/authorization/*accessreview``, ``selfsubjectrulesreview``,
``pkg/registry/core/componentstatus``). Access and rules reviews ask the server's authorizer
(:mod:`kubeloop.server.auth.rbac.reviews`); a token review asks its authenticator (the admin
token, service-account JWTs) for ``spec.audiences`` (the API audiences when empty).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kubeloop.api.status import bad_request_error, not_found_error
from kubeloop.server.auth.authenticator import TokenResult
from kubeloop.server.auth.rbac import reviews
from kubeloop.server.auth.user import UserInfo, request_user
from kubeloop.server.handlers.common import check_type, metadata_of, read_body
from kubeloop.server.handlers.read import output_for
from kubeloop.server.requests import decode_document, require_object
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState

Obj = dict[str, Any]

COMPONENTS = ("controller-manager", "scheduler", "etcd-0")
"""What ``componentstatuses`` lists (the same names as upstream's, all healthy: they run in-process)."""

_SUBJECT_REVIEWS = frozenset({"SubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectAccessReview"})


def _audiences(spec: Obj) -> list[str]:
    audiences = spec.get("audiences")
    return [str(a) for a in audiences] if isinstance(audiences, list) else []


def _token_review_status(result: TokenResult) -> Obj:
    """A TokenReview's status (upstream's ``TokenREST.Create``, pkg/registry/authentication/
    tokenreview): the user and the audiences the token was good for, or the error text of the
    authenticator that refused it (``authenticated`` and ``error`` omitted when empty)."""
    status: Obj = {}
    if result.user is not None:
        status["authenticated"] = True
        status["user"] = result.user.as_review()
        status["audiences"] = list(result.audiences)
    else:
        status["user"] = {}
    if result.error:
        status["error"] = result.error
    return status


def _review_status(state: ServerState, kind: str, spec: Obj, user: UserInfo) -> Obj:
    if kind in _SUBJECT_REVIEWS:
        return reviews.access_review_status(state.authorizer, kind, spec, user)
    if kind == "SelfSubjectRulesReview":
        return reviews.rules_review_status(state.authorizer, spec, user)
    if kind == "SelfSubjectReview":
        return {"userInfo": user.as_review()}
    if kind == "TokenReview":
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise bad_request_error("token is required")
        if state.authenticator is None:
            return {"user": {}}
        return _token_review_status(state.authenticator.review(token, _audiences(spec)))
    raise bad_request_error(f"{kind} cannot be created")


async def handle_virtual_create(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    """A review: the request with its ``status`` filled in, answered with 201 and stored nowhere."""
    info = target.info
    output = output_for(state, request, info)
    raw = await read_body(request)
    obj = require_object(decode_document(raw, request.headers.get("Content-Type"), into=(info.api_version, info.kind)))
    check_type(info, obj)
    meta = metadata_of(obj)
    if info.namespaced:
        namespace = target.namespace or ""
        spec_namespace = (obj.get("spec") or {}).get("resourceAttributes", {}).get("namespace")
        if spec_namespace != namespace:
            raise bad_request_error(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
        meta["namespace"] = namespace
    meta.setdefault("creationTimestamp", None)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    obj["status"] = _review_status(state, info.kind, spec, request_user(request))
    return output.answer(obj, 201)


def _component(name: str) -> Obj:
    return {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name},
            "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}


def component_status_get(name: str) -> Obj:
    if name not in COMPONENTS:
        raise not_found_error("componentstatuses", "", name)
    return _component(name)


def component_status_list() -> Obj:
    return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
            "items": [_component(name) for name in COMPONENTS]}
