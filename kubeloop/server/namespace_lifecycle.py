"""Namespace lifecycle rules of kube-apiserver: who may create in, delete, and finalize a namespace.

Pure functions on plain dicts (no store access), following:

- upstream's NamespaceLifecycle admission (``plugin/pkg/admission/namespace/lifecycle``): no
  new content in a namespace that is missing (404) or terminating (403, with a
  ``NamespaceTerminating`` cause), and the immortal namespaces ``default``, ``kube-system``
  and ``kube-public`` cannot be deleted;
- upstream's namespace REST storage (``pkg/registry/core/namespace/storage``, ``Delete``):
  the first DELETE only marks the namespace (``deletionTimestamp``, phase ``Terminating``)
  and answers 200 with it; the namespace goes when its ``spec.finalizers`` and
  ``metadata.finalizers`` are both empty (``ShouldDeleteNamespaceDuringUpdate``);
- upstream's namespace strategies (``pkg/registry/core/namespace/strategy.go``): the main
  endpoint cannot change ``spec.finalizers``; the ``finalize`` subresource changes them (and
  metadata) but never ``status``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import ApiError, forbidden_error, not_found_error
from kubeloop.server.registry import ResourceInfo

Obj = dict[str, Any]

KUBERNETES_FINALIZER = "kubernetes"
"""The ``spec.finalizers`` token the namespace content deleter removes once the namespace is empty."""

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
"""Namespaces the lifecycle admission refuses to delete (upstream's list; kube-node-lease is not in it)."""

TERMINATING_CAUSE = "NamespaceTerminating"


def is_namespace(info: ResourceInfo) -> bool:
    return info.group == "" and info.resource == "namespaces"


def admission_name(obj: Mapping[str, Any]) -> str:
    """The name an admission error names: the object's name, its ``generateName``, or ``Unknown``.

    As upstream's ``admission.NewForbidden`` (``extractResourceName``): names are generated after
    admission, so a ``generateName`` create is reported under its prefix.
    """
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("name") or meta.get("generateName") or "Unknown")


def check_open_for_create(info: ResourceInfo, obj: Mapping[str, Any], namespace: str,
                          stored_namespace: Mapping[str, Any] | None) -> None:
    """Refuse to create ``obj`` (of ``info``) in ``namespace`` unless it exists and is not terminating."""
    if stored_namespace is None:
        raise not_found_error("namespaces", "", namespace)
    if not stored_namespace["metadata"].get("deletionTimestamp"):
        return
    error = forbidden_error(info.resource, info.group, admission_name(obj),
                            f"unable to create new content in namespace {namespace} because it is being terminated")
    details = dict(error.details or {})
    details["causes"] = [{"reason": TERMINATING_CAUSE, "message": f"namespace {namespace} is being terminated",
                          "field": "metadata.namespace"}]
    raise ApiError(error.code, error.reason, error.message, details)


def check_deletable(name: str) -> None:
    """The immortal namespaces answer 403 to DELETE."""
    if name in IMMORTAL_NAMESPACES:
        raise forbidden_error("namespaces", "", name, "this namespace may not be deleted")


def spec_finalizers(namespace: Mapping[str, Any]) -> list[str]:
    spec = namespace.get("spec")
    finalizers = spec.get("finalizers") if isinstance(spec, Mapping) else None
    return [f for f in finalizers if isinstance(f, str)] if isinstance(finalizers, list) else []


def is_terminating(namespace: Mapping[str, Any]) -> bool:
    return bool(namespace["metadata"].get("deletionTimestamp"))


def is_finalized(namespace: Mapping[str, Any]) -> bool:
    """No ``spec.finalizers`` left: the namespace may go once its metadata finalizers are gone too."""
    return not spec_finalizers(namespace)


def mark_terminating(namespace: Obj, now: str, metadata_finalizers: list[str]) -> None:
    """Turn the private copy ``namespace`` into its first-DELETE state, in place."""
    meta = namespace["metadata"]
    meta.setdefault("deletionTimestamp", now)
    if metadata_finalizers:
        meta["finalizers"] = metadata_finalizers
    else:
        meta.pop("finalizers", None)
    status = namespace.get("status")
    if not isinstance(status, dict):
        status = namespace["status"] = {}
    status["phase"] = "Terminating"


def keep_spec_finalizers(new: Obj, old: Mapping[str, Any]) -> None:
    """Main-endpoint writes leave ``spec.finalizers`` as stored (only ``/finalize`` changes them)."""
    old_spec = old.get("spec")
    old_finalizers = old_spec.get("finalizers") if isinstance(old_spec, Mapping) else None
    spec = new.get("spec")
    if not isinstance(spec, dict):
        if old_finalizers is None:
            return
        spec = new["spec"] = {}
    if old_finalizers is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = list(old_finalizers)


def without_finalizer(finalizers: list[str], token: str) -> list[str]:
    """``finalizers`` minus ``token``, sorted and deduplicated (as upstream's finalizeNamespace)."""
    return sorted({f for f in finalizers if f != token})
