"""The whole install, or a part of it, for a namespace, an image and a controller selection.

:func:`install_manifests` lists, in the order ``kubectl apply`` should create them: the
Namespace, the CRDs, the RBAC (:mod:`.rbac`), the webhook Service, the Deployment
(:mod:`.workload`) and the two webhook configurations. The configurations carry no
``caBundle``: the webhook writes its CA there when it starts, as OpenKruise's does, so no
cert-manager is needed. CloneSet only is the default selection: in a real cluster
kube-controller-manager already runs the other controllers (see
:mod:`kubeloop.controllers.coexistence`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kubeloop._version import __version__
from kubeloop.install.rbac import rbac_objects
from kubeloop.install.workload import DEFAULT_REPLICAS, LABELS, deployment
from kubeloop.server.crds import BUILTIN_CRDS
from kubeloop.webhook.configuration import DEFAULT_NAMESPACE, webhook_configurations, webhook_service

Obj = dict[str, Any]

DEFAULT_CONTROLLERS = ("cloneset",)
DEFAULT_IMAGE = f"kubeloop:{__version__}"
"""The tag the ``Dockerfile`` is built as in the docs; ``--image`` names a pushed one."""


@dataclass(frozen=True)
class InstallOptions:
    namespace: str = DEFAULT_NAMESPACE
    image: str = DEFAULT_IMAGE
    controllers: tuple[str, ...] = DEFAULT_CONTROLLERS
    replicas: int = DEFAULT_REPLICAS


def crds() -> list[Obj]:
    """The CustomResourceDefinitions the embedded server has built in, as ``kubectl apply`` takes
    them (they carry no server-set fields: nothing to strip)."""
    return [copy.deepcopy(dict(crd)) for crd in BUILTIN_CRDS]


def namespace_object(namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}


def rbac_manifests(options: InstallOptions) -> list[Obj]:
    """ServiceAccount, roles and bindings (they need the namespace to exist)."""
    return rbac_objects(options.namespace, options.controllers)


def install_manifests(options: InstallOptions = InstallOptions()) -> list[Obj]:
    """Everything, in creation order."""
    return [
        namespace_object(options.namespace),
        *crds(),
        *rbac_manifests(options),
        webhook_service(options.namespace, dict(LABELS)),
        deployment(options.namespace, options.image, options.controllers, options.replicas),
        *webhook_configurations(options.namespace),
    ]
