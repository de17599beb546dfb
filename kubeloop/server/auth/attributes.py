"""What authorization sees of a request, and the 403 it words when the answer is no.

The attributes are those upstream's ``RequestInfoFactory.NewRequestInfo``
(pkg/endpoints/request/requestinfo.go) derives from the path alone. A denied request is 403
Forbidden, worded by upstream's
``responsewriters.Forbidden`` / ``forbiddenMessage`` (k8s.io/apiserver
pkg/endpoints/handlers/responsewriters/errors.go):

* ``forbidden: User "system:anonymous" cannot get path "/api"`` for non-resource paths, with
  empty details;
* ``pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in
  the namespace "default"`` for resources (``... at the cluster scope`` without a namespace),
  with details ``{"name"?, "group"?, "kind": <resource>}``.

An authorizer's reason, when it has one, follows the text after ``: `` as upstream appends it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubeloop.api.status import ApiError, forbidden_error, go_quote

PUBLIC_INFO_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})
"""The nonResourceURLs of the ``system:public-info-viewer`` ClusterRole."""

_API_PREFIXES = ("api", "apis")
_SPECIAL_VERBS = ("proxy", "watch")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}


@dataclass(frozen=True)
class RequestAttributes:
    """What authorization sees of a request (upstream's RequestInfo)."""

    resource_request: bool
    verb: str
    path: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


def _watch_param(query: Mapping[str, str]) -> bool:
    value = query.get("watch")
    return value is not None and value.lower() not in ("false", "0")


def _field_selector_name(query: Mapping[str, str]) -> str:
    """The name a ``metadata.name=<x>`` field selector pins down (RequiresExactMatch)."""
    for term in (query.get("fieldSelector") or "").split(","):
        for operator in ("==", "="):
            key, found, value = term.partition(operator)
            if found and key.strip() == "metadata.name" and not key.endswith("!"):
                value = value.strip()
                if value and "/" not in value and "%" not in value and value not in (".", ".."):
                    return value
                return ""
    return ""


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> RequestAttributes:
    """The request attributes of ``method`` on ``path``, from the path alone."""
    parts = [part for part in path.strip("/").split("/") if part] if path.strip("/") else []
    non_resource = RequestAttributes(False, method.lower(), path)
    if len(parts) < 3 or parts[0] not in _API_PREFIXES:
        return non_resource
    prefix, rest = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    special = rest[0] in _SPECIAL_VERBS
    if special:
        if len(rest) < 2:
            return non_resource
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 and not special else ""
    if not name and verb == "get":
        verb = "watch" if _watch_param(query) else "list"
        name = _field_selector_name(query)
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestAttributes(True, verb, path, group, version, namespace, resource, subresource, name)


def forbidden(user: str, attributes: RequestAttributes, reason: str = "") -> ApiError:
    """The 403 for ``user``; ``reason`` is the authorizer's, appended after ``: `` when set."""
    suffix = f": {reason}" if reason else ""
    if not attributes.resource_request:
        return forbidden_error("", "", "", f"User {go_quote(user)} cannot {attributes.verb} path "
                                           f"{go_quote(attributes.path)}{suffix}")
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    text = (f"User {go_quote(user)} cannot {attributes.verb} resource {go_quote(resource)} in API group "
            f"{go_quote(attributes.group)}")
    text += f" in the namespace {go_quote(attributes.namespace)}" if attributes.namespace else " at the cluster scope"
    return forbidden_error(attributes.resource, attributes.group, attributes.name, text + suffix)
