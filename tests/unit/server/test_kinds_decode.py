"""Typed decoding of built-in objects from upstream's schemas (kubeloop.server.kinds.decode)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.kinds.decode import STRICT, WARN, decode_object, initial_status, warning_headers


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a", "image": "b"}], **spec}}


def decoded(obj: dict[str, Any], validation: str = WARN) -> tuple[dict[str, Any], list[str]]:
    copied = copy.deepcopy(obj)
    warnings = decode_object(obj["apiVersion"].rpartition("/")[0], obj["apiVersion"].rpartition("/")[2],
                             obj["kind"], copied, validation)
    return copied, warnings


def message(obj: dict[str, Any], validation: str = WARN) -> str:
    with pytest.raises(ApiError) as caught:
        decoded(obj, validation)
    assert caught.value.code == 400
    return caught.value.message.split(": ", 1)[1]


def test_nulls_are_dropped_and_values_kept() -> None:
    obj, warnings = decoded(pod(nodeName=None, priority=7, tolerations=[{"key": "k", "tolerationSeconds": 30}]))
    assert warnings == []
    assert "nodeName" not in obj["spec"]
    assert obj["spec"]["priority"] == 7
    assert obj["spec"]["tolerations"] == [{"key": "k", "tolerationSeconds": 30}]


def test_int_or_string_and_quantities() -> None:
    container = {"name": "a", "image": "b", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}},
                 "readinessProbe": {"httpGet": {"port": "http"}, "periodSeconds": 5}}
    obj, _ = decoded(pod(containers=[container]))
    resources = obj["spec"]["containers"][0]["resources"]
    assert resources["limits"] == {"cpu": "2", "memory": "1Gi"}
    assert message(pod(containers=[{**container, "readinessProbe": {"httpGet": {"port": True}}}])) == (
        "json: cannot unmarshal bool into Go value of type int32")


def test_lists_of_scalars_and_maps_check_their_items() -> None:
    assert message(pod(containers=[{"name": "a", "command": ["sh", 1]}])) == (
        "json: cannot unmarshal number into Go struct field Container.spec.containers.command of type string")
    assert message(pod(nodeSelector={"disk": True})) == (
        "json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector of type string")


def test_int64_range() -> None:
    assert decoded(pod(activeDeadlineSeconds=2**62))[0]["spec"]["activeDeadlineSeconds"] == 2**62
    assert message(pod(activeDeadlineSeconds=2**63)) == (
        f"json: cannot unmarshal number {2**63} into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64")


_PRIORITY = "Go struct field PodSpec.spec.priority of type int32"


@pytest.mark.parametrize(("spec", "error"), [
    ({"priority": 2**31 - 1}, None),
    ({"priority": -(2**31)}, None),
    ({"priority": 2**31}, f"json: cannot unmarshal number {2**31} into {_PRIORITY}"),
    ({"priority": -(2**31) - 1}, f"json: cannot unmarshal number {-(2**31) - 1} into {_PRIORITY}"),
    ({"priority": True}, f"json: cannot unmarshal bool into {_PRIORITY}"),
    ({"priority": 1.5}, f"json: cannot unmarshal number 1.5 into {_PRIORITY}"),
    ({"priority": "1"}, f"json: cannot unmarshal string into {_PRIORITY}"),
    ({"hostNetwork": 1}, "json: cannot unmarshal number into Go struct field PodSpec.spec.hostNetwork of type bool"),
    ({"nodeName": False}, "json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeName of type string"),
    ({"securityContext": []}, "json: cannot unmarshal array into Go struct field PodSpec.spec.securityContext of type "
                              "v1.PodSecurityContext"),
    ({"tolerations": [{"key": "k", "tolerationSeconds": 2**63}]},
     f"json: cannot unmarshal number {2**63} into Go struct field Toleration.spec.tolerations.tolerationSeconds of "
     "type int64"),
    ({"tolerations": ["k"]}, "json: cannot unmarshal string into Go struct field PodSpec.spec.tolerations of type "
                             "v1.Toleration"),
])
def test_plain_fields_at_their_edges(spec: dict[str, Any], error: str | None) -> None:
    """Plain values (strings, booleans, integers in range) pass as they are; the rest fail with
    Go's text, whether they sit in a struct or a list."""
    if error is None:
        assert decoded(pod(**spec))[0]["spec"] == {**pod()["spec"], **spec}
    else:
        assert message(pod(**spec)) == error


def test_quantities_and_int_or_strings_in_maps() -> None:
    """Text passes as it is; numbers become text; other values are refused."""
    obj, _ = decoded(pod(overhead={"cpu": "250m", "memory": 64}))
    assert obj["spec"]["overhead"] == {"cpu": "250m", "memory": "64"}
    assert message(pod(overhead={"cpu": True})).startswith("quantities must match the regular expression")


def test_unknown_fields_are_named_with_list_indices_and_map_keys() -> None:
    obj, warnings = decoded(pod(containers=[{"name": "a", "extra": 1}], overhead={"cpu": "1"}, bogus={}))
    assert warnings == ['unknown field "spec.containers[0].extra"', 'unknown field "spec.bogus"']
    assert "extra" not in obj["spec"]["containers"][0] and "bogus" not in obj["spec"]
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"},
                 "spec": {"x": 1}}
    assert message(configmap, STRICT) == 'strict decoding error: unknown field "spec"'


def test_kinds_without_a_schema_pass_unchanged() -> None:
    obj = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": {"anything": [1]}}
    assert decoded(obj) == (obj, [])


def test_initial_status_writes_the_always_written_fields() -> None:
    assert initial_status("apps", "v1", "Deployment") == {}
    assert initial_status("apps", "v1", "ReplicaSet") == {"replicas": 0}
    assert initial_status("apps", "v1", "DaemonSet") == {"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
                                                         "numberMisscheduled": 0, "numberReady": 0}
    assert initial_status("", "v1", "ConfigMap") is None


def test_warning_header_quotes_as_go() -> None:
    assert warning_headers(['unknown field "a\\b"']) == ['299 - "unknown field \\"a\\\\b\\""']
