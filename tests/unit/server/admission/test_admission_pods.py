"""Pod defaults, pod spec validation, and the pod update rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import (
    default_object,
    default_pod_template_spec,
    validate_create,
    validate_pod_template_spec,
    validate_status_update,
    validate_update,
)

DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": body}


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    default_object("", "v1", "Pod", obj)
    return obj


def create_errors(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_create("", "v1", "Pod", defaulted(obj), namespaced=True)]


def test_pod_defaults() -> None:
    obj = defaulted(pod())
    assert obj["spec"] == {
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.25",
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "resources": {},
            }
        ],
        "enableServiceLinks": True,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }


def test_defaults_keep_explicit_values() -> None:
    obj = defaulted(
        pod(
            restartPolicy="Never",
            terminationGracePeriodSeconds=0,
            dnsPolicy="Default",
            schedulerName="mine",
            enableServiceLinks=False,
            securityContext={"runAsUser": 1},
        )
    )
    spec = obj["spec"]
    assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"], spec["dnsPolicy"]) == ("Never", 0, "Default")
    assert (spec["schedulerName"], spec["enableServiceLinks"], spec["securityContext"]) == (
        "mine",
        False,
        {"runAsUser": 1},
    )


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry:5000/team/app", "Always"),
        ("registry:5000/team/app:v1", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    obj = defaulted(pod(containers=[{"name": "c", "image": image}]))
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_container_field_defaults() -> None:
    container = {
        "name": "c",
        "image": "i",
        "ports": [{"containerPort": 80}],
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
    }
    obj = defaulted(pod(containers=[container], volumes=[{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}]))
    got = obj["spec"]["containers"][0]
    assert got["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert got["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert got["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    # Pods (not templates) request what they limit unless they say otherwise.
    assert got["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert obj["spec"]["volumes"] == [
        {"name": "v", "emptyDir": {}},
        {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}},
    ]


def test_host_network_pods_get_host_ports() -> None:
    obj = defaulted(pod(hostNetwork=True, containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 8080}]}]))
    assert obj["spec"]["containers"][0]["ports"][0]["hostPort"] == 8080


def test_template_defaults_skip_pod_only_defaults() -> None:
    template: dict[str, Any] = {
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}
    }
    default_pod_template_spec(template)
    assert "enableServiceLinks" not in template["spec"]
    assert "requests" not in template["spec"]["containers"][0]["resources"]
    assert template["spec"]["restartPolicy"] == "Always"


def test_valid_pod() -> None:
    assert create_errors(pod()) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": []}, ["spec.containers: Required value"]),
        ({"containers": [{"name": "", "image": "i"}]}, ["spec.containers[0].name: Required value"]),
        (
            {"containers": [{"name": "A_b", "image": "i"}]},
            [f'spec.containers[0].name: Invalid value: "A_b": {DNS_LABEL_MSG}'],
        ),
        ({"containers": [{"name": "a"}]}, ["spec.containers[0].image: Required value"]),
        (
            {"containers": [{"name": "a", "image": "i"}, {"name": "a", "image": "j"}]},
            ['spec.containers[1].name: Duplicate value: "a"'],
        ),
        (
            {"containers": [{"name": "a", "image": " i"}]},
            ['spec.containers[0].image: Invalid value: " i": must not have leading or trailing whitespace'],
        ),
        (
            {"containers": [{"name": "a", "image": "i", "imagePullPolicy": "Sometimes"}]},
            [
                'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
                '"Always", "IfNotPresent", "Never"'
            ],
        ),
        (
            {"containers": [{"name": "a", "image": "i", "terminationMessagePolicy": "X"}]},
            [
                'spec.containers[0].terminationMessagePolicy: Unsupported value: "X": supported values: '
                '"File", "FallbackToLogsOnError"'
            ],
        ),
        (
            {"restartPolicy": "Sometimes"},
            ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
        ),
        (
            {"dnsPolicy": "X"},
            [
                'spec.dnsPolicy: Unsupported value: "X": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
                '"Default", "None"'
            ],
        ),
        (
            {"activeDeadlineSeconds": 0},
            ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
        ),
        (
            {"readinessGates": [{"conditionType": "example.com/ok"}, {"conditionType": "bad/x/y"}]},
            [
                'spec.readinessGates[1].conditionType: Invalid value: "bad/x/y": a qualified name must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"
            ],
        ),
        ({"hostname": "Host"}, [f'spec.hostname: Invalid value: "Host": {DNS_LABEL_MSG}']),
        (
            {"ephemeralContainers": [{"name": "e", "image": "i"}]},
            ["spec.ephemeralContainers: Forbidden: cannot be set on create"],
        ),
        (
            {"nodeName": "n1", "schedulingGates": [{"name": "g"}]},
            ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
        ),
    ],
)
def test_pod_spec_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(pod(**spec)) == expected


def container(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "c", "image": "i"}
    body.update(fields)
    return body


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"ports": [{"containerPort": 0}]}, ["spec.containers[0].ports[0].containerPort: Required value"]),
        (
            {"ports": [{"containerPort": 70000}]},
            ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
        ),
        (
            {"ports": [{"containerPort": 80, "protocol": "HTTP"}]},
            ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
        ),
        (
            {"ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}]},
            ['spec.containers[0].ports[1].name: Duplicate value: "web"'],
        ),
        (
            {"ports": [{"containerPort": 80, "name": "Web--1"}]},
            [
                'spec.containers[0].ports[0].name: Invalid value: "Web--1": must contain only alpha-numeric characters '
                "(a-z, 0-9), and hyphens (-)",
                'spec.containers[0].ports[0].name: Invalid value: "Web--1": must not contain consecutive hyphens',
            ],
        ),
        (
            {"env": [{"name": "1X"}]},
            [
                'spec.containers[0].env[0].name: Invalid value: "1X": a valid environment variable name must '
                'consist of '
                "alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. "
                "'my.env-name',  "
                "or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
            ],
        ),
        ({"env": [{"name": ""}]}, ["spec.containers[0].env[0].name: Required value"]),
        (
            {"env": [{"name": "X", "valueFrom": {}}]},
            [
                'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, '
                "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            ],
        ),
        (
            {"env": [{"name": "X", "value": "v", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]},
            ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'],
        ),
        (
            {"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "c"}}}]},
            ["spec.containers[0].env[0].valueFrom.configMapKeyRef.key: Required value"],
        ),
        (
            {"volumeMounts": [{"name": "missing", "mountPath": "/m"}]},
            ['spec.containers[0].volumeMounts[0].name: Not found: "missing"'],
        ),
        (
            {"volumeMounts": [{"name": "data", "mountPath": ""}]},
            ["spec.containers[0].volumeMounts[0].mountPath: Required value"],
        ),
        (
            {"volumeMounts": [{"name": "data", "mountPath": "/m"}, {"name": "data", "mountPath": "/m"}]},
            ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/m": must be unique'],
        ),
        (
            {"volumeMounts": [{"name": "data", "mountPath": "/m", "subPath": "../x"}]},
            ["spec.containers[0].volumeMounts.subPath: Invalid value: \"../x\": must not contain '..'"],
        ),
        (
            {"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}},
            ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
        ),
        (
            {"resources": {"requests": {"cpu": "-1"}}},
            ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
        ),
        (
            {"resources": {"requests": {"cpu": "lots"}}},
            [
                'spec.containers[0].resources.requests[cpu]: Invalid value: "lots": quantities must match the regular '
                "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ],
        ),
        (
            {"resources": {"requests": {"gpu": "1"}}},
            [
                'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or '
                "fully qualified",
                'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for '
                "containers",
            ],
        ),
        (
            {"resources": {"requests": {"example.com/gpu": "1"}}},
            ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"],
        ),
        (
            {"livenessProbe": {"periodSeconds": 3}},
            ["spec.containers[0].livenessProbe: Required value: must specify a handler type"],
        ),
        (
            {"livenessProbe": {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}},
            ["spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"],
        ),
        (
            {"livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 2}},
            ["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"],
        ),
        (
            {"readinessProbe": {"httpGet": {"port": "no--pe"}}},
            [
                'spec.containers[0].readinessProbe.httpGet.port: Invalid value: "no--pe": must not contain consecutive '
                "hyphens"
            ],
        ),
        (
            {"restartPolicy": "Always"},
            ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"],
        ),
    ],
)
def test_container_rules(fields: dict[str, Any], expected: list[str]) -> None:
    volumes = [{"name": "data", "emptyDir": {}}]
    assert create_errors(pod(containers=[container(**fields)], volumes=volumes)) == expected


@pytest.mark.parametrize(
    ("volumes", "expected"),
    [
        (
            [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}],
            ['spec.volumes[1].name: Duplicate value: "a"'],
        ),
        ([{"name": "Bad", "emptyDir": {}}], [f'spec.volumes[0].name: Invalid value: "Bad": {DNS_LABEL_MSG}']),
        (
            [{"name": "a", "emptyDir": {}, "downwardAPI": {}}],
            ["spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type"],
        ),
        (
            [{"name": "a", "persistentVolumeClaim": {}}],
            ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"],
        ),
        (
            [{"name": "a", "configMap": {"defaultMode": 1000}}],
            [
                "spec.volumes[0].configMap.name: Required value",
                "spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 "
                "(octal), "
                "both inclusive",
            ],
        ),
        (
            [{"name": "a", "hostPath": {"path": "/x", "type": "Weird"}}],
            [
                'spec.volumes[0].hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", '
                '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
            ],
        ),
    ],
)
def test_volume_rules(volumes: list[dict[str, Any]], expected: list[str]) -> None:
    assert create_errors(pod(volumes=volumes)) == expected


def test_mounts_of_an_invalid_volume_are_not_found() -> None:
    errors = create_errors(
        pod(
            volumes=[{"name": "Bad", "emptyDir": {}}],
            containers=[container(volumeMounts=[{"name": "Bad", "mountPath": "/m"}])],
        )
    )
    assert 'spec.containers[0].volumeMounts[0].name: Not found: "Bad"' in errors


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, []),
        ({"operator": "Exists"}, []),
        (
            {"operator": "Equal", "value": "v"},
            [
                'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
                'which means "match all values and all keys"'
            ],
        ),
        (
            {"key": "k", "tolerationSeconds": 5, "effect": "NoSchedule"},
            [
                "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
                "`tolerationSeconds` is set"
            ],
        ),
        (
            {"key": "k", "operator": "Exists", "value": "v"},
            [
                'spec.tolerations[0].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", '
                "Effect:\"\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'"
            ],
        ),
        (
            {"key": "k", "operator": "Gt"},
            ['spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"'],
        ),
        (
            {"key": "k", "effect": "Never"},
            [
                'spec.tolerations[0].effect: Unsupported value: "Never": supported values: "NoSchedule", '
                '"PreferNoSchedule", "NoExecute"'
            ],
        ),
    ],
)
def test_toleration_rules(toleration: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(pod(tolerations=[toleration])) == expected


def test_init_container_rules() -> None:
    errors = create_errors(pod(initContainers=[container(name="app", readinessProbe={"exec": {"command": ["x"]}})]))
    assert errors == [
        'spec.initContainers[0].name: Duplicate value: "app"',
        "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without "
        "restartPolicy=Always",
    ]


def test_pod_template_validation_reused_by_workloads() -> None:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "-"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    default_pod_template_spec(template)
    errors = [str(e) for e in validate_pod_template_spec(template, "spec.template")]
    assert len(errors) == 1 and errors[0].startswith('spec.template.metadata.labels: Invalid value: "-": ')
    template["spec"]["ephemeralContainers"] = [{"name": "e"}]
    assert "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template" in [
        str(e) for e in validate_pod_template_spec(template, "spec.template")
    ]


# ------------------------------------------------------------------------------------ updates


def stored_pod(**spec: Any) -> dict[str, Any]:
    obj = defaulted(pod(**spec))
    obj["metadata"].update({"uid": "u", "resourceVersion": "3", "creationTimestamp": "2024-01-01T00:00:00Z"})
    return obj


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    default_object("", "v1", "Pod", new)
    return [str(e) for e in validate_update("", "v1", "Pod", new, old, namespaced=True)]


def test_image_change_is_allowed() -> None:
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    new["metadata"]["labels"] = {"x": "y"}
    assert update_errors(new, old) == []


def test_other_spec_changes_are_forbidden_with_upstream_message() -> None:
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["restartPolicy"] = "Never"
    errors = update_errors(new, old)
    assert errors == [
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
        "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
        '  core.PodSpec{\n- \trestartPolicy: "Always",\n+ \trestartPolicy: "Never",\n  }\n'
    ]


def test_adding_containers_is_forbidden() -> None:
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"].append({"name": "b", "image": "i"})
    assert "spec.containers: Forbidden: pod updates may not add or remove containers" in update_errors(new, old)


@pytest.mark.parametrize(
    ("old_deadline", "new_deadline", "expected"),
    [
        (None, 30, []),
        (30, 20, []),
        (30, 40, ["spec.activeDeadlineSeconds: Invalid value: 40: must be less than or equal to previous value"]),
        (
            30,
            None,
            ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"],
        ),
    ],
)
def test_active_deadline_may_only_shrink(
    old_deadline: int | None, new_deadline: int | None, expected: list[str]
) -> None:
    old = stored_pod() if old_deadline is None else stored_pod(activeDeadlineSeconds=old_deadline)
    new = copy.deepcopy(old)
    new["spec"].pop("activeDeadlineSeconds", None)
    if new_deadline is not None:
        new["spec"]["activeDeadlineSeconds"] = new_deadline
    assert update_errors(new, old) == expected


def test_tolerations_may_only_be_added() -> None:
    old = stored_pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}])
    added = copy.deepcopy(old)
    added["spec"]["tolerations"] = [
        {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 9},
        {"key": "b", "operator": "Exists"},
    ]
    assert update_errors(added, old) == []
    removed = copy.deepcopy(old)
    removed["spec"]["tolerations"] = []
    assert update_errors(removed, old) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
    ]


def test_scheduling_gates_may_only_be_removed() -> None:
    old = stored_pod(schedulingGates=[{"name": "a"}])
    new = copy.deepcopy(old)
    new["spec"]["schedulingGates"] = [{"name": "b"}]
    assert update_errors(new, old) == [
        "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"
    ]
    new["spec"]["schedulingGates"] = []
    assert update_errors(new, old) == []


def test_status_update_rules() -> None:
    old = stored_pod()
    new = copy.deepcopy(old)
    new["status"] = {"conditions": [{"type": "Ready", "status": "True"}, {"type": "bad type", "status": "True"}]}
    errors = [str(e) for e in validate_status_update("", "v1", "Pod", new, old, namespaced=True)]
    assert len(errors) == 1
    assert errors[0].startswith('metadata.conditions[1].Type: Invalid value: "bad type": name part must consist of')
    new["status"] = {}
    new["spec"]["nodeName"] = "n1"
    errors = [str(e) for e in validate_status_update("", "v1", "Pod", new, old, namespaced=True)]
    assert errors == ["status.nodeName: Forbidden: may not be changed directly"]


@pytest.mark.parametrize("containers", [True, "app", {"name": "app"}])
def test_malformed_containers_on_update_are_errors_not_crashes(containers: Any) -> None:
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"] = containers
    assert update_errors(new, old)
    assert update_errors(copy.deepcopy(old), {**old, "spec": {**old["spec"], "containers": containers}}) is not None


# ------------------------------------------------------------------ pod-deletion-cost annotation

COST = "controller.kubernetes.io/pod-deletion-cost"
COST_FIELD = f"metadata.annotations[{COST}]"


def with_cost(obj: dict[str, Any], value: str | None) -> dict[str, Any]:
    if value is not None:
        obj["metadata"].setdefault("annotations", {})[COST] = value
    return obj


@pytest.mark.parametrize(
    ("value", "refused"),
    [("10", False), ("-5", False), ("0", False), ("2147483647", False), (None, False),
     ("+10", True), ("008", True), ("abc", True), ("", True), ("2147483648", True), ("1.5", True)],
)
def test_deletion_cost_on_create(value: str | None, refused: bool) -> None:
    """Upstream's ValidatePodSpecificAnnotations rows (validation_test.go: "text", "008", "+10")."""
    expected = [f'{COST_FIELD}: Invalid value: "{value}": must be a 32bit integer'] if refused else []
    assert create_errors(with_cost(pod(), value)) == expected


@pytest.mark.parametrize(
    ("old_value", "new_value", "refused"),
    [
        ("1", "+10", True),
        (None, "abc", True),
        ("1", "2", False),
        ("+10", "+10", False),  # already invalid when stored: allowed (AllowInvalidPodDeletionCost)
        ("abc", "008", False),
        ("+10", "10", False),
    ],
)
def test_deletion_cost_on_update(old_value: str | None, new_value: str, refused: bool) -> None:
    old = with_cost(stored_pod(), old_value)
    new = with_cost(copy.deepcopy(old), new_value)
    error = f'{COST_FIELD}: Invalid value: "{new_value}": must be a 32bit integer'
    # Reported by validatePodMetadataAndSpec and again by ValidatePodSpecificAnnotationUpdates.
    assert update_errors(new, old) == ([error, error] if refused else [])
    status_errors = [str(e) for e in validate_status_update("", "v1", "Pod", new, old, namespaced=True)]
    assert status_errors == ([error] if refused else [])
