"""The CloneSet CRD: names, subresources, printer columns and a structural schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from kubeloop.server.crds import CLONESET_CRD

VERSION = CLONESET_CRD["spec"]["versions"][0]
SCHEMA = VERSION["schema"]["openAPIV3Schema"]


def test_identity() -> None:
    spec = CLONESET_CRD["spec"]
    assert CLONESET_CRD["apiVersion"] == "apiextensions.k8s.io/v1"
    assert CLONESET_CRD["metadata"]["name"] == "clonesets.apps.kruise.io"
    assert (spec["group"], spec["scope"]) == ("apps.kruise.io", "Namespaced")
    assert spec["names"]["plural"] == "clonesets"
    assert spec["names"]["kind"] == "CloneSet"
    assert spec["names"]["shortNames"] == ["clone"]
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [("v1alpha1", True, True)]


def test_subresources() -> None:
    assert VERSION["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.labelSelector",
        },
    }


def test_printer_columns() -> None:
    columns = VERSION["additionalPrinterColumns"]
    assert [c["name"] for c in columns if not c.get("priority")] == [
        "DESIRED",
        "UPDATED",
        "UPDATED_READY",
        "UPDATED_AVAILABLE",
        "READY",
        "TOTAL",
        "AGE",
    ]
    assert [c["name"] for c in columns if c.get("priority") == 1] == ["CONTAINERS", "IMAGES", "SELECTOR"]


def _nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, schema
    for name, child in (schema.get("properties") or {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}{{}}")


def test_schema_is_structural() -> None:
    for path, node in _nodes(SCHEMA):
        typed = bool(node.get("type")) or node.get("x-kubernetes-int-or-string") is True
        assert typed, path
        if node.get("x-kubernetes-int-or-string"):
            assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
    assert SCHEMA["properties"]["spec"]["required"] == ["selector", "template"]
    template = SCHEMA["properties"]["spec"]["properties"]["template"]
    assert template["x-kubernetes-preserve-unknown-fields"] is True


def _cloneset(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        "updateStrategy": {"type": "InPlaceIfPossible", "partition": "50%", "maxUnavailable": 1, "maxSurge": "10%"},
        "scaleStrategy": {"podsToDelete": ["a"], "maxUnavailable": 2},
    }
    body.update(spec)
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "x"}, "spec": body}


def test_a_cloneset_matches_the_schema() -> None:
    jsonschema.validate(_cloneset(), SCHEMA)


@pytest.mark.parametrize(
    "spec",
    [
        {"replicas": "three"},
        {"selector": {"matchLabels": {"a": 1}}},
        {"updateStrategy": {"partition": 1.5}},
        {"template": None},
    ],
)
def test_wrong_types_are_rejected(spec: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_cloneset(**spec), SCHEMA)


def test_missing_template_is_rejected() -> None:
    body = _cloneset()
    del body["spec"]["template"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, SCHEMA)
