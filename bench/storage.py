"""Benchmark of the embedded API server's storage layer, beside the bare SQLite insert ceiling.

Run: ``.venv/bin/python bench/storage.py [--writes N] [--list-sizes 10000,50000]``

Figures, all single-threaded and in-process (no HTTP):

- ceiling: the rate of the very INSERT the store issues per write, from Python, one commit per
  row, WAL, synchronous=NORMAL, with the JSON bodies encoded beforehand: what SQLite alone
  allows on this machine (issue 3 quotes about 26,000/s);
- create / update per second through ``Storage`` (SQLite and memory-only), which adds the JSON
  encoding, the in-memory index and the watch window;
- get per second, list latency at each size (whole list, one namespace, a first page of 500,
  a label predicate), the time to reopen a store of that size;
- watch fan-out: events delivered per second to 50 watchers of the type being written.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from kubeloop.server.storage import ResourceType, Storage
from kubeloop.server.storage._sqlite import INSERT_CHANGE, connect

PODS = ResourceType("", "pods")
NAMESPACES = 20
WATCHERS = 50


def make_pod(index: int) -> dict[str, Any]:
    """A pod as a ReplicaSet controller creates it and the server stores it (about 1.4 kB of JSON)."""
    name = f"web-7d4b9c8f6d-{index:06d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "web-7d4b9c8f6d-",
            "namespace": f"team-{index % NAMESPACES:02d}",
            "uid": f"6f1d3c9e-1b2a-4c3d-9e8f-{index:012d}",
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d", "shard": str(index % 10)},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d4b9c8f6d",
                    "uid": "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.25.3",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def with_phase(pod: dict[str, Any], phase: str) -> dict[str, Any]:
    return {**pod, "status": {**pod["status"], "phase": phase}}


@contextmanager
def timed(results: dict[str, float], label: str) -> Iterator[None]:
    gc.collect()
    start = time.perf_counter()
    yield
    results[label] = time.perf_counter() - start


def per_second(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f} /s"


def bare_insert_ceiling(directory: Path, bodies: list[bytes]) -> float:
    """Seconds to run the store's INSERT once per body, one commit per row."""
    connection = connect(directory / "ceiling.sqlite3")
    connection.execute("INSERT INTO resource_types (api_group, resource) VALUES ('', 'pods')")
    results: dict[str, float] = {}
    with timed(results, "ceiling"):
        for rv, body in enumerate(bodies, start=1):
            connection.execute(INSERT_CHANGE, (rv, 1, 0, body))
    connection.close()
    return results["ceiling"]


def write_rates(data_dir: Path | None, pods: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds to create then update every pod through Storage (memory-only when data_dir is None)."""
    store = Storage.open(data_dir, memory=data_dir is None)
    results: dict[str, float] = {}
    running = [with_phase(pod, "Running") for pod in pods]
    with timed(results, "create"):
        for pod in pods:
            store.create(PODS, pod)
    with timed(results, "update"):
        for pod in running:
            store.update(PODS, pod)
    keys = [(pod["metadata"]["namespace"], pod["metadata"]["name"]) for pod in pods]
    with timed(results, "get"):
        for namespace, name in keys:
            store.get(PODS, namespace, name)
    store.close()
    return results


def best_of(repeats: int, action: Callable[[], object]) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings)


def list_latencies(directory: Path, size: int) -> dict[str, float]:
    """Seconds per list of a store holding ``size`` pods, and to reopen it."""
    data_dir = directory / f"list-{size}"
    store = Storage.open(data_dir)
    for index in range(size):
        store.create(PODS, make_pod(index))
    store.close()
    results: dict[str, float] = {}
    with timed(results, "reopen"):
        store = Storage.open(data_dir)
    assert store.count(PODS) == size

    def shard_3(pod: dict[str, Any]) -> bool:
        return bool(pod["metadata"]["labels"].get("shard") == "3")

    results["list all"] = best_of(5, lambda: store.list(PODS))
    results["list one namespace"] = best_of(5, lambda: store.list(PODS, "team-07"))
    results["first page of 500"] = best_of(5, lambda: store.list(PODS, limit=500))
    results["label predicate (1 in 10)"] = best_of(5, lambda: store.list(PODS, predicate=shard_3))
    store.close()
    return results


async def fan_out(writes: int) -> tuple[float, int]:
    """Seconds to write ``writes`` pods with WATCHERS watchers attached and drain every watcher."""
    store = Storage.open(None, memory=True)
    watchers = [store.watch(PODS, None, 0) for _ in range(WATCHERS)]
    pods = [make_pod(index) for index in range(writes)]
    delivered = 0

    async def drain(count: int) -> int:
        received = 0
        for watcher in watchers:
            for _ in range(count):
                if await watcher.next(timeout=0) is not None:
                    received += 1
        return received

    gc.collect()
    start = time.perf_counter()
    for pod in pods:
        store.create(PODS, pod)
    delivered = await drain(writes)
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed, delivered


def report(label: str, figure: str) -> None:
    print(f"  {label:<48}{figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=20_000, help="creates (then updates) per write measurement")
    parser.add_argument("--list-sizes", default="10000,50000", help="comma-separated store sizes for list latency")
    parser.add_argument("--data-dir", type=Path, default=None, help="where to put the databases (default: a temp dir)")
    args = parser.parse_args()
    writes: int = args.writes

    pods = [make_pod(index) for index in range(writes)]
    body_size = len(orjson.dumps(pods[0]))
    print(f"storage benchmark: {writes:,} pods of about {body_size} bytes of JSON, SQLite {sqlite3.sqlite_version}")
    with tempfile.TemporaryDirectory(dir=args.data_dir) as temporary:
        directory = Path(temporary)
        ceiling = bare_insert_ceiling(directory, [orjson.dumps(pod) for pod in pods])
        report("bare SQLite insert ceiling (commit per row, WAL)", per_second(writes, ceiling))

        persistent = write_rates(directory / "writes", pods)
        memory = write_rates(None, pods)
        for label in ("create", "update"):
            ratio = ceiling / persistent[label]
            report(f"Storage.{label} (SQLite)", f"{per_second(writes, persistent[label])}   {ratio:.2f} of the ceiling")
            report(f"Storage.{label} (memory)", per_second(writes, memory[label]))
        report("Storage.get", per_second(writes, persistent["get"]))

        for size in (int(value) for value in args.list_sizes.split(",") if value):
            for label, seconds in list_latencies(directory, size).items():
                report(f"{size:>6,} pods: {label}", f"{seconds * 1000:>10.2f} ms")

    elapsed, delivered = asyncio.run(fan_out(writes // 4))
    report(f"watch fan-out to {WATCHERS} watchers (events delivered)", per_second(delivered, elapsed))


if __name__ == "__main__":
    main()
