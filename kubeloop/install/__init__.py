"""Install manifests for running kubeloop's controllers and webhook in a cluster.

Pure functions returning JSON objects, built from the sources the embedded server and the
processes use, so an install cannot drift from them: the CRDs are
:data:`kubeloop.server.crds.BUILTIN_CRDS`, the RBAC rules those each controller declares in
:mod:`kubeloop.controllers.policy` and the webhook's in :mod:`kubeloop.webhook.configuration`,
the webhook's Service and configurations come from that module too.

* :mod:`.rbac`: ServiceAccount, ClusterRoles, Roles and their bindings for a controller selection;
* :mod:`.workload`: the controller-manager Deployment;
* :mod:`.manifests`: the whole install (or its CRDs, or its RBAC) for :class:`InstallOptions`;
* :mod:`.render`: objects as multi-document YAML;
* :mod:`.tree`: the committed ``deploy/`` kustomize tree.

The layout follows OpenKruise's installation (``config/`` and its Helm chart): one namespace,
one ServiceAccount, a manager ClusterRole, a leader-election Role, a Deployment whose pods run
the manager and serve the webhook behind a Service.
"""

from kubeloop.install.manifests import InstallOptions, crds, install_manifests, rbac_manifests

__all__ = ["InstallOptions", "crds", "install_manifests", "rbac_manifests"]
