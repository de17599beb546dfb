"""``GET /metrics`` over HTTPS: exact series after known requests, parsed by prometheus_client."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from server_harness import Cluster, raw_request

from kubeloop.server.metrics import REQUEST_DURATION_BUCKETS

JSON = {"Content-Type": "application/json"}
CM_PATH = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _scrape(cluster: Cluster) -> dict[str, list[Sample]]:
    status, headers, body = cluster.raw("GET", "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return {family.name: family.samples for family in text_string_to_metric_families(body.decode())}


def _series(samples: list[Sample], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(s.labels.items())): s.value for s in samples if s.name == name}


def _request(verb: str, resource: str, scope: str, code: str | None, *, group: str = "", subresource: str = "",
             dry_run: str = "") -> tuple[tuple[str, str], ...]:
    labels = {"verb": verb, "dry_run": dry_run, "group": group, "version": "v1", "resource": resource,
              "subresource": subresource, "scope": scope, "component": "apiserver"}
    if code is not None:
        labels["code"] = code
    return tuple(sorted(labels.items()))


def _configmap(name: str) -> bytes:
    return orjson.dumps({"metadata": {"name": name, "labels": {"test": "metrics"}}, "data": {"k": "v"}})


MINE = "labelSelector=test%3Dmetrics"
"""Only this test's ConfigMaps (every namespace also holds its ``kube-root-ca.crt``)."""
ROOT_CA_CONFIGMAPS = 4
"""One ``kube-root-ca.crt`` in each of the four namespaces a new server has."""


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


def test_metrics_needs_the_token(cluster: Cluster) -> None:
    assert cluster.raw("GET", "/metrics", auth=False)[0] == 403  # system:anonymous
    assert cluster.raw("GET", "/metrics", headers={"Authorization": "Bearer wrong"}, auth=False)[0] == 401
    assert cluster.raw("GET", "/metrics")[0] == 200
    assert cluster.raw("POST", "/metrics")[0] == 405


def test_request_counts_and_durations_after_known_requests(cluster: Cluster) -> None:
    raw = cluster.raw
    assert raw("POST", CM_PATH, headers=JSON, body=_configmap("a"))[0] == 201
    assert raw("POST", CM_PATH, headers=JSON, body=_configmap("b"))[0] == 201
    assert raw("POST", CM_PATH, headers=JSON, body=_configmap("a"))[0] == 409
    assert raw("POST", CM_PATH + "?dryRun=All", headers=JSON, body=_configmap("c"))[0] == 201
    assert raw("GET", CM_PATH + "/a")[0] == 200
    assert raw("GET", CM_PATH + "/missing")[0] == 404
    assert raw("GET", CM_PATH)[0] == 200
    assert raw("GET", "/api/v1/configmaps")[0] == 200
    status, _, body = raw("GET", CM_PATH + f"?watch=true&timeoutSeconds=1&{MINE}")
    assert status == 200 and body.count(b"\n") == 2
    assert raw("PATCH", CM_PATH + "/a", headers={"Content-Type": "application/merge-patch+json"},
               body=b'{"data":{"k":"w"}}')[0] == 200
    assert raw("PUT", CM_PATH + "/b", headers=JSON, body=_configmap("b"))[0] == 200
    assert raw("PATCH", DEPLOYMENTS + "/web?fieldManager=tester",
               headers={"Content-Type": "application/apply-patch+yaml"},
               body=orjson.dumps(_deployment("web")))[0] == 201
    assert raw("GET", DEPLOYMENTS + "/web/scale")[0] == 200
    assert raw("DELETE", CM_PATH + "/a")[0] == 200
    assert raw("DELETE", CM_PATH)[0] == 200
    assert raw("GET", "/api/v1/nodes")[0] == 200
    # Reaching no handler, as upstream (no route): not recorded.
    assert raw("POST", CM_PATH + "/b", headers=JSON, body=_configmap("b"))[0] == 405
    assert raw("GET", "/api/v1/nosuchthings")[0] == 404
    assert raw("GET", "/apis/apps/v1")[0] == 200

    families = _scrape(cluster)
    assert _series(families["apiserver_request"], "apiserver_request_total") == {
        _request("POST", "configmaps", "resource", "201"): 2,
        _request("POST", "configmaps", "resource", "409"): 1,
        _request("POST", "configmaps", "resource", "201", dry_run="All"): 1,
        _request("GET", "configmaps", "resource", "200"): 1,
        _request("GET", "configmaps", "resource", "404"): 1,
        _request("LIST", "configmaps", "namespace", "200"): 1,
        _request("LIST", "configmaps", "cluster", "200"): 1,
        _request("WATCH", "configmaps", "namespace", "200"): 1,
        _request("PATCH", "configmaps", "resource", "200"): 1,
        _request("PUT", "configmaps", "resource", "200"): 1,
        _request("APPLY", "deployments", "resource", "201", group="apps"): 1,
        _request("GET", "deployments", "resource", "200", group="apps", subresource="scale"): 1,
        _request("DELETE", "configmaps", "resource", "200"): 1,
        # Delete-collection reports the method's name, as upstream's MonitorRequest does.
        _request("DELETE", "configmaps", "namespace", "200"): 1,
        _request("LIST", "nodes", "cluster", "200"): 1,
    }
    durations = families["apiserver_request_duration_seconds"]
    counts = _series(durations, "apiserver_request_duration_seconds_count")
    assert counts == {
        _request("POST", "configmaps", "resource", None): 3,
        _request("POST", "configmaps", "resource", None, dry_run="All"): 1,
        _request("GET", "configmaps", "resource", None): 2,
        _request("LIST", "configmaps", "namespace", None): 1,
        _request("LIST", "configmaps", "cluster", None): 1,
        _request("WATCH", "configmaps", "namespace", None): 1,
        _request("PATCH", "configmaps", "resource", None): 1,
        _request("PUT", "configmaps", "resource", None): 1,
        _request("APPLY", "deployments", "resource", None, group="apps"): 1,
        _request("GET", "deployments", "resource", None, group="apps", subresource="scale"): 1,
        _request("DELETE", "configmaps", "resource", None): 1,
        _request("DELETE", "configmaps", "namespace", None): 1,
        _request("LIST", "nodes", "cluster", None): 1,
    }
    watch_key = dict(_request("WATCH", "configmaps", "namespace", None))
    watch_buckets = {s.labels["le"]: s.value for s in durations
                     if s.name.endswith("_bucket") and {k: v for k, v in s.labels.items() if k != "le"} == watch_key}
    assert list(watch_buckets) == [repr(float(b)) for b in REQUEST_DURATION_BUCKETS] + ["+Inf"]
    # The watch lasted its timeoutSeconds (1 s): its whole lifetime is observed.
    assert watch_buckets["0.8"] == 0 and watch_buckets["+Inf"] == 1
    watch_sum = _series(durations, "apiserver_request_duration_seconds_sum")[tuple(sorted(watch_key.items()))]
    assert watch_sum >= 1.0


