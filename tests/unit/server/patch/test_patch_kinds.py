"""Strategic merge metadata of the built-in kinds, exercised with the patches clients send."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.patch import PatchSchema, apply_strategic_merge_patch, kinds_with_schema, patch_schema_for
from kubeloop.server.patch.kinds import definition_schema
from kubeloop.server.patch.schema import MERGE, RETAIN_KEYS

SERVED_KINDS = sorted({(info.group, info.kind) for info in BUILTIN_RESOURCES if "patch" in info.verbs})
POD_SPEC = definition_schema("io.k8s.api.core.v1.PodSpec")
POD_TEMPLATE_SPEC = definition_schema("io.k8s.api.core.v1.PodTemplateSpec")


def schema(group: str, kind: str) -> PatchSchema:
    found = patch_schema_for(group, kind)
    assert found is not None
    return found


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web"},
            "finalizers": ["example.com/a"],
            "ownerReferences": [{"uid": "u1", "kind": "X", "name": "x"}],
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "args": ["--a"],
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        },
                        {"name": "sidecar", "image": "side:1"},
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "tolerations": [{"key": "a", "operator": "Exists"}],
                },
            },
        },
        "status": {"conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]},
    }


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


def test_set_image_merges_the_container_by_name() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    assert [c["name"] for c in containers(result)] == ["app", "sidecar"]
    app = containers(result)[0]
    assert app["image"] == "app:2"
    assert app["env"] == deployment()["spec"]["template"]["spec"]["containers"][0]["env"]


def test_env_ports_and_mounts_merge_on_their_keys() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "env": [{"name": "B", "value": "20"}, {"name": "A", "$patch": "delete"}],
                            "ports": [{"containerPort": 443}],
                            "volumeMounts": [{"mountPath": "/data", "readOnly": True}],
                        }
                    ]
                }
            }
        }
    }
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    app = containers(result)[0]
    assert app["env"] == [{"name": "B", "value": "20"}]
    assert app["ports"] == [{"containerPort": 443}, {"containerPort": 80, "protocol": "TCP"}]
    assert app["volumeMounts"] == [{"name": "data", "mountPath": "/data", "readOnly": True}]


def test_lists_without_strategy_are_replaced() -> None:
    patch = {
        "spec": {"template": {"spec": {"tolerations": [{"key": "b"}], "containers": [{"name": "app", "args": []}]}}}
    }
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    assert result["spec"]["template"]["spec"]["tolerations"] == [{"key": "b"}]
    assert containers(result)[0]["args"] == []


def test_switching_to_recreate_with_retain_keys_drops_rolling_update() -> None:
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    assert result["spec"]["strategy"] == {"type": "Recreate"}
    plain = apply_strategic_merge_patch(
        deployment(), {"spec": {"strategy": {"type": "Recreate"}}}, schema("apps", "Deployment")
    )
    assert "rollingUpdate" in plain["spec"]["strategy"]


def test_volume_source_switch_with_retain_keys_in_the_element() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "volumes": [{"name": "data", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}]
                }
            }
        }
    }
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    assert result["spec"]["template"]["spec"]["volumes"] == [{"name": "data", "configMap": {"name": "cm"}}]


def test_rollout_restart_and_pause_shapes() -> None:
    patch = {
        "spec": {
            "paused": True,
            "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}}},
        }
    }
    result = apply_strategic_merge_patch(deployment(), patch, schema("apps", "Deployment"))
    assert result["spec"]["paused"] is True
    assert result["spec"]["template"]["metadata"] == {
        "labels": {"app": "web"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
    }


def test_metadata_finalizers_and_owner_references() -> None:
    patch = {
        "metadata": {
            "finalizers": ["example.com/b"],
            "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
            "ownerReferences": [{"uid": "u2", "kind": "Y", "name": "y"}, {"uid": "u1", "name": "x2"}],
            "labels": {"app": None, "tier": "front"},
        }
    }
    for group, kind in SERVED_KINDS:
        result = apply_strategic_merge_patch(deployment(), patch, schema(group, kind))
        meta = result["metadata"]
        assert meta["finalizers"] == ["example.com/b"], kind
        assert meta["ownerReferences"] == [
            {"uid": "u2", "kind": "Y", "name": "y"},
            {"uid": "u1", "kind": "X", "name": "x2"},
        ]
        assert meta["labels"] == {"tier": "front"}


def test_status_conditions_merge_by_type() -> None:
    patch = {"status": {"conditions": [{"type": "Progressing", "status": "False", "reason": "Deadline"}]}}
    for group, kind in [
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("", "Pod"),
        ("", "Namespace"),
        ("", "PersistentVolumeClaim"),
        ("", "Node"),
    ]:
        result = apply_strategic_merge_patch(deployment(), patch, schema(group, kind))
        assert result["status"]["conditions"] == [
            {"type": "Available", "status": "True"},
            {"type": "Progressing", "status": "False", "reason": "Deadline"},
        ], kind


def test_kubelet_style_pod_status_patch() -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
            "podIPs": [{"ip": "10.0.0.1"}],
        },
    }
    patch = {
        "status": {
            "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
            "phase": "Running",
        }
    }
    result = apply_strategic_merge_patch(pod, patch, schema("", "Pod"))
    assert result["status"] == {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
    }


def test_node_addresses_and_pod_cidrs() -> None:
    node = {
        "spec": {"podCIDRs": ["10.0.0.0/24"]},
        "status": {"addresses": [{"type": "InternalIP", "address": "1.1.1.1"}]},
    }
    patch = {
        "spec": {"podCIDRs": ["fd00::/64"]},
        "status": {"addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "2.2.2.2"}]},
    }
    result = apply_strategic_merge_patch(node, patch, schema("", "Node"))
    assert result["spec"]["podCIDRs"] == ["fd00::/64", "10.0.0.0/24"]
    assert result["status"]["addresses"] == [
        {"type": "Hostname", "address": "n1"},
        {"type": "InternalIP", "address": "2.2.2.2"},
    ]


def test_service_account_secrets_and_config_map_data() -> None:
    sa = {"metadata": {"name": "sa"}, "secrets": [{"name": "a"}]}
    result = apply_strategic_merge_patch(sa, {"secrets": [{"name": "b"}]}, schema("", "ServiceAccount"))
    assert result["secrets"] == [{"name": "b"}, {"name": "a"}]
    cm = {"data": {"a": "1", "b": "2"}}
    result = apply_strategic_merge_patch(cm, {"data": {"a": None, "c": "3"}}, schema("", "ConfigMap"))
    assert result["data"] == {"b": "2", "c": "3"}


def test_scale_patch() -> None:
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "web"}, "spec": {"replicas": 1}}
    result = apply_strategic_merge_patch(scale, {"spec": {"replicas": 4}}, schema("autoscaling", "Scale"))
    assert result["spec"] == {"replicas": 4}


def test_controller_revision_data_merges_as_a_plain_map() -> None:
    revision = {"data": {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}, "revision": 1}
    patch = {"data": {"spec": {"template": {"spec": {"containers": [{"name": "b"}]}}}}}
    result = apply_strategic_merge_patch(revision, patch, schema("apps", "ControllerRevision"))
    assert result["data"]["spec"]["template"]["spec"]["containers"] == [{"name": "b"}]


@pytest.mark.parametrize(
    ("field", "strategies", "merge_key"),
    [
        ("containers", (MERGE,), "name"),
        ("initContainers", (MERGE,), "name"),
        ("ephemeralContainers", (MERGE,), "name"),
        ("volumes", (MERGE, RETAIN_KEYS), "name"),
        ("imagePullSecrets", (MERGE,), "name"),
        ("hostAliases", (MERGE,), "ip"),
        ("topologySpreadConstraints", (MERGE,), "topologyKey"),
        ("schedulingGates", (MERGE,), "name"),
        ("resourceClaims", (MERGE, RETAIN_KEYS), "name"),
        ("tolerations", (), ""),
    ],
)
def test_pod_spec_tags(field: str, strategies: tuple[str, ...], merge_key: str) -> None:
    meta = POD_SPEC.lookup(field)
    assert (meta.strategies, meta.merge_key) == (strategies, merge_key)


def test_container_tags_are_the_same_in_every_container_list() -> None:
    for field in ("containers", "initContainers", "ephemeralContainers"):
        container = POD_SPEC.lookup(field).schema
        assert container.lookup("env").merge_key == "name"
        assert container.lookup("ports").merge_key == "containerPort"
        assert container.lookup("volumeMounts").merge_key == "mountPath"
        assert container.lookup("volumeDevices").merge_key == "devicePath"
        assert container.lookup("command").strategies == ()


def test_the_pod_template_is_shared() -> None:
    for group, kind in [("apps", "Deployment"), ("apps", "ReplicaSet")]:
        template = schema(group, kind).lookup("spec").schema.lookup("template").schema
        assert template is POD_TEMPLATE_SPEC
    assert schema("", "Pod").lookup("spec").schema is POD_SPEC
    assert POD_TEMPLATE_SPEC.lookup("spec").schema is POD_SPEC


def test_custom_resources_and_unknown_kinds_have_no_schema() -> None:
    assert patch_schema_for("apps.kruise.io", "CloneSet") is None
    assert patch_schema_for("", "Deployment") is None
    assert ("apps", "Deployment") in kinds_with_schema()
    assert patch_schema_for("apiextensions.k8s.io", "CustomResourceDefinition") is not None
