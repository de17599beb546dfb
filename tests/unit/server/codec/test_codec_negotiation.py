"""The negotiation core: Accept headers to (media type, conversion), and the metadata views."""

from __future__ import annotations

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.codec.encoding import encode_json
from kubeloop.server.codec.metadata import go_type_name, list_as, object_as
from kubeloop.server.codec.negotiation import Conversion, MediaTypeOptions, negotiate_output

JSON = "application/json"
YAML = "application/yaml"
POM_V1 = Conversion("PartialObjectMetadata", "meta.k8s.io", "v1")
POML_V1 = Conversion("PartialObjectMetadataList", "meta.k8s.io", "v1")
TABLE_V1 = Conversion("Table", "meta.k8s.io", "v1")


@pytest.mark.parametrize(("accept", "expected"), [
    (None, MediaTypeOptions(JSON)),
    ("", MediaTypeOptions(JSON)),
    ("application/json", MediaTypeOptions(JSON)),
    ("*/*", MediaTypeOptions(JSON)),
    ("application/*", MediaTypeOptions(JSON)),
    ("application/yaml", MediaTypeOptions(YAML)),
    ("application/yaml;as=Table;g=meta.k8s.io;v=v1", MediaTypeOptions(YAML, TABLE_V1)),
    ("application/vnd.kubernetes.protobuf, application/json", MediaTypeOptions(JSON)),
    ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", MediaTypeOptions(JSON, POM_V1)),
    ("application/json; as=PartialObjectMetadataList; g=meta.k8s.io; v=v1", MediaTypeOptions(JSON, POML_V1)),
    ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
     MediaTypeOptions(JSON, Conversion("PartialObjectMetadata", "meta.k8s.io", "v1beta1"))),
    ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
     "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json", MediaTypeOptions(JSON, POM_V1)),
    ("*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", MediaTypeOptions(JSON, POM_V1)),
    ("application/json;as=Table;g=meta.k8s.io;v=v1", MediaTypeOptions(JSON, TABLE_V1)),
    ("application/json, application/json;as=Table;g=meta.k8s.io;v=v1", MediaTypeOptions(JSON)),
    ("application/json;q=0.5, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
     MediaTypeOptions(JSON, POM_V1)),
    ("application/json;as=Foo;g=meta.k8s.io;v=v1, application/json", MediaTypeOptions(JSON)),
    ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json;as=Table;g=meta.k8s.io;v=v1",
     MediaTypeOptions(JSON, TABLE_V1)),
    ("application/json;as=PartialObjectMetadata;g=example.com;v=v1, application/json", MediaTypeOptions(JSON)),
    ("application/json;g=meta.k8s.io;v=v1, application/json", MediaTypeOptions(JSON)),
])
def test_negotiate_output(accept: str | None, expected: MediaTypeOptions) -> None:
    assert negotiate_output(accept) == expected


@pytest.mark.parametrize("accept", [
    "application/json;as=Foo;g=meta.k8s.io;v=v1",
    "application/json;as=PartialObjectMetadata",
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    "text/plain",
])
def test_nothing_acceptable_is_406_with_the_advertised_types(accept: str) -> None:
    with pytest.raises(ApiError) as raised:
        negotiate_output(accept)
    assert raised.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "only the following media types are accepted: application/json, application/yaml, "
                   "application/vnd.kubernetes.protobuf",
        "reason": "NotAcceptable", "code": 406}


def test_tables_only_where_the_endpoint_converts_them() -> None:
    accept = "application/json;as=Table;g=meta.k8s.io;v=v1, application/json"
    assert negotiate_output(accept, tables=False) == MediaTypeOptions(JSON)


def test_a_new_encoder_plugs_in_through_the_encoded_media_types() -> None:
    protobuf = "application/vnd.kubernetes.protobuf"
    accept = f"{protobuf};as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"
    assert negotiate_output(accept, encoded=(JSON, protobuf)) == MediaTypeOptions(protobuf, POM_V1)
    assert negotiate_output(f"{protobuf};as=Table;g=meta.k8s.io;v=v1, application/json",
                            encoded=(JSON, protobuf)) == MediaTypeOptions(JSON)


@pytest.mark.parametrize(("group", "kind", "custom", "is_list", "expected"), [
    ("", "Pod", False, False, "*core.Pod"),
    ("", "Pod", False, True, "*core.PodList"),
    ("apps", "Deployment", False, True, "*apps.DeploymentList"),
    ("rbac.authorization.k8s.io", "Role", False, False, "*rbac.Role"),
    ("coordination.k8s.io", "Lease", False, True, "*coordination.LeaseList"),
    ("events.k8s.io", "Event", False, False, "*core.Event"),
    ("apiextensions.k8s.io", "CustomResourceDefinition", False, False, "*apiextensions.CustomResourceDefinition"),
    ("apps.kruise.io", "CloneSet", True, False, "*unstructured.Unstructured"),
    ("apps.kruise.io", "CloneSet", True, True, "*unstructured.UnstructuredList"),
])
def test_go_type_names(group: str, kind: str, custom: bool, is_list: bool, expected: str) -> None:
    assert go_type_name(group, kind, custom=custom, is_list=is_list) == expected


def test_metadata_views() -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"}, "spec": {"x": 1}}
    assert object_as("PartialObjectMetadata", obj, "v1", "*core.Pod") == {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "p", "uid": "u"}}
    listed = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7", "continue": "c"},
              "items": [obj]}
    assert list_as("PartialObjectMetadataList", listed, "v1beta1", "*core.PodList") == {
        "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1beta1",
        "metadata": {"resourceVersion": "7", "continue": "c"},
        "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1",
                   "metadata": {"name": "p", "uid": "u"}}]}
    assert list_as("PartialObjectMetadataList", {**listed, "items": []}, "v1", "*core.PodList")["items"] is None
    with pytest.raises(ApiError) as raised:
        object_as("PartialObjectMetadataList", obj, "v1", "*core.Pod")
    assert (raised.value.code, raised.value.reason) == (406, "NotAcceptable")
    with pytest.raises(ApiError):
        list_as("PartialObjectMetadata", listed, "v1", "*core.PodList")


def test_json_bodies_end_with_a_newline() -> None:
    assert encode_json({"a": [1]}) == b'{"a":[1]}\n'
