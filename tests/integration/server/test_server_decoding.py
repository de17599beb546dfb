"""Typed decoding of built-in objects over HTTP: wrong types, ranges, unknown fields, omitempty.

The texts are kube-apiserver 1.33's: Go's ``UnmarshalTypeError`` behind the create and update
handlers' ``... cannot be handled as a ...`` prefix, ``strict decoding error: unknown field`` for
``fieldValidation=Strict``, and one ``Warning: 299`` header per dropped field otherwise.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from server_harness import Cluster

JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def deployment(name: str, spec_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {"replicas": 1, "selector": {"matchLabels": labels},
                            "template": {"metadata": {"labels": labels},
                                         "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    spec.update(spec_extra or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def post(cluster: Cluster, path: str, body: Any, query: str = "") -> tuple[int, dict[str, str], dict[str, Any]]:
    status, headers, raw = cluster.raw("POST", path + query, headers=JSON, body=orjson.dumps(body))
    return status, headers, orjson.loads(raw)


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PREFIX = 'Deployment in version "v1" cannot be handled as a Deployment: '


@pytest.mark.parametrize(("spec_extra", "message"), [
    ({"replicas": 2147483648},
     "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"replicas": 2**63},
     f"json: cannot unmarshal number {2**63} into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"replicas": "3"},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"replicas": 1.5},
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"paused": "yes"},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"),
    ({"selector": "app=x"},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector"),
    ({"template": {"spec": {"containers": {"name": "app"}}}},
     "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type "
     "[]v1.Container"),
    ({"template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": "80"}]}]}}},
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports."
     "containerPort of type int32"),
    ({"template": {"metadata": {"labels": {"app": 1}}}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.spec.template.metadata.labels of type string"),
])
def test_wrong_types_and_ranges_are_400_with_go_texts(cluster: Cluster, spec_extra: dict[str, Any],
                                                      message: str) -> None:
    status, _, body = post(cluster, DEPLOYMENTS, deployment("bad", spec_extra))
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", PREFIX + message)
    status, _, _ = cluster.raw("GET", DEPLOYMENTS + "/bad")
    assert status == 404


@pytest.mark.parametrize(("path", "body", "message"), [
    ("/api/v1/namespaces/default/pods",
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
      "spec": {"containers": [{"name": "a", "image": "b"}]}, "status": {"phase": 5}},
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field '
     "PodStatus.status.phase of type string"),
    ("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": "x"},
     'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field '
     "Node.status of type v1.NodeStatus"),
    ("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                       "spec": {"unschedulable": "yes"}},
     'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field '
     "NodeSpec.spec.unschedulable of type bool"),
    ("/api/v1/namespaces/default/configmaps",
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": "x"}},
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct '
     "field ObjectMeta.metadata.managedFields of type []v1.ManagedFieldsEntry"),
    ("/apis/coordination.k8s.io/v1/namespaces/default/leases",
     {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
      "spec": {"renewTime": "x"}},
     'Lease in version "v1" cannot be handled as a Lease: parsing time "x" as "2006-01-02T15:04:05Z07:00": '
     'cannot parse "x" as "2006"'),
])
def test_other_kinds_decode_their_fields(cluster: Cluster, path: str, body: dict[str, Any], message: str) -> None:
    status, _, answer = post(cluster, path, body)
    assert (status, answer["message"]) == (400, message)


def test_unknown_fields_are_dropped_with_a_warning_by_default(cluster: Cluster) -> None:
    status, headers, body = post(cluster, DEPLOYMENTS, deployment("web", {"bogus": {"deep": 1}}))
    assert status == 201
    assert "bogus" not in body["spec"]
    assert headers["Warning"] == '299 - "unknown field \\"spec.bogus\\""'
    stored = orjson.loads(cluster.raw("GET", DEPLOYMENTS + "/web")[2])
    assert "bogus" not in stored["spec"]


def test_strict_field_validation_refuses_unknown_fields(cluster: Cluster) -> None:
    manifest = deployment("web", {"bogus": 1})
    manifest["spec"]["template"]["spec"]["containers"][0]["colour"] = "red"
    status, _, body = post(cluster, DEPLOYMENTS, manifest, "?fieldValidation=Strict")
    # In document order: ``bogus`` follows ``template`` in the body.
    assert (status, body["message"]) == (400, PREFIX + 'strict decoding error: unknown field '
                                         '"spec.template.spec.containers[0].colour", unknown field "spec.bogus"')


def test_ignore_field_validation_is_silent(cluster: Cluster) -> None:
    status, headers, body = post(cluster, DEPLOYMENTS, deployment("web", {"bogus": 1}), "?fieldValidation=Ignore")
    assert status == 201 and "Warning" not in headers and "bogus" not in body["spec"]


def test_unknown_field_validation_value_is_400(cluster: Cluster) -> None:
    status, _, body = post(cluster, DEPLOYMENTS, deployment("web"), "?fieldValidation=Loud")
    assert status == 400
    assert body["message"] == "fieldValidation parameter unsupported: Loud. Must be one of: Ignore, Warn, or Strict"


def test_patches_are_decoded_too(cluster: Cluster) -> None:
    """A patched object that does not decode is a 422 on the field ``patch`` (upstream's patch.go),
    whose invalid value is the patched document."""
    assert post(cluster, DEPLOYMENTS, deployment("web"))[0] == 201
    status, _, raw = cluster.raw("PATCH", DEPLOYMENTS + "/web", headers=MERGE,
                                 body=orjson.dumps({"spec": {"replicas": 2147483648}}))
    body = orjson.loads(raw)
    assert (status, body["reason"], body["details"]["causes"][0]["field"]) == (422, "Invalid", "patch")
    assert body["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert body["message"].endswith(
        ": json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32")
    status, _, raw = cluster.raw("PATCH", DEPLOYMENTS + "/web/scale", headers=MERGE,
                                 body=orjson.dumps({"spec": {"replicas": 2**40}}))
    assert status == 422
    assert orjson.loads(raw)["message"].endswith("into Go struct field ScaleSpec.spec.replicas of type int32")
    status, _, raw = cluster.raw("PATCH", DEPLOYMENTS + "/web?fieldValidation=Strict", headers=MERGE,
                                 body=orjson.dumps({"spec": {"bogus": 1}}))
    assert status == 422
    assert orjson.loads(raw)["message"].endswith('": strict decoding error: unknown field "spec.bogus"')
    stored = orjson.loads(cluster.raw("GET", DEPLOYMENTS + "/web")[2])
    assert stored["spec"]["replicas"] == 1 and "bogus" not in stored["spec"]


def test_empty_optional_maps_and_lists_are_not_stored(cluster: Cluster) -> None:
    manifest = deployment("web")
    manifest["metadata"].update({"labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []})
    manifest["spec"]["template"]["spec"]["containers"][0]["env"] = []
    status, _, body = post(cluster, DEPLOYMENTS, manifest)
    assert status == 201
    assert not {"labels", "annotations", "finalizers", "ownerReferences"} & body["metadata"].keys()
    assert "env" not in body["spec"]["template"]["spec"]["containers"][0]


def test_a_new_deployment_has_an_empty_status(cluster: Cluster) -> None:
    status, _, body = post(cluster, DEPLOYMENTS, deployment("web"))
    assert status == 201 and body["status"] == {}
