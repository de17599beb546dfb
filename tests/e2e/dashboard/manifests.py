"""Manifests shared by the dashboard's end-to-end tests."""

from __future__ import annotations


def web_deployment(image: str, *, replicas: int = 4, ready_delay: str = "0.6",
                   extra_annotations: dict[str, str] | None = None, **spec: object) -> dict[str, object]:
    """A Deployment whose pods take ``ready_delay`` seconds to turn ready (so a rollout can be seen)."""
    annotations = {"sim.kubeloop.io/ready-delay": ready_delay, **(extra_annotations or {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": annotations},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
            **spec,
        },
    }
