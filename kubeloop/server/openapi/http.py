"""The HTTP side of the OpenAPI endpoints, for the server's router to call.

``/openapi/v2`` answers protobuf or JSON by ``Accept`` (406 otherwise), ``/swagger-2.0.0.pb-v1``
(the path kubectl falls back to) always protobuf, ``/openapi/v3`` the index and
``/openapi/v3/<group version path>`` one document. Every answer carries an ``ETag`` and honours
``If-None-Match`` with 304; v3 documents fetched with their current ``hash`` are marked
immutable, as kube-apiserver does.
"""

from __future__ import annotations

from aiohttp import web

from kubeloop.api.status import ApiError, not_acceptable_error
from kubeloop.server.openapi.cache import OpenAPIService
from kubeloop.server.openapi.document import JSON_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE, Encoded
from kubeloop.server.openapi.served import served_from_registry
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType

V2_PATH = "/openapi/v2"
LEGACY_V2_PATH = "/swagger-2.0.0.pb-v1"
V3_PATH = "/openapi/v3"
CRD_TYPE = ResourceType("apiextensions.k8s.io", "customresourcedefinitions")
_PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def is_openapi_path(path: str) -> bool:
    return path in (V2_PATH, LEGACY_V2_PATH, V3_PATH) or path.startswith(V3_PATH + "/")


def refresh(service: OpenAPIService, state: ServerState) -> None:
    """Tell ``service`` what ``state`` serves now (cheap when nothing changed)."""
    crds, _, _ = state.storage.list(CRD_TYPE)
    service.update(served_from_registry(state.registry), crds)


def _response(found: Encoded, if_none_match: str | None, cache_control: str = "no-cache, private") -> web.Response:
    headers = {"ETag": found.etag, "Vary": "Accept", "Cache-Control": cache_control}
    if if_none_match is not None and found.etag in (tag.strip() for tag in if_none_match.split(",")):
        return web.Response(status=304, headers=headers)
    return web.Response(body=found.body, headers={**headers, "Content-Type": found.content_type})


def openapi_response(service: OpenAPIService, path: str, accept: str | None, if_none_match: str | None,
                     hash_param: str | None = None) -> web.Response:
    """The answer to a GET of an OpenAPI path (see :func:`is_openapi_path`); call :func:`refresh`
    first. Raises :class:`~kubeloop.api.status.ApiError` for 404 and 406."""
    if path == LEGACY_V2_PATH:
        accept = _PROTOBUF_ACCEPT
    if path in (V2_PATH, LEGACY_V2_PATH):
        found = service.v2(accept)
        if found is None:
            raise not_acceptable_error([JSON_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE])
        return _response(found, if_none_match)
    if path == V3_PATH:
        return _response(service.v3_discovery(), if_none_match)
    document = service.v3_document(path.removeprefix(V3_PATH + "/"))
    if document is None:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    immutable = hash_param is not None and hash_param == document.etag.strip('"')
    return _response(document, if_none_match, "public, immutable" if immutable else "no-cache, private")
