"""The controller-manager Deployment: the manager and the webhook, two containers of one image.

As OpenKruise's ``kruise-controller-manager``: several replicas, one of which leads (the
manager's ``--leader-elect``, a Lease in the pod's own namespace) while every replica serves
the webhook behind its Service. The pod runs non-root with a read-only root filesystem (an
``emptyDir`` at ``/tmp`` is the one writable place), no privilege escalation and no
capabilities. What the processes write goes there: the webhook's certificate files to a private
directory under ``TMPDIR`` or ``/tmp`` (its ``--cert-dir`` default, so no ``--cert-dir`` is
given; the install test checks where they land), a kubeconfig's inline TLS data likewise.

Probes: ``/healthz`` on the manager's health port for both liveness and readiness. Not
``/readyz``: it answers 200 only once the controllers' caches have synced, and a standby
replica (not leading) starts no controllers, so it would never be ready, and a rolling update
that waits for a new pod to be ready would never finish. The webhook container is ready once
its port accepts connections. ``/metrics`` is served on the health port too (kubeloop's manager
has one HTTP server for probes and metrics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubeloop.install.rbac import SERVICE_ACCOUNT
from kubeloop.webhook.configuration import CONTAINER_PORT

Obj = dict[str, Any]

NAME = "kubeloop-controller-manager"
LABELS = {"app.kubernetes.io/name": NAME}
"""The pod labels; :func:`kubeloop.webhook.configuration.webhook_service` selects them by default."""
HEALTH_PORT = 8000
"""OpenKruise's health probe port."""
DEFAULT_REPLICAS = 2
"""OpenKruise's default: one leads, one stands by, both serve the webhook."""

_NAMESPACE_ENV = {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
_SECURITY_CONTEXT: Obj = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def manager_args(controllers: Sequence[str]) -> list[str]:
    """The ``kubeloop`` arguments of the manager container (``$(POD_NAMESPACE)`` is expanded by
    the kubelet from the container's environment)."""
    return ["controllers", "--controllers", ",".join(controllers), "--leader-elect",
            "--leader-elect-namespace", "$(POD_NAMESPACE)", "--health-host", "0.0.0.0",
            "--health-port", str(HEALTH_PORT)]


def webhook_args() -> list[str]:
    return ["webhook", "--namespace", "$(POD_NAMESPACE)", "--port", str(CONTAINER_PORT)]


def _probe(path: str, period: int) -> Obj:
    return {"httpGet": {"path": path, "port": "health"}, "periodSeconds": period, "failureThreshold": 3}


def deployment(namespace: str, image: str, controllers: Sequence[str], replicas: int = DEFAULT_REPLICAS) -> Obj:
    """The Deployment running ``controllers`` (their names as ``kubeloop controllers`` takes them)."""
    manager = {
        "name": "manager",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": manager_args(controllers),
        "env": [dict(_NAMESPACE_ENV)],
        "ports": [{"name": "health", "containerPort": HEALTH_PORT, "protocol": "TCP"}],
        "livenessProbe": {**_probe("/healthz", 10), "initialDelaySeconds": 5},
        "readinessProbe": _probe("/healthz", 5),
        # OpenKruise's requests and memory limit. No CPU limit: throttling the event loop delays
        # the Lease renewals, and a leader that misses its renew deadline hands over.
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": dict(_SECURITY_CONTEXT),
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    webhook = {
        "name": "webhook",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": webhook_args(),
        "env": [dict(_NAMESPACE_ENV)],
        "ports": [{"name": "webhook", "containerPort": CONTAINER_PORT, "protocol": "TCP"}],
        "readinessProbe": {"tcpSocket": {"port": "webhook"}, "periodSeconds": 5, "failureThreshold": 3},
        "resources": {"requests": {"cpu": "50m", "memory": "96Mi"}, "limits": {"memory": "256Mi"}},
        "securityContext": dict(_SECURITY_CONTEXT),
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": namespace, "labels": dict(LABELS)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(LABELS)},
            "minReadySeconds": 3,
            # New pods are ready before old ones go: the webhook, failing closed, always has a
            # replica behind its Service (OpenKruise's strategy).
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "100%"}},
            "template": {
                "metadata": {"labels": dict(LABELS)},
                "spec": {
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "terminationGracePeriodSeconds": 10,
                    # Replicas on different nodes where possible: losing a node loses one.
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100,
                        "podAffinityTerm": {"labelSelector": {"matchLabels": dict(LABELS)},
                                            "topologyKey": "kubernetes.io/hostname"}}]}},
                    "containers": [manager, webhook],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }
