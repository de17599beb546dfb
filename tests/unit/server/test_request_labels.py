"""The metrics labels of a request: upstream's scope, verb and dry_run rules, case by case."""

from __future__ import annotations

import pytest

from kubeloop.server.metrics import REQUEST_DURATION_BUCKETS, WATCH_EVENT_SIZE_BUCKETS, WatchSeries
from kubeloop.server.request_labels import dry_run_label, group_resource, request_scope, request_verb


@pytest.mark.parametrize(("method", "namespace", "name", "scope"), [
    ("GET", "default", "web", "resource"),        # one namespaced object
    ("GET", None, "node-1", "resource"),          # one cluster-scoped object
    ("GET", "default", None, "namespace"),        # a collection in a namespace
    ("GET", None, None, "cluster"),               # across namespaces, or a cluster-scoped collection
    ("POST", "default", None, "resource"),        # a create is scoped to what it makes
    ("POST", None, None, "resource"),
    ("DELETE", "default", None, "namespace"),     # delete-collection
    ("DELETE", None, None, "cluster"),
    ("PATCH", "default", "web", "resource"),
])
def test_scope(method: str, namespace: str | None, name: str | None, scope: str) -> None:
    assert request_scope(method, namespace, name) == scope


@pytest.mark.parametrize(("method", "scope", "watch", "content_type", "verb"), [
    ("GET", "resource", None, None, "GET"),
    ("GET", "namespace", None, None, "LIST"),
    ("GET", "cluster", None, None, "LIST"),
    ("HEAD", "resource", None, None, "GET"),
    ("HEAD", "namespace", "true", None, "LIST"),   # only a GET becomes WATCH
    ("GET", "namespace", "true", None, "WATCH"),
    ("GET", "namespace", "1", None, "WATCH"),
    ("GET", "namespace", "", None, "WATCH"),       # any value but 0 / false
    ("GET", "cluster", "FALSE", None, "LIST"),
    ("GET", "cluster", "0", None, "LIST"),
    ("GET", "resource", "true", None, "WATCH"),
    ("POST", "resource", None, "application/json", "POST"),
    ("PUT", "resource", None, "application/json", "PUT"),
    ("PATCH", "resource", None, "application/merge-patch+json", "PATCH"),
    ("PATCH", "resource", None, "application/apply-patch+yaml", "APPLY"),
    ("PATCH", "resource", None, "application/apply-patch+yaml; charset=utf-8", "PATCH"),  # exact match only
    ("DELETE", "resource", None, None, "DELETE"),
    ("DELETE", "namespace", None, None, "DELETE"),  # delete-collection: the method's name, as upstream
    ("OPTIONS", "resource", None, None, "other"),
    ("get", "resource", None, None, "GET"),
])
def test_verb(method: str, scope: str, watch: str | None, content_type: str | None, verb: str) -> None:
    assert request_verb(method, scope, watch, content_type) == verb


@pytest.mark.parametrize(("values", "label"), [
    ([], ""),
    (["All"], "All"),
    (["All", "All"], "All"),
    ([""], "invalid"),
    (["All", "Some"], "invalid"),
    (["all"], "invalid"),
])
def test_dry_run(values: list[str], label: str) -> None:
    assert dry_run_label(values) == label


def test_group_resource() -> None:
    assert group_resource("", "pods") == "pods"
    assert group_resource("apps", "deployments") == "deployments.apps"


def test_buckets_are_upstreams() -> None:
    assert REQUEST_DURATION_BUCKETS == (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6,
                                        8, 10, 15, 20, 30, 45, 60)
    assert WATCH_EVENT_SIZE_BUCKETS == (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


def test_a_value_on_a_bound_falls_in_that_bucket() -> None:
    series = WatchSeries()
    for size in (1, 1024, 1025, 131072, 131073):
        series.observe_size(size)
    buckets = dict(series.family_buckets(WATCH_EVENT_SIZE_BUCKETS))
    assert buckets["1024.0"] == 2
    assert buckets["2048.0"] == 3
    assert buckets["131072.0"] == 4
    assert buckets["+Inf"] == 5
    assert series.total == 1 + 1024 + 1025 + 131072 + 131073
