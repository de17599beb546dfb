"""Object builders and resource types shared by the storage tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeloop.server.storage import ResourceType, Storage

OpenStore = Callable[..., Storage]
"""The ``open_store`` fixture: opens a store of the test's mode with the given options."""

PODS = ResourceType("", "pods")
NAMESPACES = ResourceType("", "namespaces")
DEPLOYMENTS = ResourceType("apps", "deployments")


def make_object(name: str, namespace: str = "default", **fields: Any) -> dict[str, Any]:
    """A minimal namespaced object (cluster-scoped when namespace is "")."""
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata, **fields}


def revision_of(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def names(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["metadata"].get("namespace", ""), item["metadata"]["name"]) for item in items]
