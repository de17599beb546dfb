"""kube-apiserver's pod-mutating admission plugins: ServiceAccount, Priority, DefaultTolerationSeconds."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.admission import default_object
from kubeloop.server.admission.priority import admit_priority_create, keep_priority_on_update
from kubeloop.server.admission.serviceaccount import (
    TOKEN_MOUNT_PATH,
    admit_service_account,
    default_service_account_name,
    should_automount,
)
from kubeloop.server.admission.tolerationseconds import add_default_tolerations

TOKEN_VOLUME = {
    "name": "kube-api-access-abcde",
    "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
    },
}
TOKEN_MOUNT = {"name": "kube-api-access-abcde", "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}


def pod(annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx"}], **spec}
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def suffix() -> str:
    return "abcde"


# ------------------------------------------------------------------------- ServiceAccount


def test_the_service_account_defaults_to_default_and_its_alias_mirrors_it() -> None:
    obj = pod()
    assert default_service_account_name(obj) == "default"
    assert (obj["spec"]["serviceAccountName"], obj["spec"]["serviceAccount"]) == ("default", "default")
    named = pod(serviceAccountName="builder")
    assert default_service_account_name(named) == "builder"
    assert named["spec"]["serviceAccount"] == "builder"


def test_a_new_pod_gets_the_projected_token_volume_in_every_container() -> None:
    obj = pod(initContainers=[{"name": "init", "image": "busybox"}],
              containers=[{"name": "a", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                          {"name": "b", "image": "nginx"}],
              volumes=[{"name": "data", "emptyDir": {}}])
    admit_service_account(obj, None, suffix)
    spec = obj["spec"]
    assert spec["volumes"] == [{"name": "data", "emptyDir": {}}, TOKEN_VOLUME]
    assert spec["initContainers"][0]["volumeMounts"] == [TOKEN_MOUNT]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}, TOKEN_MOUNT]
    assert spec["containers"][1]["volumeMounts"] == [TOKEN_MOUNT]


def test_the_token_volume_survives_api_defaulting_unchanged() -> None:
    obj = pod()
    default_service_account_name(obj)
    admit_service_account(obj, None, suffix)
    default_object("", "v1", "Pod", obj)
    assert obj["spec"]["volumes"] == [TOKEN_VOLUME]


@pytest.mark.parametrize(("pod_choice", "account", "mounted"), [
    (None, None, True),
    (None, {"automountServiceAccountToken": False}, False),
    (None, {"automountServiceAccountToken": True}, True),
    (False, None, False),
    (False, {"automountServiceAccountToken": True}, False),
    (True, {"automountServiceAccountToken": False}, True),  # the pod's choice wins
])
def test_automount_follows_the_pod_then_the_service_account(
        pod_choice: bool | None, account: Mapping[str, Any] | None, mounted: bool) -> None:
    spec: dict[str, Any] = {} if pod_choice is None else {"automountServiceAccountToken": pod_choice}
    assert should_automount(spec, account) is mounted
    obj = pod(**spec)
    admit_service_account(obj, account, suffix)
    assert ("volumes" in obj["spec"]) is mounted
    assert ("volumeMounts" in obj["spec"]["containers"][0]) is mounted


def test_an_existing_mount_at_the_token_path_is_left_alone() -> None:
    own = {"name": "mine", "mountPath": TOKEN_MOUNT_PATH}
    obj = pod(containers=[{"name": "a", "image": "nginx", "volumeMounts": [own]}],
              volumes=[{"name": "mine", "emptyDir": {}}])
    admit_service_account(obj, None, suffix)
    assert obj["spec"]["containers"][0]["volumeMounts"] == [own]
    assert obj["spec"]["volumes"] == [{"name": "mine", "emptyDir": {}}]  # no container needs the token volume


def test_an_existing_kube_api_access_volume_is_reused() -> None:
    existing = {"name": "kube-api-access-zzzzz", "emptyDir": {}}
    obj = pod(volumes=[existing])
    admit_service_account(obj, None, suffix)
    assert obj["spec"]["volumes"] == [existing]
    assert obj["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "kube-api-access-zzzzz", "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]


def test_mirror_pods_are_not_mutated() -> None:
    obj = pod({"kubernetes.io/config.mirror": "hash"})
    before = copy.deepcopy(obj)
    assert default_service_account_name(obj) == ""
    admit_service_account(obj, None, suffix)
    assert obj == before


def test_image_pull_secrets_come_from_the_service_account_when_the_pod_has_none() -> None:
    account = {"imagePullSecrets": [{"name": "registry"}]}
    obj = pod(automountServiceAccountToken=False)
    admit_service_account(obj, account, suffix)
    assert obj["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    own = pod(automountServiceAccountToken=False, imagePullSecrets=[{"name": "mine"}])
    admit_service_account(own, account, suffix)
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


# ------------------------------------------------------------------ DefaultTolerationSeconds

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}


@pytest.mark.parametrize(("given", "expected"), [
    (None, [NOT_READY, UNREACHABLE]),
    ([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
     [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, NOT_READY, UNREACHABLE]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
      UNREACHABLE]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],  # any effect covers NoExecute
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}, NOT_READY]),
    ([{"operator": "Exists"}], [{"operator": "Exists"}]),  # tolerates everything
    ([{"operator": "Exists", "effect": "NoSchedule"}],  # any key, but not the NoExecute effect
     [{"operator": "Exists", "effect": "NoSchedule"}, NOT_READY, UNREACHABLE]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}, NOT_READY,
      UNREACHABLE]),
])
def test_default_toleration_seconds(given: list[dict[str, Any]] | None, expected: list[dict[str, Any]]) -> None:
    obj = pod() if given is None else pod(tolerations=copy.deepcopy(given))
    add_default_tolerations(obj)
    assert obj["spec"]["tolerations"] == expected
    add_default_tolerations(obj)  # idempotent: updates run it again
    assert obj["spec"]["tolerations"] == expected


# ---------------------------------------------------------------------------------- Priority


def no_classes(name: str) -> Mapping[str, Any] | None:
    del name
    return None


def one_class(name: str) -> Mapping[str, Any] | None:
    if name == "batch":
        return {"metadata": {"name": "batch"}, "value": 100, "preemptionPolicy": "Never"}
    return None


@pytest.mark.parametrize(("spec", "lookup", "default_class", "priority", "policy", "class_name"), [
    ({}, no_classes, None, 0, "PreemptLowerPriority", None),
    ({"priorityClassName": "system-cluster-critical"}, no_classes, None, 2000000000, "PreemptLowerPriority",
     "system-cluster-critical"),
    ({"priorityClassName": "system-node-critical"}, no_classes, None, 2000001000, "PreemptLowerPriority",
     "system-node-critical"),
    ({"priorityClassName": "batch"}, one_class, None, 100, "Never", "batch"),
    ({}, no_classes, {"metadata": {"name": "low"}, "value": -5, "preemptionPolicy": "Never"}, -5, "Never", "low"),
    ({"priority": 0}, no_classes, None, 0, "PreemptLowerPriority", None),
])
def test_priority_is_computed_from_the_class(spec: dict[str, Any], lookup: Any, default_class: Any, priority: int,
                                            policy: str, class_name: str | None) -> None:
    obj = pod(**spec)
    admit_priority_create(obj, lookup, default_class)
    assert (obj["spec"]["priority"], obj["spec"]["preemptionPolicy"]) == (priority, policy)
    assert obj["spec"].get("priorityClassName") == class_name


@pytest.mark.parametrize(("spec", "message"), [
    ({"priorityClassName": "nope"}, 'pods "p" is forbidden: no PriorityClass with name nope was found'),
    ({"priority": 7}, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
                      "priority admission controller computed 0 from the given PriorityClass name"),
    ({"preemptionPolicy": "Never"},
     'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
     "priority admission controller computed PreemptLowerPriority from the given PriorityClass name"),
])
def test_priority_refusals(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiError) as caught:
        admit_priority_create(pod(**spec), no_classes, None)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (403, "Forbidden", message)


def test_an_update_without_priority_keeps_the_old_one() -> None:
    old = pod(priority=100, preemptionPolicy="Never")
    new = pod()
    keep_priority_on_update(new, old)
    assert (new["spec"]["priority"], new["spec"]["preemptionPolicy"]) == (100, "Never")
    changed = pod(priority=5)
    keep_priority_on_update(changed, old)
    assert changed["spec"]["priority"] == 5  # left for validation to refuse


# ----------------------------------------------------------------------- API defaults added


def test_the_deprecated_service_account_alias_is_read_and_mirrored() -> None:
    alias_only = pod(serviceAccount="legacy")
    default_object("", "v1", "Pod", alias_only)
    assert (alias_only["spec"]["serviceAccountName"], alias_only["spec"]["serviceAccount"]) == ("legacy", "legacy")
    both = pod(serviceAccountName="new", serviceAccount="old")
    default_object("", "v1", "Pod", both)
    assert (both["spec"]["serviceAccountName"], both["spec"]["serviceAccount"]) == ("new", "new")


def test_volume_source_field_defaults() -> None:
    obj = pod(volumes=[
        {"name": "i", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}},
        {"name": "r", "rbd": {"monitors": ["m"], "image": "img"}},
        {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "s", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}},
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
    ], ephemeralContainers=[{"name": "debug", "image": "busybox"}])
    default_object("", "v1", "Pod", obj)
    volumes = {v["name"]: v for v in obj["spec"]["volumes"]}
    assert volumes["i"]["iscsi"]["iscsiInterface"] == "default"
    assert {k: volumes["r"]["rbd"][k] for k in ("pool", "user", "keyring")} == {
        "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"}
    assert {k: volumes["a"]["azureDisk"][k] for k in ("cachingMode", "fsType", "readOnly", "kind")} == {
        "cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"}
    assert (volumes["s"]["scaleIO"]["storageMode"], volumes["s"]["scaleIO"]["fsType"]) == ("ThinProvisioned", "xfs")
    assert volumes["e"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"
    [debug] = obj["spec"]["ephemeralContainers"]
    assert (debug["imagePullPolicy"], debug["terminationMessagePolicy"]) == ("Always", "File")
