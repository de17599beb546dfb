"""ObjectMeta rules shared by every kind: names, namespace scope, labels, annotations,
owner references, finalizers, and the update-time immutability checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import invalid_error
from kubeloop.server.admission import validate_create, validate_status_update, validate_update

DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def config_map(**meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "cm", "namespace": "default"}
    metadata.update(meta)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {k: v for k, v in metadata.items() if v is not None}}


def messages(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors]


def create_errors(obj: dict[str, Any], group: str = "", kind: str = "ConfigMap", namespaced: bool = True) -> list[str]:
    return messages(validate_create(group, "v1", kind, obj, namespaced=namespaced))


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({}, []),
        ({"name": None, "generateName": "web-"}, ["metadata.name: Required value: name or generateName is required"]),
        ({"name": "Bad_Name"}, [f'metadata.name: Invalid value: "Bad_Name": {DNS_SUBDOMAIN_MSG}']),
        (
            {"name": "a" * 254},
            [
                f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters',
            ],
        ),
        (
            {"name": "ok", "generateName": "Web-"},
            [f'metadata.generateName: Invalid value: "Web-": {DNS_SUBDOMAIN_MSG}'],
        ),
        ({"namespace": None}, ["metadata.namespace: Required value"]),
        ({"namespace": "Not_Valid"}, [f'metadata.namespace: Invalid value: "Not_Valid": {DNS_LABEL_MSG}']),
        ({"generation": -1}, ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]),
        (
            {"labels": {"app": "a b"}},
            [
                'metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of '
                'alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyValue',  or "
                "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ],
        ),
        ({"labels": {"-x": "v"}}, [f'metadata.labels: Invalid value: "-x": {QUALIFIED_NAME_PART_MSG}']),
        ({"annotations": {"-x": "v"}}, [f'metadata.annotations: Invalid value: "-x": {QUALIFIED_NAME_PART_MSG}']),
        ({"annotations": {"Example.COM/Key": "v"}}, []),
        (
            {"annotations": {"big": "x" * (256 * 1024)}},
            ["metadata.annotations: Too long: must have at most 262144 bytes"],
        ),
        ({"annotations": {"big": "x" * (256 * 1024 - 3)}}, []),
    ],
)
def test_object_meta_on_create(meta: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(config_map(**meta)) == expected


def test_generate_name_masks_trailing_dash_like_upstream() -> None:
    # Upstream replaces the last two characters of "x.-" with "a", leaving "xa": valid.
    assert create_errors(config_map(name=None, generateName="x.-"))[:1] == [
        "metadata.name: Required value: name or generateName is required"
    ]
    assert len(create_errors(config_map(name=None, generateName="x.-"))) == 1
    assert create_errors(config_map(generateName="-")) == [
        f'metadata.generateName: Invalid value: "-": {DNS_SUBDOMAIN_MSG}'
    ]


def test_namespace_forbidden_on_cluster_scoped_kinds() -> None:
    obj = {"metadata": {"name": "n1", "namespace": "default"}}
    assert create_errors(obj, kind="Node", namespaced=False) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


@pytest.mark.parametrize(
    ("finalizers", "expected"),
    [
        (["kubernetes", "orphan", "example.com/f"], []),
        (["foregroundDeletion"], []),
        (
            ["custom"],
            [
                'metadata.finalizers[0]: Invalid value: "custom": '
                "name is neither a standard finalizer name nor is it fully qualified"
            ],
        ),
        (
            ["orphan", "foregroundDeletion"],
            [
                'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
                "finalizer orphan and foregroundDeletion cannot be both set",
            ],
        ),
        (["example.com/-bad"], [f'metadata.finalizers: Invalid value: "example.com/-bad": {QUALIFIED_NAME_PART_MSG}']),
    ],
)
def test_finalizers_of_builtin_kinds(finalizers: list[str], expected: list[str]) -> None:
    assert create_errors(config_map(finalizers=finalizers)) == expected


def test_custom_resources_accept_unqualified_finalizers() -> None:
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "finalizers": ["custom"]},
    }
    assert create_errors(obj, group="example.com", kind="Widget") == []


def test_custom_resource_names_are_dns_subdomains() -> None:
    obj = {"metadata": {"name": "Upper", "namespace": "default"}}
    assert create_errors(obj, group="example.com", kind="Widget") == [
        f'metadata.name: Invalid value: "Upper": {DNS_SUBDOMAIN_MSG}'
    ]


def owner(**fields: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}
    ref.update(fields)
    return {k: v for k, v in ref.items() if v is not None}


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        ([owner()], []),
        (
            [owner(apiVersion="apps/")],
            ['metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty'],
        ),
        ([owner(kind=None)], ['metadata.ownerReferences.kind: Invalid value: "": kind must not be empty']),
        ([owner(name=None)], ['metadata.ownerReferences.name: Invalid value: "": name must not be empty']),
        ([owner(uid=None)], ['metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']),
        (
            [owner(controller=True), owner(name="b", controller=True)],
            [
                "metadata.ownerReferences: Invalid value: []v1.OwnerReference{"
                'v1.OwnerReference{APIVersion:"apps/v1", Kind:"ReplicaSet", Name:"rs", UID:"u1", '
                'Controller:(*bool)(true), '
                "BlockOwnerDeletion:(*bool)(nil)}, "
                'v1.OwnerReference{APIVersion:"apps/v1", Kind:"ReplicaSet", Name:"b", UID:"u1", '
                'Controller:(*bool)(true), '
                "BlockOwnerDeletion:(*bool)(nil)}}: "
                'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs and '
                "ReplicaSet/b",
            ],
        ),
        (
            [owner(apiVersion="v1", kind="Event")],
            [
                'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"rs", '
                'UID:"u1", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: '
                "/v1, Kind=Event is disallowed from being an owner",
            ],
        ),
    ],
)
def test_owner_references(refs: list[dict[str, Any]], expected: list[str]) -> None:
    assert create_errors(config_map(ownerReferences=refs)) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("..", ["metadata.name: Invalid value: \"..\": may not be '..'"]),
        ("a%b", ["metadata.name: Invalid value: \"a%b\": may not contain '%'"]),
    ],
)
def test_generic_path_segment_rule_for_kinds_that_skip_name_syntax(name: str, expected: list[str]) -> None:
    # core/v1 Events validate no name syntax of their own; the generic registry pass still runs.
    event = {"metadata": {"name": name, "namespace": "default"}, "involvedObject": {"namespace": "default"}}
    assert create_errors(event, kind="Event") == expected


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].update(
        {"uid": "u-1", "resourceVersion": "5", "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 2}
    )
    return out


def update_errors(new: dict[str, Any], old: dict[str, Any], kind: str = "ConfigMap") -> list[str]:
    return messages(validate_update("", "v1", kind, new, old, namespaced=True))


def test_valid_update_has_no_errors() -> None:
    old = stored(config_map(labels={"a": "b"}))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "c"}
    assert update_errors(new, old) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"name": "other"}, 'metadata.name: Invalid value: "other": field is immutable'),
        ({"namespace": "other"}, 'metadata.namespace: Invalid value: "other": field is immutable'),
        ({"uid": "u-2"}, 'metadata.uid: Invalid value: "u-2": field is immutable'),
        (
            {"creationTimestamp": "2025-01-01T00:00:00Z"},
            "metadata.creationTimestamp: Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable",
        ),
        (
            {"deletionTimestamp": "2025-01-01T00:00:00Z"},
            "metadata.deletionTimestamp: Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable",
        ),
        (
            {"deletionGracePeriodSeconds": 3},
            "metadata.deletionGracePeriodSeconds: Invalid value: 3: field is immutable",
        ),
        ({"resourceVersion": ""}, 'metadata.resourceVersion: Invalid value: "": must be specified for an update'),
        ({"generation": 1}, "metadata.generation: Invalid value: 1: must not be decremented"),
    ],
)
def test_update_immutability(change: dict[str, Any], expected: str) -> None:
    old = stored(config_map())
    new = copy.deepcopy(old)
    new["metadata"].update(change)
    errors = update_errors(new, old)
    assert expected in errors
    # The generic registry pass and the kind's own pass both report it, as upstream does.
    assert set(errors) == {expected}


def test_no_new_finalizers_while_deleting() -> None:
    old = stored(config_map(finalizers=["example.com/a"]))
    old["metadata"]["deletionTimestamp"] = "2024-05-05T00:00:00Z"
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["example.com/a", "example.com/c", "example.com/b"]
    assert set(update_errors(new, old)) == {
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"example.com/b", "example.com/c"}'
    }
    new["metadata"]["finalizers"] = []
    assert update_errors(new, old) == []


def test_status_update_checks_metadata_too() -> None:
    old = stored(config_map())
    new = copy.deepcopy(old)
    new["metadata"]["uid"] = "x"
    assert 'metadata.uid: Invalid value: "x": field is immutable' in messages(
        validate_status_update("", "v1", "ConfigMap", new, old, namespaced=True)
    )


def test_invalid_error_message_shape_from_upstream() -> None:
    errors = validate_create("", "v1", "ConfigMap", config_map(name="Bad_Name", labels={"-x": "v"}), namespaced=True)
    error = invalid_error("ConfigMap", "", "Bad_Name", errors)
    assert error.code == 422
    assert error.message.startswith('ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": ')
    assert [c["field"] for c in error.details["causes"]] == ["metadata.name", "metadata.labels"]  # type: ignore[index]


@pytest.mark.parametrize("junk", [None, 5, "text", [], {"metadata": "x"}, {"metadata": {"name": 5, "labels": [1]}}])
def test_wrong_json_types_become_field_errors(junk: Any) -> None:
    obj = junk if isinstance(junk, dict) else {"metadata": {"name": "a", "namespace": "default"}, "data": junk}
    errors = validate_create("", "v1", "ConfigMap", obj, namespaced=True)
    assert all(e.field for e in errors) or errors == []
    if isinstance(junk, dict):
        assert any(e.type == "FieldValueTypeInvalid" for e in errors)
