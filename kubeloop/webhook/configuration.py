"""The names and routes of kubeloop's webhook: one place for the server that serves it and the
manifests that install it.

Install manifests (``kubeloop manifests``, ``deploy/``) and the ``kubeloop webhook`` process
both read these facts, so the Service, the webhook configurations, the Secret holding the
serving certificate and the served paths cannot drift apart. Names follow OpenKruise's
installation (``kruise-webhook-service``, ``kruise-webhook-certs``,
``kruise-{mutating,validating}-webhook-configuration``) with the ``kubeloop`` prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_NAMESPACE = "kubeloop-system"
"""The namespace kubeloop's controllers and webhook are installed into by default."""

SERVICE_NAME = "kubeloop-webhook-service"
SERVICE_PORT = 443
CONTAINER_PORT = 9876
"""The port the webhook serves HTTPS on inside its pod (OpenKruise's default webhook port)."""

CERT_SECRET = "kubeloop-webhook-certs"
"""The Secret (in the install namespace) holding the webhook's CA and serving certificate."""

MUTATING_CONFIGURATION = "kubeloop-mutating-webhook-configuration"
VALIDATING_CONFIGURATION = "kubeloop-validating-webhook-configuration"


@dataclass(frozen=True)
class Route:
    """One webhook: its name in the configuration, the path it is served on, what it matches."""

    name: str
    path: str
    mutating: bool
    api_group: str
    api_version: str
    resource: str
    operations: tuple[str, ...]


CLONESET_DEFAULTING = Route("mcloneset.kubeloop.io", "/mutate-apps-kruise-io-v1alpha1-cloneset", True,
                            "apps.kruise.io", "v1alpha1", "clonesets", ("CREATE", "UPDATE"))
CLONESET_VALIDATION = Route("vcloneset.kubeloop.io", "/validate-apps-kruise-io-v1alpha1-cloneset", False,
                            "apps.kruise.io", "v1alpha1", "clonesets", ("CREATE", "UPDATE"))
POD_MUTATION = Route("mpod.kubeloop.io", "/mutate-pod", True, "", "v1", "pods", ("CREATE",))

ROUTES = (CLONESET_DEFAULTING, CLONESET_VALIDATION, POD_MUTATION)
"""Every webhook kubeloop serves."""


def service_dns_names(namespace: str) -> list[str]:
    """The names the serving certificate must hold for the API server to reach the Service."""
    return [SERVICE_NAME, f"{SERVICE_NAME}.{namespace}", f"{SERVICE_NAME}.{namespace}.svc",
            f"{SERVICE_NAME}.{namespace}.svc.cluster.local"]


def _webhook(route: Route, namespace: str, ca_bundle: str | None) -> dict[str, Any]:
    client_config: dict[str, Any] = {
        "service": {"namespace": namespace, "name": SERVICE_NAME, "path": route.path, "port": SERVICE_PORT},
    }
    if ca_bundle:
        client_config["caBundle"] = ca_bundle
    webhook: dict[str, Any] = {
        "name": route.name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client_config,
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "rules": [{"apiGroups": [route.api_group], "apiVersions": [route.api_version],
                   "resources": [route.resource], "operations": list(route.operations), "scope": "Namespaced"}],
    }
    if route.resource == "pods":
        # A pod webhook that fails closed must never stand between the cluster and its own
        # control plane, nor between the webhook and its own pods.
        webhook["namespaceSelector"] = {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": ["kube-system", namespace]}]}
    if route.mutating:
        webhook["reinvocationPolicy"] = "Never"
    return webhook


def webhook_configurations(namespace: str = DEFAULT_NAMESPACE, ca_bundle: str | None = None) -> list[dict[str, Any]]:
    """The Mutating- and ValidatingWebhookConfiguration, as JSON; ``caBundle`` only when given."""
    mutating = [_webhook(r, namespace, ca_bundle) for r in ROUTES if r.mutating]
    validating = [_webhook(r, namespace, ca_bundle) for r in ROUTES if not r.mutating]
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": MUTATING_CONFIGURATION}, "webhooks": mutating},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": VALIDATING_CONFIGURATION}, "webhooks": validating},
    ]


def webhook_service(namespace: str = DEFAULT_NAMESPACE, selector: dict[str, str] | None = None) -> dict[str, Any]:
    """The Service the API server calls the webhook through."""
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": namespace},
        "spec": {"ports": [{"name": "https", "port": SERVICE_PORT, "targetPort": CONTAINER_PORT}],
                 "selector": dict(selector or {"app.kubernetes.io/name": "kubeloop-controller-manager"})},
    }


WEBHOOK_CLUSTER_RULES: tuple[dict[str, Any], ...] = (
    # The podsToDelete rule of CloneSet validation reads the named pods.
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    # The caBundle of both configurations is kept current at start.
    {"apiGroups": ["admissionregistration.k8s.io"],
     "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
     "resourceNames": [MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION],
     "verbs": ["get", "update", "patch"]},
)
"""What the webhook needs cluster-wide (bound by the install's ClusterRole)."""

WEBHOOK_NAMESPACE_RULES: tuple[dict[str, Any], ...] = (
    # ``create`` cannot be limited by name (the name is not known to the authorizer before the
    # object exists), so it is granted in the install namespace only.
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [CERT_SECRET], "verbs": ["get", "update"]},
)
"""What the webhook needs in its own namespace (bound by a Role there): its certificate Secret."""
