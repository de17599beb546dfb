"""The official Python client's ``kubernetes.utils`` e2e cases (upstream
``kubernetes/e2e_test/test_utils.py``), restated against the embedded cluster.

``create_from_yaml`` / ``create_from_dict`` / ``create_from_directory`` post each document
(single objects, ``kind: List``, typed lists such as ``NamespaceList`` or an implicit
``ServiceList``, several documents in a file) through the typed API. Where objects already
exist, the client raises ``FailToCreateError`` whose text is the server's Status body verbatim,
so those cases compare kube-apiserver 1.33's exact bytes (compact JSON, field order, trailing
newline). The manifests are written by these tests (upstream's YAML files are not copied).

Not restated: ``TestUtilsUnitTests`` (quantity parsing and formatting, client-side only, no
server involved). ``test_metrics_utilities_integration`` needs metrics-server; kube-apiserver
1.33 without it answers 404 for metrics.k8s.io (upstream then skips), which is what
:func:`test_metrics_api_absent_without_metrics_server` checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config, utils
from kubernetes.client.rest import ApiException

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

Obj = dict[str, Any]
TEST_NAMESPACE = "e2e-test-utils"


def deployment(name: str, replicas: int, app: str, *, labels: dict[str, str] | None = None,
               namespace: str | None = None, container: str = "nginx") -> Obj:
    metadata: Obj = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}},
                                  "spec": {"containers": [{"name": container, "image": "nginx:1.15.4",
                                                           "ports": [{"containerPort": 80}]}]}}}}


def service(name: str, port: int = 99, *, typed: bool = True) -> Obj:
    body: Obj = {"metadata": {"name": name, "labels": {"app": name}},
                 "spec": {"ports": [{"port": port, "protocol": "TCP", "targetPort": 9949}], "selector": {"app": name}}}
    return {"apiVersion": "v1", "kind": "Service", **body} if typed else body


def replication_controller(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"app": name},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "mock-container", "image": "k8s.gcr.io/pause:2.0",
                                                           "ports": [{"containerPort": 9949, "protocol": "TCP"}]}]}}}}


def pod(name: str, container: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": container, "image": "busybox",
                                     "command": ["sh", "-c", "echo Hello Kubernetes! && sleep 3600"]}]}}


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"name": name}}}


NGINX_APP = deployment("nginx-app", 3, "nginx", labels={"app": "nginx"})
MANIFESTS: dict[str, list[Obj]] = {
    "apps-deployment.yaml": [NGINX_APP],
    "core-pod.yaml": [{**pod("myapp-pod", "myapp-container"),
                       "metadata": {"name": "myapp-pod", "labels": {"app": "myapp"}}}],
    "core-service.yaml": [{"kind": "Service", "apiVersion": "v1", "metadata": {"name": "my-service"},
                           "spec": {"selector": {"app": "MyApp"},
                                    "ports": [{"protocol": "TCP", "port": 80, "targetPort": 9376}]}}],
    "core-namespace.yaml": [namespace("development")],
    "rbac-role.yaml": [{"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1",
                        "metadata": {"namespace": "default", "name": "pod-reader"},
                        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list"]}]}],
    "dep-namespace.yaml": [namespace("dep")],
    "dep-deployment.yaml": [deployment("nginx-deployment", 3, "nginx", namespace="dep")],
    "api-service.yaml": [{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                          "metadata": {"name": "v1alpha1.wardle.k8s.io"},
                          "spec": {"insecureSkipTLSVerify": True, "group": "wardle.k8s.io",
                                   "groupPriorityMinimum": 1000, "versionPriority": 15,
                                   "service": {"name": "api", "namespace": "wardle"}, "version": "v1alpha1"}}],
    "list.yaml": [{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "list-service-test"},
         "spec": {"ports": [{"protocol": "TCP", "port": 80}], "selector": {"app": "list-deployment-test"}}},
        deployment("list-deployment-test", 1, "list-deployment-test", labels={"app": "list-deployment-test"})]}],
    "namespace-list.yaml": [{"apiVersion": "v1", "kind": "NamespaceList",
                             "items": [namespace("mock-1"), namespace("mock-2")]}],
    "multi-resource.yaml": [service("mock"), replication_controller("mock")],
    "multi-resource-with-list.yaml": [
        {"apiVersion": "v1", "kind": "PodList",
         "items": [pod("mock-pod-0", "mock-pod-0"), pod("mock-pod-1", "mock-pod-1")]},
        deployment("mock", 3, "mock", labels={"app": "mock"}, container="mock")],
    "yaml-conflict-first.yaml": [service("mock-2")],
    "yaml-conflict-multi.yaml": [service("mock-2"), replication_controller("mock-2")],
    "triple-nginx.yaml": [deployment("triple-nginx", 3, "nginx")] * 3,
}
MULTI_RESOURCE_DIR = {"multi-resource-service.yaml": service("mock"),
                      "multi-resource-replication-controller.yaml": replication_controller("mock")}


def conflict(message: str, name: str, kind: str, group: str | None = None) -> str:
    """``FailToCreateError`` text for one AlreadyExists: kube-apiserver's Status body, verbatim."""
    details = f'{{"name":"{name}",' + (f'"group":"{group}",' if group else "") + f'"kind":"{kind}"}}'
    return ('Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            f'"message":"{message}","reason":"AlreadyExists","details":{details},"code":409}}\n')


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("manifests")
    for name, documents in MANIFESTS.items():
        (directory / name).write_text(yaml.safe_dump_all(documents))
    implicit = {"kind": "ServiceList", "apiVersion": "v1",
                "items": [service(name, typed=False) for name in ("mock-3", "mock-3", "mock-4")]}
    (directory / "implicit-svclist.json").write_text(json.dumps(implicit))
    (directory / "multi-resource").mkdir()
    for name, document in MULTI_RESOURCE_DIR.items():
        (directory / "multi-resource" / name).write_text(yaml.safe_dump(document))
    return directory


