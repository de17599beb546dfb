"""The OpenAPI endpoints' HTTP answers: formats, ETags, 304, 404, 406 and refreshing from state."""

from __future__ import annotations

import copy

import orjson
import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.crd import infos_for
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import OpenAPIService, decode_document
from kubeloop.server.openapi.http import CRD_TYPE, is_openapi_path, openapi_response, refresh
from kubeloop.server.registry import Registry
from kubeloop.server.state import ServerState
from kubeloop.server.storage import Storage

KUBECTL_120_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
CLONESET = "io.kruise.apps.v1alpha1.CloneSet"


@pytest.fixture
def state() -> ServerState:
    registry = Registry()
    registry.add_all(BUILTIN_RESOURCES)
    return ServerState(storage=Storage.open(None, memory=True), registry=registry)


def _body(response: object) -> bytes:
    body = getattr(response, "body", None)
    assert isinstance(body, bytes)
    return body


@pytest.mark.parametrize(("path", "expected"), [
    ("/openapi/v2", True), ("/swagger-2.0.0.pb-v1", True), ("/openapi/v3", True), ("/openapi/v3/apis/apps/v1", True),
    ("/openapi/v3x", False), ("/openapi", False), ("/apis", False)])
def test_is_openapi_path(path: str, expected: bool) -> None:
    assert is_openapi_path(path) is expected


def test_refresh_follows_the_stored_crds(state: ServerState) -> None:
    service = OpenAPIService()
    refresh(service, state)
    response = openapi_response(service, "/openapi/v2", KUBECTL_120_ACCEPT, None)
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert CLONESET not in decode_document(_body(response))["definitions"]

    state.storage.create(CRD_TYPE, copy.deepcopy(CLONESET_CRD))
    state.registry.add_all(infos_for(CLONESET_CRD))
    refresh(service, state)
    updated = openapi_response(service, "/openapi/v2", KUBECTL_120_ACCEPT, None)
    assert updated.headers["ETag"] != response.headers["ETag"]
    document = decode_document(_body(updated))
    assert CLONESET in document["definitions"]
    assert "/apis/apps.kruise.io/v1alpha1/namespaces/{namespace}/clonesets/{name}" in document["paths"]


def test_v2_json_legacy_path_etag_and_not_modified(state: ServerState) -> None:
    service = OpenAPIService()
    refresh(service, state)
    as_json = openapi_response(service, "/openapi/v2", None, None)
    assert as_json.headers["Content-Type"] == "application/json"
    assert as_json.headers["Vary"] == "Accept"
    assert orjson.loads(_body(as_json))["swagger"] == "2.0"
    legacy = openapi_response(service, "/swagger-2.0.0.pb-v1", "application/json", None)
    assert legacy.headers["Content-Type"].endswith("+protobuf")
    etag = as_json.headers["ETag"]
    cached = openapi_response(service, "/openapi/v2", "application/json", f'"other", {etag}')
    assert cached.status == 304 and cached.body is None


def test_v2_with_an_unknown_accept_is_406(state: ServerState) -> None:
    service = OpenAPIService()
    refresh(service, state)
    with pytest.raises(ApiError) as raised:
        openapi_response(service, "/openapi/v2", "application/xml", None)
    assert raised.value.code == 406 and raised.value.reason == "NotAcceptable"


def test_v3_index_documents_and_cache_control(state: ServerState) -> None:
    service = OpenAPIService()
    refresh(service, state)
    index = orjson.loads(_body(openapi_response(service, "/openapi/v3", None, None)))
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    current_hash = url.split("hash=", 1)[1]
    immutable = openapi_response(service, "/openapi/v3/apis/apps/v1", "application/json", None, current_hash)
    assert immutable.headers["Cache-Control"] == "public, immutable"
    stale = openapi_response(service, "/openapi/v3/apis/apps/v1", "application/json", None, "0")
    assert stale.headers["Cache-Control"] == "no-cache, private"
    assert "components" in orjson.loads(_body(stale))
    with pytest.raises(ApiError) as raised:
        openapi_response(service, "/openapi/v3/apis/nothing/v1", None, None)
    assert raised.value.code == 404
