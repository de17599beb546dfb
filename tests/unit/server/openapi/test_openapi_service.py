"""Content negotiation, caching and the OpenAPI v3 documents."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest

from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.crd import infos_for
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import (
    PROTOBUF_CONTENT_TYPE,
    OpenAPIService,
    decode_document,
    negotiate_v2,
    openapi_v3_document,
    served_from_infos,
    served_from_registry,
)
from kubeloop.server.registry import Registry

SERVED = served_from_infos([*BUILTIN_RESOURCES, *infos_for(CLONESET_CRD)])
KUBECTL_120_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


@pytest.mark.parametrize(("accept", "expected"), [
    (None, "json"),
    ("", "json"),
    ("application/json", "json"),
    ("*/*", "json"),
    (KUBECTL_120_ACCEPT, "protobuf"),
    ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    (f"{KUBECTL_120_ACCEPT}, application/json", "protobuf"),
    ("application/json;q=0.9, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    ("application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "json"),
    ("*/*, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    ("application/xml", None),
    ("text/html, application/yaml", None),
])
def test_negotiation(accept: str | None, expected: str | None) -> None:
    assert negotiate_v2(accept) == expected


TOKEN = r"[^\x00-\x20()<>@,;:\\\"/\[\]?=\x7f]+"


def _is_media_type(text: str) -> bool:
    """RFC 2045's ``type "/" subtype`` grammar, which Go's ``mime.ParseMediaType`` enforces."""
    return re.fullmatch(f"{TOKEN}/{TOKEN}", text) is not None


def test_protobuf_content_type_is_a_valid_media_type_unlike_the_requested_one() -> None:
    """client-go turns an unparsable reply type into an error even on a 200 response."""
    assert _is_media_type(PROTOBUF_CONTENT_TYPE)
    assert not _is_media_type(KUBECTL_120_ACCEPT)


def _service() -> OpenAPIService:
    service = OpenAPIService()
    service.update(SERVED, [CLONESET_CRD])
    return service


def test_v2_forms_with_etags_and_caching() -> None:
    service = _service()
    protobuf = service.v2(KUBECTL_120_ACCEPT)
    as_json = service.v2("application/json")
    assert protobuf is not None and as_json is not None
    assert protobuf.content_type == PROTOBUF_CONTENT_TYPE
    assert as_json.content_type == "application/json"
    assert decode_document(protobuf.body) == orjson.loads(as_json.body)
    assert re.fullmatch(r'"[0-9A-F]{64}"', protobuf.etag)
    assert protobuf.etag != as_json.etag
    assert service.v2(KUBECTL_120_ACCEPT) is protobuf
    assert service.v2("application/xml") is None


def test_unchanged_state_keeps_the_cache_and_a_changed_crd_rebuilds_it() -> None:
    crd = copy.deepcopy(CLONESET_CRD)
    crd["metadata"]["resourceVersion"] = "5"
    service = OpenAPIService()
    service.update(SERVED, [crd])
    first = service.v2("application/json")
    service.update(SERVED, [copy.deepcopy(crd)])
    assert service.v2("application/json") is first
    changed = copy.deepcopy(crd)
    changed["metadata"]["resourceVersion"] = "6"
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["extra"] = {"type": "string"}
    service.update(SERVED, [changed])
    second = service.v2("application/json")
    assert second is not None and first is not None
    assert second.etag != first.etag
    assert "extra" in orjson.loads(second.body)["definitions"]["io.kruise.apps.v1alpha1.CloneSet"]["properties"]


def test_registry_adapter_lists_every_served_resource() -> None:
    registry = Registry()
    registry.add_all(BUILTIN_RESOURCES)
    registry.add_all(infos_for(CLONESET_CRD))
    assert set(served_from_registry(registry)) == set(SERVED)
    cloneset = next(s for s in SERVED if s.kind == "CloneSet")
    assert cloneset.custom and cloneset.scale and cloneset.status


def _refs(value: Any) -> set[str]:
    return set(re.findall(r'"\$ref":"([^"]+)"', orjson.dumps(value).decode()))


def test_v3_discovery_lists_group_versions_with_their_hash() -> None:
    service = _service()
    index = orjson.loads(service.v3_discovery().body)
    assert set(index["paths"]) == {"api/v1", "apis/apps/v1", "apis/apps.kruise.io/v1alpha1",
                                   "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1",
                                   "apis/apiextensions.k8s.io/v1", "apis/discovery.k8s.io/v1"}
    apps = service.v3_document("apis/apps/v1")
    assert apps is not None
    assert index["paths"]["apis/apps/v1"]["serverRelativeURL"] == f"/openapi/v3/apis/apps/v1?hash={apps.etag[1:-1]}"
    assert service.v3_document("apis/nothing/v1") is None


@pytest.mark.parametrize("path", ["api/v1", "apis/apps/v1", "apis/apps.kruise.io/v1alpha1"])
def test_v3_documents_are_self_contained(path: str) -> None:
    document = openapi_v3_document(path, SERVED, [CLONESET_CRD])
    assert document is not None
    schemas = document["components"]["schemas"]
    refs = _refs(document)
    assert all(ref.startswith("#/components/schemas/") for ref in refs)
    assert {ref.rsplit("/", 1)[1] for ref in refs} <= schemas.keys()
    assert "#/definitions/" not in orjson.dumps(document).decode()


def test_v3_document_wraps_described_references_and_moves_bodies() -> None:
    document = openapi_v3_document("apis/apps/v1", SERVED, [])
    assert document is not None
    spec = document["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]
    assert spec["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]
    assert spec["description"]
    patch = document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert set(patch["requestBody"]["content"]) == {
        "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
        "application/apply-patch+yaml"}
    assert {"name": "dryRun", "in": "query", "description": patch["parameters"][0]["description"],
            "schema": {"type": "string", "uniqueItems": True}} in patch["parameters"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}


def test_every_reference_of_the_whole_v2_document_resolves() -> None:
    found = _service().v2("application/json")
    assert found is not None
    document = orjson.loads(found.body)
    names = {ref.removeprefix("#/definitions/") for ref in _refs(document)}
    assert names and names <= document["definitions"].keys()
