"""Building blocks of our CRD schemas: ``apiextensions.k8s.io/v1`` structural schema fragments
shared by several kinds, and printer columns."""

from __future__ import annotations

from typing import Any

INT32: dict[str, Any] = {"type": "integer", "format": "int32"}
INT_OR_STRING: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}


def described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """``schema`` with a description (a new dict)."""
    return {"description": description, **schema}


def strings(description: str) -> dict[str, Any]:
    """A list of strings."""
    return {"description": description, "type": "array", "items": {"type": "string"}}


def string_map(description: str) -> dict[str, Any]:
    """A map of string to string (labels, annotations)."""
    return {"description": description, "type": "object", "additionalProperties": {"type": "string"}}


LABEL_SELECTOR: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-map-type": "atomic",
    "properties": {
        "matchLabels": string_map("Labels a pod must carry with exactly these values."),
        "matchExpressions": {
            "description": "Further requirements on pod labels; all must hold.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string", "description": "The label key."},
                    "operator": {"type": "string", "description": "In, NotIn, Exists or DoesNotExist."},
                    "values": strings("Values for In and NotIn; empty for Exists and DoesNotExist."),
                },
            },
        },
    },
}
"""A ``metav1.LabelSelector``."""


def column(name: str, path: str, type_: str, description: str, priority: int = 0) -> dict[str, Any]:
    """One ``additionalPrinterColumns`` entry (priority 0: shown without ``-o wide``)."""
    result: dict[str, Any] = {"name": name, "type": type_, "jsonPath": path, "description": description}
    if priority:
        result["priority"] = priority
    return result


def top_level_schema(description: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a kind with ``spec`` and ``status`` (type fields, open metadata)."""
    return {
        "description": description,
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": "The versioned schema of this object."},
            "kind": {"type": "string", "description": "The REST resource this object represents."},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    }