def test_storage_objects_per_group_resource(cluster: Cluster) -> None:
    for name in ("a", "b", "c"):
        assert cluster.raw("POST", CM_PATH, headers=JSON, body=_configmap(name))[0] == 201
    assert cluster.raw("POST", DEPLOYMENTS, headers=JSON, body=orjson.dumps(_deployment("web")))[0] == 201
    objects = _series(_scrape(cluster)["apiserver_storage_objects"], "apiserver_storage_objects")
    assert objects[(("resource", "configmaps"),)] == 3 + ROOT_CA_CONFIGMAPS
    assert objects[(("resource", "deployments.apps"),)] == 1
    assert objects[(("resource", "pods"),)] == 0
    assert objects[(("resource", "namespaces"),)] == 4  # default, kube-system, kube-public, kube-node-lease
    assert cluster.raw("DELETE", CM_PATH + "/a")[0] == 200
    objects = _series(_scrape(cluster)["apiserver_storage_objects"], "apiserver_storage_objects")
    assert objects[(("resource", "configmaps"),)] == 2 + ROOT_CA_CONFIGMAPS


def test_watch_events_counted_per_watcher_and_sized_per_encoding(cluster: Cluster) -> None:
    assert cluster.raw("POST", CM_PATH, headers=JSON, body=_configmap("a"))[0] == 201
    assert cluster.raw("POST", CM_PATH, headers=JSON, body=_configmap("b"))[0] == 201
    # From the current state: two synthetic ADDED events, each encoded for this watcher.
    status, _, initial = cluster.raw("GET", CM_PATH + f"?watch=1&timeoutSeconds=1&{MINE}")
    assert status == 200 and initial.count(b"\n") == 2
    revision = orjson.loads(cluster.raw("GET", CM_PATH)[2])["metadata"]["resourceVersion"]

    # Two watchers from the same revision both receive one change, encoded once for both.
    server = cluster.server

    async def two_watches_and_a_change() -> list[bytes]:
        watches = [asyncio.get_running_loop().run_in_executor(
            None, lambda: raw_request(server, "GET", f"{CM_PATH}?watch=1&resourceVersion={revision}"
                                                     f"&timeoutSeconds=2&{MINE}")) for _ in range(2)]
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: raw_request(server, "POST", CM_PATH, headers=JSON, body=_configmap("c")))
        return [result[2] for result in await asyncio.gather(*watches)]

    bodies = asyncio.run(two_watches_and_a_change())
    assert bodies[0] == bodies[1] and bodies[0].count(b"\n") == 1
    change = orjson.loads(bodies[0])
    assert change["type"] == "ADDED"

    families = _scrape(cluster)
    labels = (("group", ""), ("kind", "ConfigMap"), ("version", "v1"))
    assert _series(families["apiserver_watch_events"], "apiserver_watch_events_total") == {labels: 4}
    sizes = families["apiserver_watch_events_sizes"]
    initial_sizes = [len(orjson.dumps(orjson.loads(line)["object"])) for line in initial.splitlines()]
    assert _series(sizes, "apiserver_watch_events_sizes_count") == {labels: 3}
    assert _series(sizes, "apiserver_watch_events_sizes_sum") == {
        labels: sum(initial_sizes) + len(orjson.dumps(change["object"]))}
    buckets = {s.labels["le"]: s.value for s in sizes if s.name == "apiserver_watch_events_sizes_bucket"}
    assert buckets == {"1024.0": 3, "2048.0": 3, "4096.0": 3, "8192.0": 3, "16384.0": 3, "32768.0": 3,
                       "65536.0": 3, "131072.0": 3, "+Inf": 3}


def test_each_server_has_its_own_metrics(cluster: Cluster, start_server: Any, tmp_path: Any) -> None:
    other = start_server(data_dir=tmp_path / "other")
    assert cluster.raw("POST", CM_PATH, headers=JSON, body=_configmap("a"))[0] == 201
    status, _, body = raw_request(other, "GET", "/metrics")
    assert status == 200
    families = {f.name: f.samples for f in text_string_to_metric_families(body.decode())}
    assert families["apiserver_request"] == []
    assert _series(families["apiserver_storage_objects"], "apiserver_storage_objects")[
        (("resource", "configmaps"),)] == ROOT_CA_CONFIGMAPS
