"""The webhook's pure core without a server: pod mutation corners, the JSON patch, the answer."""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from kubeloop.api import kruise
from kubeloop.server.patch import apply_json_patch
from kubeloop.webhook.configuration import CLONESET_DEFAULTING, CLONESET_VALIDATION, POD_MUTATION
from kubeloop.webhook.jsonpatch import create_patch
from kubeloop.webhook.review import admit, answer

Obj = dict[str, Any]
ORDERED = {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: kruise.CONTAINER_LAUNCH_ORDERED}
ALLOWED = {"allowed": True, "status": {"metadata": {}, "code": 200}}


def request(operation: str, obj: Obj, old: Obj | None = None, resource: str = "pods") -> Obj:
    sent: Obj = {"uid": "u-1", "operation": operation, "namespace": "default",
                 "resource": {"group": "", "version": "v1", "resource": resource}, "object": obj}
    if old is not None:
        sent["oldObject"] = old
    return sent


def pod(name: str, *containers: Obj, annotations: Mapping[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": list(containers)}}


def container(name: str, priority: str | None = None) -> Obj:
    body: Obj = {"name": name, "image": "busybox"}
    if priority is not None:
        body["env"] = [{"name": kruise.CONTAINER_PRIORITY_ENV, "value": priority}]
    return body


def patched(body: Obj, response: Mapping[str, Any]) -> Obj:
    ops = orjson.loads(base64.b64decode(response["patch"])) if "patch" in response else []
    return apply_json_patch(copy.deepcopy(body), ops)


def test_pod_without_an_order_or_not_created_is_left_alone() -> None:
    single = pod("single", container("a"), annotations=ORDERED)
    same = pod("same", container("a", "2"), container("b", "2"))
    assert admit(POD_MUTATION, request("CREATE", single, resource="pods")) == admit(
        POD_MUTATION, request("CREATE", same, resource="pods")) == ALLOWED
    ordered = pod("ordered", container("a"), container("b"), annotations=ORDERED)
    assert "patch" not in admit(POD_MUTATION, request("UPDATE", ordered, ordered, resource="pods"))


def test_pod_priority_that_is_not_an_integer_is_an_internal_error() -> None:
    response = admit(POD_MUTATION, request("CREATE", pod("bad", container("a", "x1"), container("b")),
                                           resource="pods"))
    assert response == {"allowed": False,
                        "status": {"metadata": {}, "message": 'strconv.Atoi: parsing "x1": invalid syntax',
                                   "code": 500}}


def test_generate_name_pod_gets_a_name_its_barrier_names() -> None:
    body = pod("", container("a"), container("b"), annotations=ORDERED)
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = "web-"
    mutated = patched(body, admit(POD_MUTATION, request("CREATE", body)))
    name = mutated["metadata"]["name"]
    assert name.startswith("web-") and len(name) == len("web-") + 5
    env = mutated["spec"]["containers"][1]["env"][-1]
    assert env["valueFrom"]["configMapKeyRef"] == {"name": f"{name}-barrier", "key": "p_-1"}


def test_answer_echoes_the_uid_and_refuses_what_is_not_a_review() -> None:
    sent = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": request("CREATE", {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                          "metadata": {"name": "echo"}, "spec": {}}, resource="clonesets")}
    answered = answer(CLONESET_DEFAULTING, orjson.dumps(sent))
    assert answered["apiVersion"] == "admission.k8s.io/v1" and answered["kind"] == "AdmissionReview"
    assert answered["response"]["uid"] == "u-1" and answered["response"]["allowed"] is True
    assert patched(sent["request"]["object"], answered["response"])["spec"]["replicas"] == 1
    refused = answer(CLONESET_VALIDATION, b'{"kind": "Pod"}')["response"]
    assert refused["allowed"] is False and refused["status"]["code"] == 400


PATCH_CASES = {
    "equal": ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}),
    "added and removed": ({"a": 1, "gone": {"x": 1}}, {"a": 1, "new": {"y": [1]}}),
    "nested change": ({"spec": {"template": {"replicas": 1}}}, {"spec": {"template": {"replicas": 2}}}),
    "escaped keys": ({"metadata": {"annotations": {"a/b~c": "1"}}}, {"metadata": {"annotations": {"a/b~c": "2",
                                                                                                   "x/y": "3"}}}),
    "list grows": ({"env": [{"n": 1}]}, {"env": [{"n": 1}, {"n": 2}, {"n": 3}]}),
    "list shrinks": ({"env": [1, 2, 3]}, {"env": [1]}),
    "list elements change": ({"c": [{"env": None}, {"env": [1]}]}, {"c": [{"env": [9]}, {"env": [1, 9]}]}),
    "types change": ({"a": 1, "b": True, "c": "1"}, {"a": True, "b": 1, "c": 1}),
}


@pytest.mark.parametrize(("before", "after"), PATCH_CASES.values(), ids=PATCH_CASES.keys())
def test_patch_turns_one_document_into_the_other(before: Obj, after: Obj) -> None:
    ops = create_patch(before, after)
    result = apply_json_patch(copy.deepcopy(before), ops)
    assert orjson.dumps(result, option=orjson.OPT_SORT_KEYS) == orjson.dumps(after, option=orjson.OPT_SORT_KEYS)
    assert (ops == []) == (before == after and orjson.dumps(before) == orjson.dumps(after))


def test_patch_of_a_grown_list_only_adds() -> None:
    assert create_patch({"env": [1]}, {"env": [1, 2]}) == [{"op": "add", "path": "/env/1", "value": 2}]
