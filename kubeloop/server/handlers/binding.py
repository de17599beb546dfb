"""``POST pods/{name}/binding``: how a scheduler assigns a pod to a node.

The one way to set ``spec.nodeName`` after creation (the pod spec is otherwise immutable). As
upstream: the Binding's name must be the pod's, its target a Node with a name; a pod already
assigned, being deleted, or with another uid (a precondition in the Binding) answers 409; on
success the pod gets the node, the Binding's annotations and ``PodScheduled=True``, and the
answer is a ``201`` Success Status.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kubeloop.api.status import (
    bad_request_error,
    conflict_error,
    invalid_error,
    not_supported,
    required,
)
from kubeloop.server.handlers.admitted import admit_served, write_options
from kubeloop.server.handlers.common import is_dry_run, read_body, storage_error
from kubeloop.server.handlers.read import get_object, output_for
from kubeloop.server.requests import decode_document, require_object
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import StorageError
from kubeloop.server.webhook_admission.matching import GVK

Obj = dict[str, Any]


def _check_binding(binding: Obj, name: str) -> tuple[str, str]:
    """``(node name, uid precondition)`` of a valid Binding for pod ``name``."""
    meta = binding.get("metadata") if isinstance(binding.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    if meta.get("name") != name:
        raise bad_request_error("name in URL does not match name in Binding object")
    target = binding.get("target") if isinstance(binding.get("target"), dict) else {}
    assert isinstance(target, dict)
    errors = []
    kind = target.get("kind") or ""
    if kind not in ("", "Node"):
        errors.append(not_supported("target.kind", kind, ["Node", "<empty>"]))
    node = target.get("name")
    if not isinstance(node, str) or not node:
        errors.append(required("target.name"))
    if errors:
        raise invalid_error("Binding", "", name, errors)
    uid = meta.get("uid")
    return str(node), uid if isinstance(uid, str) else ""


async def handle_binding(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    """``pods/{name}/binding``, or the ``bindings`` resource (the pod named by the Binding itself)."""
    output = output_for(state, request, target.info, api_version="v1", kind="Binding")
    raw = await read_body(request)
    binding = require_object(decode_document(raw, request.headers.get("Content-Type"), into=("v1", "Binding")))
    body_meta = binding.get("metadata")
    body_namespace = body_meta.get("namespace") if isinstance(body_meta, dict) else None
    if body_namespace not in (None, "", target.namespace or ""):
        # EnsureObjectNamespaceMatchesRequestNamespace, which upstream's create handler runs first.
        raise bad_request_error("the namespace of the provided object does not match the namespace sent on the "
                                "request")
    # Webhooks see the Binding as sent (CREATE of pods/binding, or of the bindings resource).
    warnings = await admit_served(state, target, "CREATE", binding, None, GVK("", "v1", "Binding"),
                                  dry_run=is_dry_run(request), options=write_options(request, "CreateOptions"))
    if target.info.resource == "bindings":
        pods = state.registry.lookup("", "v1", "pods")
        assert pods is not None, "pods are always served"
        meta = binding.get("metadata")
        named = meta.get("name") if isinstance(meta, dict) else None
        target = Target(pods, target.namespace, named if isinstance(named, str) else "", "binding")
    info = target.info
    name = str(target.name)
    node, uid = _check_binding(binding, name)
    current = get_object(state, target)
    meta = current["metadata"]
    if uid and uid != meta.get("uid"):
        raise conflict_error(info.resource, info.group, name,
                             f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}")
    if meta.get("deletionTimestamp"):
        raise conflict_error(info.resource, info.group, name,
                             f"pod {name} is being deleted, cannot be assigned to a host")
    assigned = (current.get("spec") or {}).get("nodeName")
    if assigned:
        raise conflict_error(info.resource, info.group, name, f'pod {name} is already assigned to node "{assigned}"')
    pod = copy_object(current)
    pod["spec"]["nodeName"] = node
    annotations = (binding.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and annotations:
        pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}),
                                          **{str(k): str(v) for k, v in annotations.items()}}
    status = pod.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": state.now_text()})
    status["conditions"] = conditions
    try:
        state.storage.update(info.resource_type, pod, expected_rv=int(meta["resourceVersion"]))
    except StorageError as error:
        raise storage_error(info, name, error) from None
    return output.answer({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                         201, warnings)

