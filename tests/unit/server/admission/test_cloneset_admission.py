"""CloneSet admission: defaults (kruise ``pkg/webhook/cloneset/mutating``) and
every validation row of upstream's table (``pkg/webhook/cloneset/validating/validation_test.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api import kruise
from kubeloop.api.status import FieldError
from kubeloop.server.admission.cloneset import (
    cloneset_rules,
    default_cloneset,
    validate_cloneset_create,
    validate_cloneset_update,
)

UID = "cs-uid"
PODS: dict[tuple[str, str], dict[str, Any]] = {
    ("default", "p0"): {
        "metadata": {"name": "p0", "namespace": "default", "ownerReferences": [{"uid": UID, "controller": True}]}
    },
    ("default", "other"): {
        "metadata": {"name": "other", "namespace": "default", "ownerReferences": [{"uid": "x", "controller": True}]}
    },
    ("default", "dying"): {
        "metadata": {
            "name": "dying",
            "namespace": "default",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [{"uid": UID, "controller": True}],
        }
    },
}


def get_pod(namespace: str, name: str) -> dict[str, Any] | None:
    return PODS.get((namespace, name))


def cloneset(*, defaulted: bool = True, **strategy: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": kruise.API_VERSION,
        "kind": "CloneSet",
        "metadata": {"name": "test", "namespace": "default", "uid": UID, "resourceVersion": "1"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            "updateStrategy": dict(strategy),
        },
    }
    if defaulted:
        default_cloneset(obj)
    return obj


def messages(errs: list[FieldError]) -> list[str]:
    return [str(e) for e in errs]


def test_defaults() -> None:
    obj = cloneset(type=kruise.IN_PLACE_IF_POSSIBLE)
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {
        "type": kruise.IN_PLACE_IF_POSSIBLE,
        "inPlaceUpdateStrategy": {},
        "partition": 0,
        "maxUnavailable": "20%",
        "maxSurge": 0,
    }
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert cloneset()["spec"]["updateStrategy"]["type"] == kruise.RECREATE
    assert "inPlaceUpdateStrategy" not in cloneset()["spec"]["updateStrategy"]


def test_defaults_leave_an_unchanged_template_alone_on_update() -> None:
    old = cloneset()
    new = copy.deepcopy(old)
    del new["spec"]["template"]["spec"]["dnsPolicy"]
    old["spec"]["template"] = copy.deepcopy(new["spec"]["template"])
    default_cloneset(new, old)
    assert "dnsPolicy" not in new["spec"]["template"]["spec"]
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    default_cloneset(new, old)
    assert new["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_volume_claim_templates_are_defaulted() -> None:
    obj = cloneset(defaulted=False)
    obj["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {}}]
    default_cloneset(obj)
    assert obj["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"


# --- accepted rows -----------------------------------------------------------------------


def _accepted_creates() -> list[dict[str, Any]]:
    in_place = cloneset(type=kruise.IN_PLACE_IF_POSSIBLE, partition=2, maxUnavailable=1)
    in_place["spec"]["scaleStrategy"] = {"podsToDelete": ["p0"]}
    weighted = cloneset(
        maxUnavailable="120%",
        priorityStrategy={"weightPriority": [{"weight": 0, "matchSelector": {"matchLabels": {"k": "v"}}}]},
    )
    return [
        in_place,
        cloneset(maxUnavailable=1, maxSurge=1),
        cloneset(maxUnavailable=0, maxSurge=1),
        cloneset(maxUnavailable="120%"),
        weighted,
        cloneset(partition="12.5%"),
    ]


@pytest.mark.parametrize("obj", _accepted_creates())
def test_accepted_creates(obj: dict[str, Any]) -> None:
    assert validate_cloneset_create(obj, get_pod=get_pod) == []


def _change(obj: dict[str, Any], what: str) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    spec = new["spec"]
    if what == "replicas":
        spec["replicas"] = 5
    elif what == "image":
        spec["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    elif what == "history":
        spec["revisionHistoryLimit"] = 3
    elif what == "podsToDelete":
        spec["scaleStrategy"] = {"podsToDelete": ["p0"]}
    elif what == "vct":
        spec["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"
    elif what == "in-place-only":
        spec["updateStrategy"]["type"] = kruise.IN_PLACE_ONLY
    elif what == "deadline":
        spec["minReadySeconds"] = kruise.MAX_INT32
        spec["progressDeadlineSeconds"] = kruise.MAX_INT32
    return new


@pytest.mark.parametrize("what", ["replicas", "image", "history", "podsToDelete", "vct", "in-place-only", "deadline"])
def test_accepted_updates(what: str) -> None:
    old = cloneset()
    old["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    ]
    assert validate_cloneset_update(_change(old, what), old, get_pod=get_pod) == []


def test_old_names_in_pods_to_delete_are_not_rechecked() -> None:
    old = cloneset()
    old["spec"]["scaleStrategy"] = {"podsToDelete": ["gone"]}
    new = copy.deepcopy(old)
    new["spec"]["scaleStrategy"]["podsToDelete"] = ["gone", "p0"]
    assert validate_cloneset_update(new, old, get_pod=get_pod) == []


# --- rejected rows -----------------------------------------------------------------------


def _rejected_creates() -> list[tuple[str, dict[str, Any], str]]:
    rows: list[tuple[str, dict[str, Any], str]] = []
    obj = cloneset()
    obj["spec"]["replicas"] = -1
    rows.append(("replicas", obj, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"))
    obj = cloneset()
    obj["spec"]["template"]["metadata"]["labels"]["a/b/c"] = "x"
    rows.append(("label key", obj, 'spec.template.metadata.labels: Invalid value: "a/b/c"'))
    obj = cloneset()
    obj["spec"]["selector"] = {"matchLabels": {"a": "b", "c": "d"}}
    rows.append(
        (
            "selector",
            obj,
            'spec.template.metadata.labels: Invalid value: map[string]string{"a":"b"}: '
            "`selector` does not match template `labels`",
        )
    )
    rows.append(
        (
            "type",
            cloneset(defaulted=False, type="", partition=0, maxUnavailable=1, maxSurge=0),
            "spec.updateStrategy.type: Invalid value: \"\": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        )
    )
    rows.append(
        (
            "partition",
            cloneset(partition=-1),
            "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0",
        )
    )
    both_zero = "spec.updateStrategy.maxUnavailable: Invalid value: "
    rows.append(
        (
            "maxUnavailable 0, maxSurge unset",
            cloneset(defaulted=False, type=kruise.RECREATE, maxUnavailable=0),
            both_zero + 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
            "maxUnavailable and maxSurge should not both be less than 1",
        )
    )
    rows.append(
        (
            "maxUnavailable 0, maxSurge 0",
            cloneset(maxUnavailable=0, maxSurge=0),
            both_zero + 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
            "maxUnavailable and maxSurge should not both be less than 1",
        )
    )
    obj = cloneset()
    obj["spec"]["scaleStrategy"] = {"podsToDelete": ["p0", "p0"]}
    rows.append(
        (
            "duplicate podsToDelete",
            obj,
            'spec.scaleStrategy.podsToDelete: Invalid value: []string{"p0", "p0"}: duplicated items [p0]',
        )
    )
    for names in (["p0", "p1"], ["p1"]):
        obj = cloneset()
        obj["spec"]["scaleStrategy"] = {"podsToDelete": names}
        rows.append(
            (
                f"missing pod {names}",
                obj,
                'spec.scaleStrategy.podsToDelete: Invalid value: "p1": find pod p1 failed: pods "p1" not found',
            )
        )
    obj = cloneset()
    obj["spec"]["scaleStrategy"] = {"podsToDelete": ["other", "dying"]}
    rows.append(
        (
            "foreign pod",
            obj,
            'spec.scaleStrategy.podsToDelete: Invalid value: "other": find pod other owner is not this CloneSet',
        )
    )
    rows.append(
        (
            "terminating pod",
            obj,
            'spec.scaleStrategy.podsToDelete: Invalid value: "dying": find pod dying already terminating',
        )
    )
    rows.append(
        (
            "maxSurge 5",
            cloneset(maxSurge="5"),
            'spec.updateStrategy.maxSurge: Invalid value: "5": failed GetScaledValueFromIntOrPercent for maxSurge: '
            "invalid type: string is not a percentage",
        )
    )
    rows.append(
        (
            "maxUnavailable 5",
            cloneset(maxUnavailable="5"),
            'spec.updateStrategy.maxUnavailable: Invalid value: "5": failed GetScaledValueFromIntOrPercent for '
            "maxUnavailable: invalid type: string is not a percentage",
        )
    )
    rows.append(
        (
            "maxSurge with InPlaceOnly",
            cloneset(type=kruise.IN_PLACE_ONLY, maxSurge=1),
            'spec.updateStrategy.maxSurge: Invalid value: "1": can not use maxSurge with strategy type InPlaceOnly',
        )
    )
    obj = cloneset()
    obj["spec"]["progressDeadlineSeconds"] = -1
    rows.append(
        ("deadline -1", obj, "spec.progressDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0")
    )
    for min_ready in (10, 15):
        obj = cloneset()
        obj["spec"]["progressDeadlineSeconds"] = 10
        obj["spec"]["minReadySeconds"] = min_ready
        rows.append(
            (
                f"deadline vs minReadySeconds {min_ready}",
                obj,
                "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds",
            )
        )
    obj = cloneset()
    obj["spec"]["selector"] = {}
    rows.append(("empty selector", obj, "spec.selector: Invalid value: "))
    obj = cloneset()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    rows.append(("restartPolicy", obj, 'spec.template.spec.restartPolicy: Unsupported value: "Never"'))
    obj = cloneset()
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    rows.append(
        (
            "activeDeadlineSeconds",
            obj,
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported",
        )
    )
    rows.append(
        (
            "both priorities",
            cloneset(priorityStrategy={"weightPriority": [{"weight": 1}], "orderPriority": [{"orderedKey": "k"}]}),
            "spec.updateStrategy.priorityStrategy: Required value: only one of weightPriority and orderPriority "
            "can be used",
        )
    )
    rows.append(
        (
            "weight range",
            cloneset(
                priorityStrategy={"weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"k": "v"}}}]}
            ),
            "spec.updateStrategy.priorityStrategy: Required value: weight must be valid number in the range 1-100",
        )
    )
    rows.append(
        (
            "empty weight selector",
            cloneset(priorityStrategy={"weightPriority": [{"weight": 5, "matchSelector": {}}]}),
            "spec.updateStrategy.priorityStrategy: Required value: selector can not be empty",
        )
    )
    rows.append(
        (
            "empty ordered key",
            cloneset(priorityStrategy={"orderPriority": [{"orderedKey": ""}]}),
            "spec.updateStrategy.priorityStrategy: Required value: order key can not be empty",
        )
    )
    rows.append(
        (
            "scatter duplicate",
            cloneset(scatterStrategy=[{"key": "k", "value": "v"}, {"key": "k", "value": "v"}]),
            "spec.updateStrategy.scatterStrategy: Required value: duplicated key=k value=v",
        )
    )
    rows.append(
        (
            "scatter empty key",
            cloneset(scatterStrategy=[{"key": "", "value": "v"}]),
            "spec.updateStrategy.scatterStrategy: Required value: key should not be empty",
        )
    )
    rows.append(
        (
            "partition without percent",
            cloneset(partition="5"),
            'spec.updateStrategy.partition: Invalid value: "5": failed GetScaledValueFromIntOrPercent for partition: '
            "invalid type: string is not a percentage",
        )
    )
    return rows


_REJECTED = _rejected_creates()


@pytest.mark.parametrize(("name", "obj", "expected"), _REJECTED, ids=[row[0] for row in _REJECTED])
def test_rejected_creates(name: str, obj: dict[str, Any], expected: str) -> None:
    found = messages(validate_cloneset_create(obj, get_pod=get_pod))
    assert any(message.startswith(expected) for message in found), (name, found)


def test_update_rejects_image_pull_policy_change_under_in_place_only() -> None:
    old = cloneset(type=kruise.IN_PLACE_ONLY)
    new = copy.deepcopy(old)
    container = new["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "nginx:2"
    container["imagePullPolicy"] = "Always"
    assert messages(validate_cloneset_update(new, old, get_pod=get_pod)) == [
        "spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found replace "
        "/containers/0/imagePullPolicy"
    ]
    image_only = copy.deepcopy(old)
    image_only["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    image_only["spec"]["template"]["metadata"]["labels"]["extra"] = "label"
    assert validate_cloneset_update(image_only, old, get_pod=get_pod) == []


def test_update_rejects_a_selector_change() -> None:
    old = cloneset()
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"a": "b", "c": "d"}}
    new["spec"]["template"]["metadata"]["labels"]["c"] = "d"
    assert messages(validate_cloneset_update(new, old, get_pod=get_pod)) == [
        "spec: Forbidden: updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', "
        "'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' "
        "and 'revisionHistoryLimit' are forbidden"
    ]


def test_update_rejects_max_surge_without_percent() -> None:
    old = cloneset()
    new = copy.deepcopy(old)
    new["spec"]["updateStrategy"]["maxSurge"] = "5"
    assert any("maxSurge" in m for m in messages(validate_cloneset_update(new, old, get_pod=get_pod)))


def test_update_checks_metadata() -> None:
    old = cloneset()
    new = copy.deepcopy(old)
    new["metadata"]["name"] = "renamed"
    assert any(m.startswith("metadata.name") for m in messages(validate_cloneset_update(new, old)))


def test_without_a_pod_reader_names_are_not_checked() -> None:
    obj = cloneset()
    obj["spec"]["scaleStrategy"] = {"podsToDelete": ["p1"]}
    assert validate_cloneset_create(obj) == []


def test_kind_rules() -> None:
    rules = cloneset_rules(get_pod)
    obj = cloneset(defaulted=False)
    rules.default(obj)
    assert rules.create(obj) == []
    assert rules.update(obj, obj) == []
    assert rules.status_update(obj, obj) == []


def test_validation_never_mutates() -> None:
    obj = cloneset(maxSurge="5")
    before = copy.deepcopy(obj)
    validate_cloneset_create(obj, get_pod=get_pod)
    validate_cloneset_update(obj, before, get_pod=get_pod)
    assert obj == before
