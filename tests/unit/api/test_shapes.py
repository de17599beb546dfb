"""The typed shapes (:mod:`kubeloop.api.shapes`) against kube 1.33's own schemas, and the
helpers that hand them out returning the objects' own dicts (no conversion)."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop.api import shapes
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import controller_of, metadata, owner_references
from kubeloop.api.pods import ready_condition
from kubeloop.server.kinds.upstream import definitions

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."

UPSTREAM: dict[type, tuple[str, ...]] = {
    shapes.OwnerReference: (META + "OwnerReference",),
    shapes.ManagedFieldsEntry: (META + "ManagedFieldsEntry",),
    shapes.ObjectMeta: (META + "ObjectMeta",),
    # One shape for the conditions of every kind: each field is in at least one of them.
    shapes.Condition: (META + "Condition", CORE + "PodCondition", "io.k8s.api.apps.v1.DeploymentCondition",
                       "io.k8s.api.apps.v1.ReplicaSetCondition"),
    shapes.LabelSelectorRequirement: (META + "LabelSelectorRequirement",),
    shapes.LabelSelector: (META + "LabelSelector",),
    shapes.ObjectReference: (CORE + "ObjectReference",),
    shapes.ContainerPort: (CORE + "ContainerPort",),
    shapes.Container: (CORE + "Container",),
    shapes.PodReadinessGate: (CORE + "PodReadinessGate",),
    shapes.PodSpec: (CORE + "PodSpec",),
    shapes.ContainerStatus: (CORE + "ContainerStatus",),
    shapes.PodIP: (CORE + "PodIP", CORE + "HostIP"),
    shapes.PodStatus: (CORE + "PodStatus",),
    shapes.PodTemplateSpec: (CORE + "PodTemplateSpec",),
    shapes.KubeObject: (CORE + "Pod",),
    shapes.Pod: (CORE + "Pod",),
}


def json_type(annotation: Any) -> str:
    """The JSON Schema type a Python annotation of a shape stands for."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (only,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        return json_type(only)
    origin = typing.get_origin(annotation) or annotation
    if origin is list:
        return "array"
    if origin is dict or typing.is_typeddict(annotation):
        return "object"
    return {str: "string", int: "integer", bool: "boolean"}[origin]


def schema_type(schema: Mapping[str, Any]) -> str:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return schema_type(definitions()[ref.rpartition("/")[2]])
    return str(schema.get("type", "object"))


def test_every_shape_is_checked() -> None:
    declared = {value for value in vars(shapes).values() if typing.is_typeddict(value)}
    assert declared == set(UPSTREAM)


@pytest.mark.parametrize("shape", list(UPSTREAM), ids=lambda shape: shape.__name__)
def test_each_field_is_upstreams_with_its_json_type(shape: type) -> None:
    assert not vars(shape)["__required_keys__"]  # every key may be missing on the wire
    properties = [definitions()[name]["properties"] for name in UPSTREAM[shape]]
    for field, annotation in typing.get_type_hints(shape).items():
        found = [p[field] for p in properties if field in p]
        assert found, f"{shape.__name__}.{field} is not a field of {UPSTREAM[shape]}"
        assert json_type(annotation) in {schema_type(p) for p in found}, f"{shape.__name__}.{field}"


def test_the_helpers_hand_out_the_objects_own_dicts() -> None:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
    ready = {"type": "Ready", "status": "True"}
    pod = {"metadata": {"name": "p", "ownerReferences": ["junk", ref]},
           "status": {"conditions": [{"type": "PodScheduled", "status": "True"}, ready]}}
    assert metadata(pod) is pod["metadata"]
    assert owner_references(pod) == [ref] and owner_references(pod)[0] is ref
    assert controller_of(pod) is ref
    assert ready_condition(pod) is ready
    assert find_condition(status_conditions(pod), "Ready") is ready
    assert controller_of({"metadata": {"ownerReferences": "junk"}}) is None