@pytest.fixture(scope="module")
def test_namespace(kubeconfig: Path) -> Iterator[str]:
    """Upstream's class setup and teardown: a namespace of its own for the namespaced cases."""
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
    api.create_namespace(body=client.V1Namespace(metadata=client.V1ObjectMeta(name=TEST_NAMESPACE)))
    yield TEST_NAMESPACE
    api.delete_namespace(name=TEST_NAMESPACE)


def check_nginx_app(dep: client.V1Deployment, name: str = "nginx-app") -> None:
    container = dep.spec.template.spec.containers[0]
    assert dep.metadata.name == name
    assert (container.image, container.ports[0].container_port, container.name) == ("nginx:1.15.4", 80, "nginx")
    assert dep.spec.template.metadata.labels["app"] == "nginx"
    assert dep.spec.replicas == 3


def test_create_apps_deployment_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "apps-deployment.yaml"))
    apps = client.AppsV1Api(api_client)
    check_nginx_app(apps.read_namespaced_deployment(name="nginx-app", namespace="default"))
    apps.delete_namespaced_deployment(name="nginx-app", namespace="default", body={})


def test_create_apps_deployment_from_yaml_with_apply_is_idempotent(api_client: client.ApiClient,
                                                                   manifests: Path) -> None:
    """Creating, then applying the same file (server-side apply) leaves the Deployment as it was."""
    apps = client.AppsV1Api(api_client)
    utils.create_from_yaml(api_client, str(manifests / "apps-deployment.yaml"))
    check_nginx_app(apps.read_namespaced_deployment(name="nginx-app", namespace="default"))
    utils.create_from_yaml(api_client, str(manifests / "apps-deployment.yaml"), apply=True)
    check_nginx_app(apps.read_namespaced_deployment(name="nginx-app", namespace="default"))
    apps.delete_namespaced_deployment(name="nginx-app", namespace="default", body={})


def test_create_apps_deployment_from_yaml_object(api_client: client.ApiClient, manifests: Path) -> None:
    with (manifests / "apps-deployment.yaml").open() as f:
        utils.create_from_yaml(api_client, yaml_objects=yaml.safe_load_all(f))
    apps = client.AppsV1Api(api_client)
    check_nginx_app(apps.read_namespaced_deployment(name="nginx-app", namespace="default"))
    apps.delete_namespaced_deployment(name="nginx-app", namespace="default", body={})


def test_create_apps_deployment_from_yaml_obj(api_client: client.ApiClient, manifests: Path) -> None:
    obj = yaml.safe_load((manifests / "apps-deployment.yaml").read_text())
    obj["metadata"]["name"] = "nginx-app-3"
    utils.create_from_dict(api_client, obj)
    apps = client.AppsV1Api(api_client)
    check_nginx_app(apps.read_namespaced_deployment(name="nginx-app-3", namespace="default"), "nginx-app-3")
    apps.delete_namespaced_deployment(name="nginx-app-3", namespace="default", body={})


def test_create_pod_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "core-pod.yaml"))
    core = client.CoreV1Api(api_client)
    found = core.read_namespaced_pod(name="myapp-pod", namespace="default")
    assert (found.metadata.name, found.spec.containers[0].image, found.spec.containers[0].name) == (
        "myapp-pod", "busybox", "myapp-container")
    core.delete_namespaced_pod(name="myapp-pod", namespace="default", body={})


