"""Deletion: finalizers, propagation policies, grace periods, preconditions, collections."""

from __future__ import annotations

import orjson
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from server_harness import Cluster
from test_server_objects import deployment, pod

from kubeloop.testing.polling import eventually_blocking


def _gone(cluster: Cluster, name: str) -> bool:
    try:
        cluster.core.read_namespaced_config_map(name, "default")
    except ApiException as error:
        return error.status == 404
    return False


def test_delete_answers_status_or_object_by_kind(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    answer = cluster.apps.delete_namespaced_deployment("web", "default")
    assert answer["status"] == "Success"
    assert answer["details"] == {"name": "web", "group": "apps", "kind": "deployments", "uid": created.metadata.uid}
    cluster.core.create_namespaced_pod("default", pod("p"))
    deleted = cluster.core.delete_namespaced_pod("p", "default")
    assert deleted.metadata.name == "p"
    with pytest.raises(ApiException) as caught:
        cluster.core.delete_namespaced_pod("p", "default")
    assert caught.value.status == 404


def test_finalizers_hold_deletion_until_removed(cluster: Cluster) -> None:
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "held", "finalizers": ["x/y"]}})
    start = cluster.core.list_namespaced_config_map("default").metadata.resource_version
    pending = cluster.core.delete_namespaced_config_map("held", "default")
    assert pending["metadata"]["deletionTimestamp"]
    assert pending["metadata"]["deletionGracePeriodSeconds"] == 0
    current = cluster.core.read_namespaced_config_map("held", "default")
    current.metadata.finalizers = ["x/y", "new/one"]
    with pytest.raises(ApiException) as caught:
        cluster.core.replace_namespaced_config_map("held", "default", current)
    assert caught.value.status == 422
    cluster.core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    assert _gone(cluster, "held")
    events = [e["type"] for e in watch.Watch().stream(cluster.core.list_namespaced_config_map, "default",
                                                      resource_version=start, timeout_seconds=1)]
    assert events == ["MODIFIED", "MODIFIED", "DELETED"]


def test_deletion_timestamp_bumps_generation(cluster: Cluster) -> None:
    body = deployment("web")
    body["metadata"]["finalizers"] = ["example.com/keep"]
    cluster.apps.create_namespaced_deployment("default", body)
    cluster.apps.delete_namespaced_deployment("web", "default")
    held = cluster.apps.read_namespaced_deployment("web", "default")
    assert held.metadata.generation == 2 and held.metadata.deletion_timestamp is not None


@pytest.mark.parametrize(("policy", "finalizer"), [("Foreground", "foregroundDeletion"), ("Orphan", "orphan")])
def test_propagation_policies_add_gc_finalizers(cluster: Cluster, policy: str, finalizer: str) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("web"))
    answer = cluster.apps.delete_namespaced_deployment("web", "default", propagation_policy=policy)
    assert answer["metadata"]["finalizers"] == [finalizer]
    held = cluster.apps.read_namespaced_deployment("web", "default")
    assert held.metadata.deletion_timestamp is not None
    cluster.apps.patch_namespaced_deployment("web", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
    with pytest.raises(ApiException) as caught:
        cluster.apps.read_namespaced_deployment("web", "default")
    assert caught.value.status == 404


def test_background_and_orphan_dependents_query(cluster: Cluster) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("a"))
    cluster.apps.delete_namespaced_deployment("a", "default", propagation_policy="Background")
    with pytest.raises(ApiException):
        cluster.apps.read_namespaced_deployment("a", "default")
    cluster.apps.create_namespaced_deployment("default", deployment("b"))
    status, _, body = cluster.raw("DELETE", "/apis/apps/v1/namespaces/default/deployments/b?orphanDependents=true")
    assert status == 200 and orjson.loads(body)["metadata"]["finalizers"] == ["orphan"]
    status, _, body = cluster.raw("DELETE", "/apis/apps/v1/namespaces/default/deployments/b",
                                  body=b'{"propagationPolicy":"Sideways"}')
    assert status == 422


def test_pod_grace_period(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", pod("unscheduled"))
    assert cluster.core.delete_namespaced_pod("unscheduled", "default").metadata.name == "unscheduled"
    cluster.core.create_namespaced_pod("default", pod("running", node="n1"))
    pending = cluster.core.delete_namespaced_pod("running", "default")
    assert pending.metadata.deletion_grace_period_seconds == 30
    shorter = cluster.core.delete_namespaced_pod("running", "default", grace_period_seconds=5)
    assert shorter.metadata.deletion_grace_period_seconds == 5
    longer = cluster.core.delete_namespaced_pod("running", "default", grace_period_seconds=60)
    assert longer.metadata.deletion_grace_period_seconds == 5
    cluster.core.delete_namespaced_pod("running", "default", grace_period_seconds=0)
    with pytest.raises(ApiException) as caught:
        cluster.core.read_namespaced_pod("running", "default")
    assert caught.value.status == 404


def test_preconditions_and_dry_run(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
    wrong = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="nope"))
    with pytest.raises(ApiException) as caught:
        cluster.core.delete_namespaced_config_map("cm", "default", body=wrong)
    assert caught.value.status == 409
    stale = client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version="1"))
    with pytest.raises(ApiException) as caught:
        cluster.core.delete_namespaced_config_map("cm", "default", body=stale)
    assert caught.value.status == 409
    cluster.core.delete_namespaced_config_map("cm", "default", dry_run="All")
    assert not _gone(cluster, "cm")
    right = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=created.metadata.uid))
    cluster.core.delete_namespaced_config_map("cm", "default", body=right)
    assert _gone(cluster, "cm")


def test_delete_collection_with_selector(cluster: Cluster) -> None:
    for name, team in [("a", "x"), ("b", "x"), ("c", "y")]:
        cluster.core.create_namespaced_config_map("default", {"metadata": {"name": name, "labels": {"team": team}}})
    status, _, body = cluster.raw("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=team%3Dx")
    assert status == 200
    answer = orjson.loads(body)
    assert answer["kind"] == "ConfigMapList"
    assert [item["metadata"]["name"] for item in answer["items"]] == ["a", "b"]
    cluster.core.delete_collection_namespaced_config_map("default", label_selector="team=none")
    names = [c.metadata.name for c in cluster.core.list_namespaced_config_map("default").items]
    assert names == ["c", "kube-root-ca.crt"]


def test_deleting_a_namespace_removes_its_content(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_config_map("team", {"metadata": {"name": "x"}})
    answer = cluster.core.delete_namespace("team")
    # As upstream: the namespace turns Terminating, and goes once the namespace finalizer emptied it.
    assert answer["status"]["phase"] == "Terminating"

    def removed() -> bool:
        try:
            cluster.core.read_namespace("team")
        except ApiException as error:
            assert error.status == 404
            return True
        return False

    eventually_blocking(removed, timeout=30, what="namespace team to be removed")
    assert cluster.core.list_namespaced_config_map("team").items == []
