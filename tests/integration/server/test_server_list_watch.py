"""List (selectors, paging, resourceVersion rules) and watch (start points, selectors, 410)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client, raw_request
from test_server_objects import pod


def _names(items: list[Any]) -> list[str]:
    return [item.metadata.name for item in items]


def test_label_selectors_with_every_operator(cluster: Cluster) -> None:
    for name, labels in [("a", {"app": "web", "tier": "1"}), ("b", {"app": "db", "tier": "2"}), ("c", {})]:
        cluster.core.create_namespaced_pod("default", pod(name, labels=labels))
    cases = {
        "app=web": ["a"], "app==web": ["a"], "app!=web": ["b", "c"], "app in (web,db)": ["a", "b"],
        "app notin (web)": ["b", "c"], "app": ["a", "b"], "!app": ["c"], "tier>1": ["b"], "tier<2": ["a"],
        "app=web,tier=2": [], "": ["a", "b", "c"],
    }
    for selector, expected in cases.items():
        found = cluster.core.list_namespaced_pod("default", label_selector=selector).items
        assert _names(found) == expected, selector
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespaced_pod("default", label_selector="app in web")
    assert caught.value.status == 400


def test_field_selectors_are_whitelisted(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", pod("a", node="n1"))
    cluster.core.create_namespaced_pod("default", pod("b"))
    assert _names(cluster.core.list_namespaced_pod("default", field_selector="metadata.name=b").items) == ["b"]
    assert _names(cluster.core.list_namespaced_pod("default", field_selector="spec.nodeName=n1").items) == ["a"]
    assert _names(cluster.core.list_pod_for_all_namespaces(field_selector="status.phase=Pending").items) == ["a", "b"]
    assert _names(cluster.core.list_namespaced_pod("default", field_selector="spec.nodeName!=n1").items) == ["b"]
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespaced_pod("default", field_selector="spec.image=x")
    assert caught.value.status == 400
    assert orjson.loads(caught.value.body)["message"] == "field label not supported: spec.image"
    # A kind without a field label conversion of its own gets the scheme's default refusal.
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespaced_config_map("default", field_selector="data.k=x")
    assert orjson.loads(caught.value.body)["message"] == (
        '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"')


def test_paging_with_limit_and_continue(cluster: Cluster) -> None:
    for index in range(7):
        cluster.core.create_namespaced_config_map("default", {"metadata": {"name": f"cm-{index}"}})
    first = cluster.core.list_namespaced_config_map("default", limit=3)
    assert _names(first.items) == ["cm-0", "cm-1", "cm-2"]
    # Every namespace also holds the kube-root-ca.crt ConfigMap, listed after the cm-* names.
    assert first.metadata.remaining_item_count == 5
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm-9"}})
    second = cluster.core.list_namespaced_config_map("default", limit=3, _continue=first.metadata._continue)
    assert _names(second.items) == ["cm-3", "cm-4", "cm-5"]
    assert second.metadata.resource_version == first.metadata.resource_version
    third = cluster.core.list_namespaced_config_map("default", limit=3, _continue=second.metadata._continue)
    assert _names(third.items) == ["cm-6", "cm-9", "kube-root-ca.crt"]
    assert third.metadata._continue is None
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespaced_config_map("default", _continue="not-a-token")
    assert caught.value.status == 400
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespaced_config_map("default", _continue=first.metadata._continue,
                                                resource_version="5")
    assert caught.value.status == 400


def test_list_resource_version_rules(cluster: Cluster) -> None:
    listed = cluster.core.list_namespace()
    current = int(listed.metadata.resource_version)
    assert len(cluster.core.list_namespace(resource_version="0", limit=1).items) == 4  # "Any" ignores limit
    assert cluster.core.list_namespace(resource_version=str(current)).items
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespace(resource_version=str(current + 100))
    assert caught.value.status == 504
    body = orjson.loads(caught.value.body)
    assert body["reason"] == "Timeout"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespace(resource_version_match="Exact")
    assert caught.value.status == 422
    assert orjson.loads(caught.value.body)["details"]["kind"] == "ListOptions"
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespace(resource_version="0", resource_version_match="Sometime")
    assert caught.value.status == 422
    with pytest.raises(ApiException) as caught:
        cluster.core.list_namespace(resource_version="abc")
    assert caught.value.status == 400


def test_list_items_and_revision(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
    listed = cluster.core.list_config_map_for_all_namespaces()
    assert int(listed.metadata.resource_version) >= int(created.metadata.resource_version)
    # Besides "cm", each of the four default namespaces holds its kube-root-ca.crt.
    assert _names(listed.items) == ["cm", *["kube-root-ca.crt"] * 4]


def _events(cluster: Cluster, function: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
    stream = watch.Watch().stream(function, *args, timeout_seconds=1, **kwargs)
    return [(event["type"], event["object"].metadata.name) for event in stream]


def test_watch_from_scratch_sends_current_state_then_ends_at_timeout(cluster: Cluster) -> None:
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
    assert _events(cluster, cluster.core.list_namespaced_config_map, "default") == [
        ("ADDED", "a"), ("ADDED", "b"), ("ADDED", "kube-root-ca.crt")]


def test_watch_from_a_revision_streams_changes_with_delete_revision(cluster: Cluster) -> None:
    start = cluster.core.list_namespaced_config_map("default").metadata.resource_version
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"x": "1"}})
    cluster.core.patch_namespaced_config_map("a", "default", {"data": {"x": "2"}})
    deleted = cluster.core.delete_namespaced_config_map("a", "default")
    assert deleted["status"] == "Success"
    stream = watch.Watch().stream(cluster.core.list_namespaced_config_map, "default", resource_version=start,
                                  timeout_seconds=1)
    events = [(e["type"], e["object"]) for e in stream]
    assert [t for t, _ in events] == ["ADDED", "MODIFIED", "DELETED"]
    revisions = [int(o.metadata.resource_version) for _, o in events]
    assert revisions == sorted(revisions) and len(set(revisions)) == 3
    assert events[2][1].data == {"x": "2"}


def test_watch_selector_transitions_become_added_and_deleted(cluster: Cluster) -> None:
    start = cluster.core.list_namespaced_config_map("default").metadata.resource_version
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "a", "labels": {"on": "no"}}})
    cluster.core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"on": "yes"}}})
    cluster.core.patch_namespaced_config_map("a", "default", {"data": {"k": "v"}})
    cluster.core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"on": "no"}}})
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "b", "labels": {"on": "no"}}})
    events = _events(cluster, cluster.core.list_namespaced_config_map, "default", resource_version=start,
                     label_selector="on=yes")
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_bookmarks_carry_the_current_revision(cluster: Cluster) -> None:
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    status, _, body = cluster.raw(
        "GET", "/api/v1/namespaces/default/configmaps?watch=True&allowWatchBookmarks=True&timeoutSeconds=1")
    assert status == 200
    lines = [orjson.loads(line) for line in body.splitlines()]
    # "a" and the namespace's kube-root-ca.crt.
    assert [line["type"] for line in lines] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = lines[-1]["object"]
    assert bookmark["kind"] == "ConfigMap" and bookmark["apiVersion"] == "v1"
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(lines[0]["object"]["metadata"]["resourceVersion"])


def test_too_old_watch_gets_in_stream_410_and_client_relists(start_server: Callable[..., ServerThread]) -> None:
    server = start_server(watch_cache_size=3)
    api = make_api_client(server.server.kubeconfig_path)
    try:
        core = client.CoreV1Api(api)
        start = core.list_namespaced_config_map("default").metadata.resource_version
        for index in range(6):
            core.create_namespaced_config_map("default", {"metadata": {"name": f"cm-{index}"}})
        status, _, body = raw_request(server, "GET",
                                      f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={start}")
        assert status == 200
        event = orjson.loads(body.splitlines()[0])
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        assert event["object"]["message"].startswith(f"too old resource version: {start} (")
        with pytest.raises(ApiException) as caught:
            list(watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version=start,
                                      timeout_seconds=1))
        assert caught.value.status == 410
        # Relisting gives a revision a watch can start from.
        fresh = core.list_namespaced_config_map("default").metadata.resource_version
        core.create_namespaced_config_map("default", {"metadata": {"name": "late"}})
        events = [(e["type"], e["object"].metadata.name) for e in watch.Watch().stream(
            core.list_namespaced_config_map, "default", resource_version=fresh, timeout_seconds=1)]
        assert events == [("ADDED", "late")]
    finally:
        api.close()


def test_watch_across_namespaces_and_events_k8s_io(cluster: Cluster) -> None:
    start = cluster.core.list_namespace().metadata.resource_version
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_config_map("team", {"metadata": {"name": "x"}})
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "y"}})
    events = _events(cluster, cluster.core.list_config_map_for_all_namespaces, resource_version=start)
    # The new namespace's kube-root-ca.crt is created with it, before "x".
    assert events == [("ADDED", "kube-root-ca.crt"), ("ADDED", "x"), ("ADDED", "y")]


def test_watch_list_ends_initial_events_with_an_annotated_bookmark(cluster: Cluster) -> None:
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    status, _, body = cluster.raw("GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
                                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1")
    assert status == 200
    lines = [orjson.loads(line) for line in body.splitlines()]
    # "a" (the newest) and the namespace's kube-root-ca.crt, then the bookmark.
    assert [line["type"] for line in lines[:3]] == ["ADDED", "ADDED", "BOOKMARK"]
    marker = lines[2]["object"]["metadata"]
    assert marker["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert marker["resourceVersion"] == lines[0]["object"]["metadata"]["resourceVersion"]
