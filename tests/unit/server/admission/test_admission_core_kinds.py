"""Namespaces, Nodes, ConfigMaps, Secrets, ServiceAccounts, PVCs and Leases."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update

DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
    "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def create(group: str, kind: str, obj: dict[str, Any], namespaced: bool = True) -> list[str]:
    default_object(group, "v1", kind, obj)
    return [str(e) for e in validate_create(group, "v1", kind, obj, namespaced=namespaced)]


def update(group: str, kind: str, new: dict[str, Any], old: dict[str, Any], namespaced: bool = True) -> list[str]:
    default_object(group, "v1", kind, new)
    return [str(e) for e in validate_update(group, "v1", kind, new, old, namespaced=namespaced)]


def stamped(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"].update({"uid": "u", "resourceVersion": "2"})
    return obj


# -------------------------------------------------------------------------------- namespaces


def test_namespace_defaults() -> None:
    ns: dict[str, Any] = {"metadata": {"name": "team-a"}}
    default_object("", "v1", "Namespace", ns)
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert ns["status"] == {"phase": "Active"}


@pytest.mark.parametrize(
    ("name", "finalizers", "expected"),
    [
        ("team-a", ["kubernetes"], []),
        ("a.b", [], [f'metadata.name: Invalid value: "a.b": {DNS_LABEL_MSG}']),
        (
            "a" * 64,
            [],
            [
                f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters',
                # The defaulted kubernetes.io/metadata.name label is too long as well, as upstream reports.
                f'metadata.labels: Invalid value: "{"a" * 64}": must be no more than 63 characters',
            ],
        ),
        (
            "ok",
            ["custom"],
            [
                'spec.finalizers: Invalid value: "custom": '
                "name is neither a standard finalizer name nor is it fully qualified"
            ],
        ),
        ("ok", ["example.com/x"], []),
    ],
)
def test_namespace_rules(name: str, finalizers: list[str], expected: list[str]) -> None:
    ns = {"metadata": {"name": name}, "spec": {"finalizers": finalizers}}
    assert create("", "Namespace", ns, namespaced=False) == expected


# ------------------------------------------------------------------------------------- nodes


def test_node_taints() -> None:
    node = {
        "metadata": {"name": "n1"},
        "spec": {
            "taints": [
                {"key": "a", "effect": "NoSchedule"},
                {"key": "a", "effect": "NoSchedule", "value": "x"},
                {"key": "b"},
                {"key": "c", "effect": "Sometimes"},
            ]
        },
    }
    assert create("", "Node", node, namespaced=False) == [
        'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"x", Effect:"NoSchedule", '
        "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
        "metadata.taints[2].effect: Required value",
        'metadata.taints[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ]


def test_node_defaults_allocatable_and_freezes_pod_cidrs() -> None:
    node: dict[str, Any] = {
        "metadata": {"name": "n1"},
        "spec": {"podCIDRs": ["10.0.0.0/24"]},
        "status": {"capacity": {"cpu": "4"}},
    }
    assert create("", "Node", node, namespaced=False) == []
    assert node["status"]["allocatable"] == {"cpu": "4"}
    new = copy.deepcopy(stamped(node))
    new["spec"]["podCIDRs"] = ["10.0.1.0/24"]
    assert update("", "Node", new, node, namespaced=False) == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'
    ]
    bad = {"metadata": {"name": "n2"}, "spec": {"podCIDRs": ["nonsense"]}}
    assert create("", "Node", bad, namespaced=False) == [
        'spec.podCIDRs[0]: Invalid value: []string{"nonsense"}: must be valid CIDR'
    ]


# ---------------------------------------------------------------------- config maps, secrets


def config_map(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "cm", "namespace": "default"}}
    obj.update(fields)
    return obj


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"data": {"a.b_c-1": "x"}}, []),
        ({"data": {"a b": "x"}}, [f'data[a b]: Invalid value: "a b": {CONFIG_KEY_MSG}']),
        ({"data": {"..x": "x"}}, ["data[..x]: Invalid value: \"..x\": must not start with '..'"]),
        (
            {"data": {"k": "x"}, "binaryData": {"k": "eA=="}},
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
        ),
        ({"data": {"k": "x" * (1024 * 1024 + 1)}}, [": Too long: must have at most 1048576 bytes"]),
    ],
)
def test_config_map_rules(fields: dict[str, Any], expected: list[str]) -> None:
    assert create("", "ConfigMap", config_map(**fields)) == expected


def test_immutable_config_map() -> None:
    old = stamped(config_map(data={"k": "v"}, immutable=True))
    new = copy.deepcopy(old)
    new["data"] = {"k": "w"}
    new["immutable"] = False
    assert update("", "ConfigMap", new, old) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


def secret(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "s", "namespace": "default"}}
    obj.update(fields)
    return obj


def test_secret_defaults_fold_string_data() -> None:
    obj = secret(data={"a": base64.b64encode(b"1").decode()}, stringData={"b": "two", "a": "one"})
    assert create("", "Secret", obj) == []
    assert obj["type"] == "Opaque"
    assert "stringData" not in obj
    assert {k: base64.b64decode(v) for k, v in obj["data"].items()} == {"a": b"one", "b": b"two"}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"type": "kubernetes.io/tls", "data": {}}, ["data[tls.crt]: Required value", "data[tls.key]: Required value"]),
        ({"type": "kubernetes.io/basic-auth"}, ["data[username]: Required value", "data[password]: Required value"]),
        (
            {"type": "kubernetes.io/service-account-token"},
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        ({"type": "kubernetes.io/dockerconfigjson"}, ["data[.dockerconfigjson]: Required value"]),
        (
            {"data": {"k": base64.b64encode(b"x" * (1024 * 1024 + 1)).decode()}},
            ["data: Too long: must have at most 1048576 bytes"],
        ),
    ],
)
def test_secret_rules(fields: dict[str, Any], expected: list[str]) -> None:
    assert create("", "Secret", secret(**fields)) == expected


def test_secret_type_is_immutable() -> None:
    old = stamped(secret(type="Opaque"))
    new = copy.deepcopy(old)
    new["type"] = "example.com/other"
    assert update("", "Secret", new, old) == ['type: Invalid value: "example.com/other": field is immutable']


def test_service_account_names() -> None:
    assert create("", "ServiceAccount", {"metadata": {"name": "robot", "namespace": "default"}}) == []
    assert create("", "ServiceAccount", {"metadata": {"name": "Robot", "namespace": "default"}})[0].startswith(
        'metadata.name: Invalid value: "Robot": a lowercase RFC 1123 subdomain'
    )


# ------------------------------------------------------------------ persistent volume claims


def claim(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def test_claim_defaults() -> None:
    obj = claim()
    assert create("", "PersistentVolumeClaim", obj) == []
    assert obj["spec"]["volumeMode"] == "Filesystem"
    assert obj["status"] == {"phase": "Pending"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"accessModes": None}, ["spec.accessModes: Required value: at least 1 access mode is required"]),
        (
            {"accessModes": ["ReadSometimes"]},
            [
                'spec.accessModes: Unsupported value: "ReadSometimes": supported values: '
                '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
            ],
        ),
        (
            {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        ({"resources": {}}, ["spec.resources[storage]: Required value"]),
        (
            {"resources": {"requests": {"storage": "0"}}},
            ['spec.resources[storage]: Invalid value: "0": must be greater than zero'],
        ),
        ({"volumeMode": "Raw"}, ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"']),
        (
            {"storageClassName": "Fast"},
            [
                'spec.storageClassName: Invalid value: "Fast": a lowercase RFC 1123 subdomain '
                "must consist of lower case alphanumeric characters, '-' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'example.com', regex used "
                "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                "[a-z0-9])?)*')"
            ],
        ),
    ],
)
def test_claim_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert create("", "PersistentVolumeClaim", claim(**spec)) == expected


def test_claim_update_rules() -> None:
    old = claim()
    create("", "PersistentVolumeClaim", old)
    stamped(old)
    bound = copy.deepcopy(old)
    bound["spec"]["volumeName"] = "pv-1"
    assert update("", "PersistentVolumeClaim", bound, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["accessModes"] = ["ReadOnlyMany"]
    errors = update("", "PersistentVolumeClaim", changed, old)
    assert errors == [
        "spec: Forbidden: spec is immutable after creation except resources.requests for bound claims\n"
        '  core.PersistentVolumeClaimSpec{\n- \taccessModes: ["ReadWriteOnce"],\n+ \taccessModes: ["ReadOnlyMany"],\n'
        "  }\n"
    ]
    old["status"] = {"phase": "Bound"}
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert update("", "PersistentVolumeClaim", grown, old) == []
    shrunk = copy.deepcopy(old)
    shrunk["spec"]["resources"]["requests"]["storage"] = "512Mi"
    assert update("", "PersistentVolumeClaim", shrunk, old) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
    ]


# ------------------------------------------------------------------------------------ leases


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0}, []),
        ({"leaseDurationSeconds": 0}, ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]),
        ({"leaseTransitions": -1}, ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]),
    ],
)
def test_lease_rules(spec: dict[str, Any], expected: list[str]) -> None:
    lease = {"metadata": {"name": "leader", "namespace": "kube-system"}, "spec": spec}
    assert create("coordination.k8s.io", "Lease", lease) == expected
    stamped(lease)
    assert update("coordination.k8s.io", "Lease", copy.deepcopy(lease), lease) == expected


def test_lease_finalizers_are_not_held_to_standard_names() -> None:
    lease = {"metadata": {"name": "leader", "namespace": "kube-system", "finalizers": ["custom"]}, "spec": {}}
    assert create("coordination.k8s.io", "Lease", lease) == []


@pytest.mark.parametrize(
    ("deleting", "phase", "expected"),
    [
        (False, "Active", []),
        (True, "Terminating", []),
        (False, "Terminating", ["status.Phase: Invalid value: \"Terminating\": may only be 'Active' if "
                                "`deletionTimestamp` is empty"]),
        (True, "Active", ["status.Phase: Invalid value: \"Active\": may only be 'Terminating' if "
                          "`deletionTimestamp` is not empty"]),
    ],
)
def test_namespace_status_phase(deleting: bool, phase: str, expected: list[str]) -> None:
    old: dict[str, Any] = stamped({"metadata": {"name": "team"}, "status": {"phase": "Active"}})
    if deleting:
        old["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    new = copy.deepcopy(old)
    new["status"]["phase"] = phase
    errors = validate_status_update("", "v1", "Namespace", new, old, namespaced=False)
    assert [str(e) for e in errors] == expected
