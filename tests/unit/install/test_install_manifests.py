"""The install manifests follow their sources: the controller selection, the webhook's names, the
``kubeloop controllers`` options; the image is built non-root; ``kubeloop manifests`` prints them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop.cli.controllers import controllers as controllers_command
from kubeloop.cli.main import cli
from kubeloop.controllers import CONTROLLERS
from kubeloop.controllers.policy import LEADER_ELECTION_RULES, controller_rules
from kubeloop.install import InstallOptions, install_manifests, rbac_manifests
from kubeloop.install.render import from_yaml
from kubeloop.server.crds import BUILTIN_CRDS
from kubeloop.webhook.configuration import (
    CONTAINER_PORT,
    WEBHOOK_CLUSTER_RULES,
    WEBHOOK_NAMESPACE_RULES,
    webhook_service,
)

ROOT = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def by_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [obj for obj in objects if obj["kind"] == kind]


def named(objects: list[Obj], kind: str, name: str) -> Obj:
    (found,) = [obj for obj in by_kind(objects, kind) if obj["metadata"]["name"] == name]
    return found


@pytest.mark.parametrize("selection", [("cloneset",), ("replicaset", "deployment"), tuple(CONTROLLERS)])
def test_rbac_follows_the_controller_selection_exactly(selection: tuple[str, ...]) -> None:
    objects = install_manifests(InstallOptions(controllers=selection))
    assert named(objects, "ClusterRole", "kubeloop-manager-role")["rules"] == controller_rules(selection)
    assert named(objects, "ClusterRole", "kubeloop-webhook-role")["rules"] == list(WEBHOOK_CLUSTER_RULES)
    assert named(objects, "Role", "kubeloop-leader-election-role")["rules"] == list(LEADER_ELECTION_RULES)
    assert named(objects, "Role", "kubeloop-webhook-role")["rules"] == list(WEBHOOK_NAMESPACE_RULES)
    manager = named(objects, "Deployment", "kubeloop-controller-manager")["spec"]["template"]["spec"]["containers"][0]
    assert manager["args"][manager["args"].index("--controllers") + 1] == ",".join(selection)
    # The kube-controller-manager Lease may be read (for the --force check) only when it matters.
    readers = [obj for obj in objects if obj["metadata"]["name"].startswith("kubeloop-kcm-lease-reader")]
    if {"replicaset", "deployment", "garbagecollector"} & set(selection):
        assert [obj["metadata"]["namespace"] for obj in readers] == ["kube-system", "kube-system"]
        assert readers[0]["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                                        "resourceNames": ["kube-controller-manager"], "verbs": ["get"]}]
    else:
        assert readers == []


def test_every_role_is_bound_to_the_service_account_of_the_pods() -> None:
    objects = install_manifests(InstallOptions(namespace="ops", controllers=tuple(CONTROLLERS)))
    roles = {(obj["kind"], obj["metadata"]["name"]) for obj in objects if obj["kind"] in ("Role", "ClusterRole")}
    bindings = [obj for obj in objects if obj["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    assert {(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in bindings} == roles
    pod = named(objects, "Deployment", "kubeloop-controller-manager")["spec"]["template"]["spec"]
    for binding in bindings:
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": pod["serviceAccountName"],
                                        "namespace": "ops"}]
    named(objects, "ServiceAccount", pod["serviceAccountName"])


def test_namespaced_objects_are_in_the_install_namespace() -> None:
    objects = install_manifests(InstallOptions(namespace="ops"))
    assert objects[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}}
    namespaced = [obj for obj in objects if "namespace" in obj["metadata"]]
    assert {obj["metadata"]["namespace"] for obj in namespaced} == {"ops"}
    assert {obj["kind"] for obj in namespaced} >= {"ServiceAccount", "Role", "RoleBinding", "Service", "Deployment"}
    for config in by_kind(objects, "MutatingWebhookConfiguration") + by_kind(objects, "ValidatingWebhookConfiguration"):
        for webhook in config["webhooks"]:
            assert webhook["clientConfig"]["service"]["namespace"] == "ops"
            assert "caBundle" not in webhook["clientConfig"]


def test_the_service_reaches_the_webhook_container_of_the_pods() -> None:
    objects = install_manifests()
    service = named(objects, "Service", "kubeloop-webhook-service")
    assert service == webhook_service("kubeloop-system")  # the shared default selector
    template = named(objects, "Deployment", "kubeloop-controller-manager")["spec"]["template"]
    assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    webhook = template["spec"]["containers"][1]
    assert webhook["name"] == "webhook"
    assert [p["containerPort"] for p in webhook["ports"]] == [CONTAINER_PORT] == [
        p["targetPort"] for p in service["spec"]["ports"]]
    assert webhook["args"] == ["webhook", "--namespace", "$(POD_NAMESPACE)", "--port", str(CONTAINER_PORT)]


def test_the_manager_container_runs_kubeloop_controllers_with_options_it_has() -> None:
    deployment = named(install_manifests(), "Deployment", "kubeloop-controller-manager")
    pod = deployment["spec"]["template"]["spec"]
    manager = pod["containers"][0]
    args = [arg.replace("$(POD_NAMESPACE)", "kubeloop-system") for arg in manager["args"]]
    assert args[0] == "controllers"
    context = controllers_command.make_context("controllers", args[1:])
    assert context.params["leader_elect"] is True
    assert context.params["leader_elect_namespace"] == "kubeloop-system"
    assert context.params["controllers_text"] == "cloneset"
    port = context.params["health_port"]
    assert context.params["health_host"] == "0.0.0.0"
    assert manager["ports"] == [{"name": "health", "containerPort": port, "protocol": "TCP"}]
    assert manager["livenessProbe"]["httpGet"] == manager["readinessProbe"]["httpGet"] == {
        "path": "/healthz", "port": "health"}
    for container in pod["containers"]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert set(container["resources"]["requests"]) == {"cpu", "memory"}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert deployment["spec"]["replicas"] == 2
    (term,) = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_the_crds_are_the_servers_built_in_ones() -> None:
    assert by_kind(install_manifests(), "CustomResourceDefinition") == [dict(crd) for crd in BUILTIN_CRDS]


def test_the_image_runs_kubeloop_as_a_numeric_non_root_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users, "the image must name its user"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0  # numeric: runAsNonRoot can check it
    assert re.search(r'^ENTRYPOINT \["kubeloop"\]', text, re.MULTILINE)
    assert re.search(r"^RUN pip install \.", text, re.MULTILINE)
    assert 'kubeloop = "kubeloop.cli.main:main"' in (ROOT / "pyproject.toml").read_text()


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["manifests", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_kubeloop_manifests_prints_everything_or_a_part() -> None:
    everything = from_yaml(run())
    assert everything == install_manifests()
    assert from_yaml(run("--crds-only")) == by_kind(everything, "CustomResourceDefinition")
    assert from_yaml(run("--rbac-only")) == rbac_manifests(InstallOptions())
    custom = from_yaml(run("--image", "registry.example/kubeloop:dev", "--namespace", "ops",
                           "--controllers", "cloneset,deployment", "--replicas", "3"))
    assert custom == install_manifests(InstallOptions(namespace="ops", image="registry.example/kubeloop:dev",
                                                      controllers=("cloneset", "deployment"), replicas=3))
    assert from_yaml(run("--controllers", "*")) == install_manifests(InstallOptions(controllers=tuple(CONTROLLERS)))


def test_kubeloop_manifests_refuses_unknown_controllers_and_both_parts() -> None:
    result = CliRunner().invoke(cli, ["manifests", "--controllers", "cloneset,nope"])
    assert result.exit_code == 2 and "nope" in result.output
    result = CliRunner().invoke(cli, ["manifests", "--crds-only", "--rbac-only"])
    assert result.exit_code == 2
