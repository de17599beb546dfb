"""Metadata-only views of objects and lists: ``meta.k8s.io`` PartialObjectMetadata(List).

As upstream's ``asPartialObjectMetadata`` / ``asPartialObjectMetadataList`` (k8s.io/apiserver
pkg/endpoints/handlers/response.go) and ``meta.AsPartialObjectMetadata`` (apimachinery
pkg/api/meta): an object becomes ``{"kind": "PartialObjectMetadata", "apiVersion":
"meta.k8s.io/<v>", "metadata": <its whole metadata>}``; a list becomes a
``PartialObjectMetadataList`` with the list's metadata (resourceVersion, continue,
remainingItemCount) and one such item per object. Upstream builds the items by appending to a
nil slice, so an empty list encodes ``"items": null``; that is reproduced.

Asking for the list form of one object, or the object form of a list, is a 406 whose message
names the Go type upstream's storage returned (``%T``): ``*core.Pod``, ``*apps.DeploymentList``,
``*unstructured.Unstructured`` for custom resources; :func:`go_type_name` derives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import ApiError

Obj = dict[str, Any]

META_GROUP = "meta.k8s.io"

_INTERNAL_PACKAGES = {"": "core", "events.k8s.io": "core"}
"""Groups whose internal Go package is not the group's first label (events.k8s.io serves core.Event)."""


def go_type_name(group: str, kind: str, *, custom: bool, is_list: bool) -> str:
    """The ``%T`` of what upstream's storage returns for ``kind``: internal types for built-ins
    (package = the group's first DNS label, ``core`` for the legacy group), unstructured for
    custom resources."""
    if custom:
        return "*unstructured.UnstructuredList" if is_list else "*unstructured.Unstructured"
    package = _INTERNAL_PACKAGES.get(group, group.split(".", 1)[0])
    return f"*{package}.{kind}List" if is_list else f"*{package}.{kind}"


def not_acceptable(message: str) -> ApiError:
    """upstream's errNotAcceptable in handlers/response.go: 406, reason NotAcceptable, no details."""
    return ApiError(406, "NotAcceptable", message)


def partial_object_metadata(obj: Mapping[str, Any], version: str) -> Obj:
    """The object reduced to its metadata, as ``meta.k8s.io/<version>`` PartialObjectMetadata."""
    meta = obj.get("metadata")
    return {"kind": "PartialObjectMetadata", "apiVersion": f"{META_GROUP}/{version}",
            "metadata": meta if isinstance(meta, Mapping) else {}}


def partial_object_metadata_list(body: Mapping[str, Any], version: str) -> Obj:
    """A list reduced to list metadata and PartialObjectMetadata items."""
    items = [partial_object_metadata(item, version) for item in body.get("items") or ()]
    meta = body.get("metadata")
    return {"kind": "PartialObjectMetadataList", "apiVersion": f"{META_GROUP}/{version}",
            "metadata": meta if isinstance(meta, Mapping) else {}, "items": items or None}


def object_as(kind: str, obj: Mapping[str, Any], version: str, type_name: str) -> Obj:
    """One object converted to ``kind`` (406 when ``kind`` is the list form)."""
    if kind == "PartialObjectMetadataList":
        raise not_acceptable("you requested PartialObjectMetadataList, but the requested object is not a list "
                             f"({type_name})")
    return partial_object_metadata(obj, version)


def list_as(kind: str, body: Mapping[str, Any], version: str, type_name: str) -> Obj:
    """A list converted to ``kind`` (406 when ``kind`` is the object form)."""
    if kind == "PartialObjectMetadata":
        raise not_acceptable(f"you requested PartialObjectMetadata, but the requested object is a list ({type_name})")
    return partial_object_metadata_list(body, version)