def test_create_service_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "core-service.yaml"))
    core = client.CoreV1Api(api_client)
    svc = core.read_namespaced_service(name="my-service", namespace="default")
    assert (svc.metadata.name, svc.spec.selector["app"]) == ("my-service", "MyApp")
    core.delete_namespaced_service(name="my-service", namespace="default", body={})


def test_create_namespace_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "core-namespace.yaml"))
    core = client.CoreV1Api(api_client)
    assert core.read_namespace(name="development").metadata.name == "development"
    core.delete_namespace(name="development", body={})


@pytest.mark.parametrize("verbose", [False, True])
def test_create_rbac_role_from_yaml(api_client: client.ApiClient, manifests: Path, verbose: bool) -> None:
    utils.create_from_yaml(api_client, str(manifests / "rbac-role.yaml"), verbose=verbose)
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = rbac.read_namespaced_role(name="pod-reader", namespace="default")
    assert (role.metadata.name, role.rules[0].resources[0]) == ("pod-reader", "pods")
    rbac.delete_namespaced_role(name="pod-reader", namespace="default", body={})


def test_create_deployment_non_default_namespace_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "dep-namespace.yaml"))
    utils.create_from_yaml(api_client, str(manifests / "dep-deployment.yaml"))
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    assert core.read_namespace(name="dep").metadata.name == "dep"
    assert apps.read_namespaced_deployment(name="nginx-deployment", namespace="dep").metadata.namespace == "dep"
    apps.delete_namespaced_deployment(name="nginx-deployment", namespace="dep", body={})
    core.delete_namespace(name="dep", body={})


def test_create_apiservice_from_yaml_with_conflict(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "api-service.yaml"))
    registration = client.ApiregistrationV1Api(api_client)
    svc = registration.read_api_service(name="v1alpha1.wardle.k8s.io")
    assert (svc.metadata.name, svc.spec.group, svc.spec.version) == ("v1alpha1.wardle.k8s.io", "wardle.k8s.io",
                                                                     "v1alpha1")
    with pytest.raises(utils.FailToCreateError) as failed:
        utils.create_from_yaml(api_client, str(manifests / "api-service.yaml"))
    assert str(failed.value) == conflict('apiservices.apiregistration.k8s.io \\"v1alpha1.wardle.k8s.io\\" '
                                         'already exists', "v1alpha1.wardle.k8s.io", "apiservices",
                                         "apiregistration.k8s.io")
    registration.delete_api_service(name="v1alpha1.wardle.k8s.io", body={})


def test_create_general_list_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "list.yaml"))
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    svc = core.read_namespaced_service(name="list-service-test", namespace="default")
    assert svc.spec.selector["app"] == "list-deployment-test"
    dep = apps.read_namespaced_deployment(name="list-deployment-test", namespace="default")
    assert (dep.spec.template.spec.containers[0].image, dep.spec.replicas) == ("nginx:1.15.4", 1)
    core.delete_namespaced_service(name="list-service-test", namespace="default", body={})
    apps.delete_namespaced_deployment(name="list-deployment-test", namespace="default", body={})


def test_create_namespace_list_from_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "namespace-list.yaml"))
    core = client.CoreV1Api(api_client)
    for name in ("mock-1", "mock-2"):
        found = core.read_namespace(name=name)
        assert (found.metadata.name, found.metadata.labels["name"]) == (name, name)
        core.delete_namespace(name=name, body={})


def test_create_implicit_service_list_from_yaml_with_conflict(api_client: client.ApiClient, manifests: Path) -> None:
    """Items without kind take it from the list's kind; the duplicate fails, the others are made."""
    with pytest.raises(utils.FailToCreateError) as failed:
        utils.create_from_yaml(api_client, str(manifests / "implicit-svclist.json"))
    assert str(failed.value) == conflict('services \\"mock-3\\" already exists', "mock-3", "services")
    core = client.CoreV1Api(api_client)
    for name in ("mock-3", "mock-4"):
        svc = core.read_namespaced_service(name=name, namespace="default")
        assert svc.metadata.labels["app"] == name
        core.delete_namespaced_service(name=name, namespace="default", body={})


