"""The components' service-account identities, as tests import them: see
:mod:`kubeloop.cluster.identities` (their home, shared with ``kubeloop up``)."""

from __future__ import annotations

from kubeloop.cluster.identities import (
    CONTROLLERS_ACCOUNT,
    KUBELET_ACCOUNT,
    NAMESPACE,
    TOKEN_SECONDS,
    component_objects,
    provision,
)

__all__ = ["CONTROLLERS_ACCOUNT", "KUBELET_ACCOUNT", "NAMESPACE", "TOKEN_SECONDS", "component_objects", "provision"]
