import pytest

from kubeloop.client import (
    CONFIG_MAPS,
    CUSTOM_RESOURCE_DEFINITIONS,
    DEPLOYMENTS,
    EVENTS,
    EVENTS_V1,
    NAMESPACES,
    PODS,
    Resource,
    find_builtin,
)
from kubeloop.client._resources import split_qualified_name


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "sub", "path"),
    [
        (PODS, "default", None, None, "/api/v1/namespaces/default/pods"),
        (PODS, None, None, None, "/api/v1/pods"),
        (PODS, "ns", "p", "status", "/api/v1/namespaces/ns/pods/p/status"),
        (DEPLOYMENTS, "ns", "web", "scale", "/apis/apps/v1/namespaces/ns/deployments/web/scale"),
        (NAMESPACES, "ignored", "kube-system", None, "/api/v1/namespaces/kube-system"),
        (CUSTOM_RESOURCE_DEFINITIONS, None, "a.b.c", None,
         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.c"),
        (CONFIG_MAPS, "ns", "we ird/x", None, "/api/v1/namespaces/ns/configmaps/we%20ird%2Fx"),
    ],
)
def test_paths(resource: Resource, namespace: str | None, name: str | None, sub: str | None, path: str) -> None:
    assert resource.path(namespace, name, sub) == path


def test_empty_name_is_rejected() -> None:
    with pytest.raises(ValueError):
        PODS.path("ns", "")


def test_api_version_and_group_resource() -> None:
    assert PODS.api_version == "v1"
    assert DEPLOYMENTS.api_version == "apps/v1"
    assert DEPLOYMENTS.group_resource == "deployments.apps"
    assert PODS.group_resource == "pods"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("deployments", DEPLOYMENTS),
        ("deployment", DEPLOYMENTS),
        ("Deployment", DEPLOYMENTS),
        ("deploy", DEPLOYMENTS),
        ("deployments.apps", DEPLOYMENTS),
        ("deployments.v1.apps", DEPLOYMENTS),
        ("po", PODS),
        ("events", EVENTS),
        ("events.events.k8s.io", EVENTS_V1),
        ("crds", CUSTOM_RESOURCE_DEFINITIONS),
        ("deployments.extensions", None),
        ("deployments.v2.apps", None),
        ("widgets", None),
    ],
)
def test_find_builtin(name: str, expected: Resource | None) -> None:
    assert find_builtin(name) == expected


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("pods", ("pods", None, None)),
        ("deployments.apps", ("deployments", None, "apps")),
        ("widgets.example.com", ("widgets", None, "example.com")),
        ("widgets.v1alpha1.example.com", ("widgets", "v1alpha1", "example.com")),
        ("jobs.v1.batch", ("jobs", "v1", "batch")),
    ],
)
def test_split_qualified_name(name: str, parts: tuple[str, str | None, str | None]) -> None:
    assert split_qualified_name(name) == parts
