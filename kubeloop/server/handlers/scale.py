"""The ``/scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's replicas.

GET builds the Scale from the parent; PUT and PATCH change the Scale and write its
``spec.replicas`` (and its resourceVersion, so a stale one conflicts) back into the parent
through the ordinary update path, which bumps the parent's generation.
"""

from __future__ import annotations

from typing import Any

from kubeloop.api.labels import label_selector_string
from kubeloop.api.status import bad_request_error, invalid_error
from kubeloop.server import admission
from kubeloop.server.apply import Manager
from kubeloop.server.handlers.common import expected_revision
from kubeloop.server.objects import update_object
from kubeloop.server.registry import ResourceInfo, ScaleSpec
from kubeloop.server.state import ServerState, copy_object

Obj = dict[str, Any]

SCALE_GROUP = "autoscaling"
SCALE_API_VERSION = "autoscaling/v1"


def _path(text: str) -> list[str]:
    return [p for p in text.split(".") if p]


def _read(obj: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _write(obj: Obj, path: list[str], value: Any) -> None:
    for part in path[:-1]:
        child = obj.get(part)
        if not isinstance(child, dict):
            child = obj[part] = {}
        obj = child
    obj[path[-1]] = value


def _spec_of(info: ResourceInfo) -> ScaleSpec:
    assert info.scale is not None, "routing only sends /scale to kinds that have it"
    return info.scale


def scale_of(info: ResourceInfo, parent: Obj) -> Obj:
    """The Scale object describing ``parent``."""
    spec = _spec_of(info)
    meta = parent["metadata"]
    scale_meta = {key: meta[key] for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                  if key in meta}
    replicas = _read(parent, _path(spec.spec_replicas_path))
    status: Obj = {"replicas": _read(parent, _path(spec.status_replicas_path)) or 0}
    if spec.builtin_selector:
        selector = _read(parent, ["spec", "selector"])
        if isinstance(selector, dict):
            status["selector"] = label_selector_string(selector)
    elif spec.label_selector_path:
        selector_text = _read(parent, _path(spec.label_selector_path))
        if isinstance(selector_text, str) and selector_text:
            status["selector"] = selector_text
    return {"kind": "Scale", "apiVersion": SCALE_API_VERSION, "metadata": scale_meta,
            "spec": {"replicas": replicas if isinstance(replicas, int) else 0}, "status": status}


def requested_scale(info: ResourceInfo, parent: Obj, scale: Any, name: str) -> Obj:
    """The Scale a request asks for: ``parent``'s, with the request's replicas (400 on a bad body)."""
    if not isinstance(scale, dict):
        raise bad_request_error("the body must be a Scale object")
    kind, version = scale.get("kind"), scale.get("apiVersion")
    if kind not in (None, "", "Scale") or version not in (None, "", SCALE_API_VERSION):
        raise bad_request_error(f"the body must be an {SCALE_API_VERSION} Scale, not {version} {kind}")
    meta = scale.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    if meta.get("name") not in (None, "", name):
        raise bad_request_error(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                                f"({name})")
    if meta.get("namespace") not in (None, "", parent["metadata"].get("namespace", "")):
        # checkName in k8s.io/apiserver pkg/endpoints/handlers/rest.go, for PUT and PATCH alike.
        raise bad_request_error("the namespace of the provided object does not match the namespace sent on the "
                                "request")
    spec = scale.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise bad_request_error("spec must be an object")
    replicas = (spec or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise bad_request_error(f"unable to decode Scale: spec.replicas must be an integer, not {replicas!r}")
    requested: Obj = copy_object(scale_of(info, parent))
    requested["spec"]["replicas"] = replicas
    rv = meta.get("resourceVersion")
    if isinstance(rv, str):
        requested["metadata"]["resourceVersion"] = rv
    else:
        requested["metadata"].pop("resourceVersion", None)
    return requested


def apply_scale(state: ServerState, info: ResourceInfo, parent: Obj, scale: Any, name: str, dry_run: bool,
                manager: Manager | None = None) -> Obj:
    """Write ``scale`` (a requested Scale) into ``parent``; returns the resulting Scale.

    ``manager`` (with subresource ``scale``) gets the replicas field in ``managedFields``.
    """
    requested = requested_scale(info, parent, scale, name)
    current_scale = scale_of(info, parent)
    rv = requested["metadata"].pop("resourceVersion", None)
    if "resourceVersion" in current_scale["metadata"]:
        requested["metadata"]["resourceVersion"] = current_scale["metadata"]["resourceVersion"]
    errors = admission.validate_update(SCALE_GROUP, "v1", "Scale", requested, current_scale,
                                       namespaced=info.namespaced)
    if errors:
        raise invalid_error("Scale", SCALE_GROUP, name, errors)
    expected_revision(info, name, rv if isinstance(rv, str) else None, parent["metadata"]["resourceVersion"])
    new = copy_object(parent)
    _write(new, _path(_spec_of(info).spec_replicas_path), requested["spec"]["replicas"])
    stored = update_object(state, info, new, parent, status=False, dry_run=dry_run, manager=manager)
    return scale_of(info, stored)