def check_mock_service_and_controller(core: client.CoreV1Api) -> None:
    svc = core.read_namespaced_service(name="mock", namespace="default")
    assert (svc.metadata.labels["app"], svc.spec.selector["app"]) == ("mock", "mock")
    ctr = core.read_namespaced_replication_controller(name="mock", namespace="default")
    container = ctr.spec.template.spec.containers[0]
    assert (ctr.spec.template.metadata.labels["app"], ctr.spec.selector["app"]) == ("mock", "mock")
    assert ctr.spec.replicas == 1
    assert (container.image, container.name) == ("k8s.gcr.io/pause:2.0", "mock-container")
    core.delete_namespaced_replication_controller(name="mock", namespace="default", propagation_policy="Background")
    core.delete_namespaced_service(name="mock", namespace="default", body={})


def test_create_multi_resource_from_directory(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_directory(api_client, str(manifests / "multi-resource"))
    check_mock_service_and_controller(client.CoreV1Api(api_client))


def test_create_from_multi_resource_yaml(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "multi-resource.yaml"))
    check_mock_service_and_controller(client.CoreV1Api(api_client))


@pytest.mark.parametrize("in_test_namespace", [False, True], ids=["default", "namespaced"])
def test_create_from_list_in_multi_resource_yaml(api_client: client.ApiClient, manifests: Path, test_namespace: str,
                                                 in_test_namespace: bool) -> None:
    target = test_namespace if in_test_namespace else "default"
    if in_test_namespace:
        utils.create_from_yaml(api_client, str(manifests / "multi-resource-with-list.yaml"), namespace=target)
    else:
        utils.create_from_yaml(api_client, str(manifests / "multi-resource-with-list.yaml"))
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    for name in ("mock-pod-0", "mock-pod-1"):
        found = core.read_namespaced_pod(name=name, namespace=target)
        assert (found.metadata.labels["app"], found.spec.containers[0].name) == (name, name)
        assert found.spec.containers[0].image == "busybox"
        core.delete_namespaced_pod(name=name, namespace=target, body={})
    dep = apps.read_namespaced_deployment(name="mock", namespace=target)
    assert (dep.spec.template.metadata.labels["app"], dep.spec.replicas) == ("mock", 3)
    apps.delete_namespaced_deployment(name="mock", namespace=target, body={})


def test_create_from_multi_resource_yaml_with_conflict(api_client: client.ApiClient, manifests: Path) -> None:
    utils.create_from_yaml(api_client, str(manifests / "yaml-conflict-first.yaml"))
    core = client.CoreV1Api(api_client)
    svc = core.read_namespaced_service(name="mock-2", namespace="default")
    assert (svc.metadata.labels["app"], svc.spec.selector["app"], svc.spec.ports[0].port) == ("mock-2", "mock-2", 99)
    with pytest.raises(utils.FailToCreateError) as failed:
        utils.create_from_yaml(api_client, str(manifests / "yaml-conflict-multi.yaml"))
    assert str(failed.value) == conflict('services \\"mock-2\\" already exists', "mock-2", "services")
    assert core.read_namespaced_replication_controller(name="mock-2", namespace="default").metadata.name == "mock-2"
    core.delete_namespaced_replication_controller(name="mock-2", namespace="default", propagation_policy="Background")
    core.delete_namespaced_service(name="mock-2", namespace="default", body={})


def test_create_from_multi_resource_yaml_with_multi_conflicts(api_client: client.ApiClient, manifests: Path) -> None:
    with pytest.raises(utils.FailToCreateError) as failed:
        utils.create_from_yaml(api_client, str(manifests / "triple-nginx.yaml"))
    one = conflict('deployments.apps \\"triple-nginx\\" already exists', "triple-nginx", "deployments", "apps")
    assert str(failed.value) == one + one
    apps = client.AppsV1Api(api_client)
    assert apps.read_namespaced_deployment(name="triple-nginx", namespace="default").metadata.name == "triple-nginx"
    apps.delete_namespaced_deployment(name="triple-nginx", namespace="default", body={})


def test_create_namespaced_apps_deployment_from_yaml(api_client: client.ApiClient, manifests: Path,
                                                     test_namespace: str) -> None:
    utils.create_from_yaml(api_client, str(manifests / "apps-deployment.yaml"), namespace=test_namespace)
    apps = client.AppsV1Api(api_client)
    assert apps.read_namespaced_deployment(name="nginx-app", namespace=test_namespace).metadata.name == "nginx-app"
    apps.delete_namespaced_deployment(name="nginx-app", namespace=test_namespace, body={})


def test_metrics_api_absent_without_metrics_server(api_client: client.ApiClient) -> None:
    """kube-apiserver without metrics-server does not serve metrics.k8s.io: the client's metrics
    helpers get a 404."""
    with pytest.raises(ApiException) as missing:
        utils.get_nodes_metrics(api_client)
    assert missing.value.status == 404
