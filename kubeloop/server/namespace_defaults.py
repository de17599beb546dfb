"""What every live namespace holds: the ``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap.

Upstream, kube-controller-manager's serviceaccounts controller
(``pkg/controller/serviceaccount/serviceaccounts_controller.go``) creates ``default`` in every
namespace that is not terminating, and its root-ca-cert-publisher
(``pkg/controller/certificates/rootcacertpublisher/publisher.go``) keeps ``kube-root-ca.crt``
holding the cluster CA under ``ca.crt``; both recreate what is deleted and the publisher
restores changed data. Here the same happens inside the server: synchronously when a
namespace is created (so a pod can be created in a fresh namespace at once; upstream clients
may briefly see the account missing), at start for every namespace, and when one of them is
deleted or changed (:mod:`kubeloop.server.namespace_finalizer` watches for that).

The functions write through :func:`kubeloop.server.objects.create_object` /
:func:`~kubeloop.server.objects.update_object`, so watchers see ordinary ADDED / MODIFIED events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import ApiError
from kubeloop.server.namespace_lifecycle import is_terminating
from kubeloop.server.objects import create_object, update_object
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import ResourceType

log = logging.getLogger(__name__)

Obj = dict[str, Any]

DEFAULT_SERVICE_ACCOUNT = "default"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
                       "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
                       "guaranteed across distributions of Kubernetes clusters.")
"""The annotation upstream's publisher puts on the ConfigMap (a fact carried over)."""

_NAMESPACES = ResourceType("", "namespaces")
_SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")
_CONFIG_MAPS = ResourceType("", "configmaps")


def default_service_account(namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace}}


def root_ca_config_map(namespace: str, ca: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": namespace,
                         "annotations": {DESCRIPTION_ANNOTATION: ROOT_CA_DESCRIPTION}},
            "data": {ROOT_CA_KEY: ca}}


def root_ca_repaired(current: Mapping[str, Any], ca: str) -> Obj | None:
    """``current`` with the CA data and annotation restored, or None when nothing differs.

    As the publisher: ``data`` becomes exactly ``{"ca.crt": CA}`` and the description
    annotation is put back; other metadata is kept.
    """
    annotations = current["metadata"].get("annotations") or {}
    if current.get("data") == {ROOT_CA_KEY: ca} and annotations.get(DESCRIPTION_ANNOTATION) == ROOT_CA_DESCRIPTION:
        return None
    repaired: Obj = copy_object(current)
    repaired["data"] = {ROOT_CA_KEY: ca}
    repaired.pop("binaryData", None)
    repaired["metadata"]["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: ROOT_CA_DESCRIPTION}
    return repaired


def ensure_namespace_defaults(state: ServerState, namespace: str) -> None:
    """Create (or repair) the default content of ``namespace``, unless it is missing or terminating."""
    found = state.storage.get(_NAMESPACES, "", namespace)
    if found is None or is_terminating(found):
        return
    try:
        _ensure_service_account(state, namespace)
        if state.root_ca:
            _ensure_root_ca(state, namespace, state.root_ca)
    except ApiError as error:
        # A lost race with a client write: the next event or start fixes it.
        log.warning("could not create the default content of namespace %s: %s", namespace, error)


def _ensure_service_account(state: ServerState, namespace: str) -> None:
    if state.storage.get(_SERVICE_ACCOUNTS, namespace, DEFAULT_SERVICE_ACCOUNT) is not None:
        return
    info = state.registry.lookup("", "v1", "serviceaccounts")
    if info is not None:
        create_object(state, info, default_service_account(namespace), dry_run=False)


def _ensure_root_ca(state: ServerState, namespace: str, ca: str) -> None:
    info = state.registry.lookup("", "v1", "configmaps")
    if info is None:
        return
    current = state.storage.get(_CONFIG_MAPS, namespace, ROOT_CA_CONFIGMAP)
    if current is None:
        create_object(state, info, root_ca_config_map(namespace, ca), dry_run=False)
        return
    if current["metadata"].get("deletionTimestamp"):
        return
    repaired = root_ca_repaired(current, ca)
    if repaired is not None:
        update_object(state, info, repaired, current, status=False, dry_run=False)


def ensure_all_namespace_defaults(state: ServerState) -> None:
    """At start: every live namespace gets its default content (data directories of older versions)."""
    namespaces, _, _ = state.storage.list(_NAMESPACES, None)
    for namespace in namespaces:
        ensure_namespace_defaults(state, namespace["metadata"]["name"])
