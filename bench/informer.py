"""Informer sync and reconcile throughput against the embedded API server.

    .venv/bin/python bench/informer.py [--pods 50000] [--objects 5000]

1. Fills a data dir with N pods (straight into the store, so filling is not measured), starts
   `kubeloop server` on it (pinned to CPU 0 when `taskset` exists), then in fresh processes
   (pinned to CPU 1): a kubeloop informer syncing every pod; the official `kubernetes` client
   listing the same pods (typed models, as its users get them). Prints wall time, CPU seconds
   and peak RSS of each, and the ratios.
2. Reconcile throughput: a trivial controller (reads its object from the cache, returns) and an
   annotating one (one PATCH per object) over M ConfigMaps, with 1 and 8 workers, client-side
   throttling off. Time runs from the manager's start (so it includes the cache sync).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def pinned(cpu: int, argv: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *argv] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fill(data_dir: Path, pods: int, configmaps: int) -> None:
    from kubeloop.server.storage import ResourceType, Storage

    storage = Storage.open(data_dir)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for i in range(pods):
        namespace = f"ns-{i % 10}"
        storage.create(ResourceType("", "pods"), {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": namespace, "uid": str(uuid.uuid4()),
                         "creationTimestamp": stamp, "labels": {"app": f"app-{i % 50}", "bench": "yes"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "resources": {},
                                     "terminationMessagePath": "/dev/termination-log",
                                     "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
                     "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                     "schedulerName": "default-scheduler", "securityContext": {}, "nodeName": "node-1"},
            "status": {"phase": "Running", "qosClass": "BestEffort"},
        })
    for i in range(configmaps):
        storage.create(ResourceType("", "configmaps"), {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i}", "namespace": "default", "uid": str(uuid.uuid4()),
                         "creationTimestamp": stamp, "labels": {"bench": "yes"}},
            "data": {"key": "value"},
        })
    storage.close()


def run_child(code: str, kubeconfig: Path, extra: list[str] | None = None) -> tuple[str, float, float, float]:
    """Run `code` in a fresh pinned interpreter; returns (stdout, wall s, cpu s, peak RSS MiB)."""
    start = time.perf_counter()
    argv = [PY, "-c", code, str(kubeconfig), *(extra or [])]
    proc = subprocess.Popen(pinned(1, argv), stdout=subprocess.PIPE, cwd=ROOT, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read() if proc.stdout else ""
    if status != 0:
        raise RuntimeError(f"child failed ({status}): {out}")
    return out.strip(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


KUBELOOP_SYNC = """
import asyncio, sys, time
from kubeloop.client import ApiClient, load_kubeconfig, PODS
from kubeloop.runtime.informers.factory import SharedInformerFactory
async def main():
    async with ApiClient(load_kubeconfig(sys.argv[1])) as client:
        t = time.perf_counter()
        factory = SharedInformerFactory(client)
        informer = await factory.informer_for(PODS)
        await factory.start()
        assert await factory.wait_for_cache_sync(600)
        print(f"{time.perf_counter() - t:.3f} {len(informer.indexer)}")
        await factory.shutdown()
asyncio.run(main())
"""

OFFICIAL_LIST = """
import sys, time
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.CoreV1Api()
t = time.perf_counter()
items, token = [], None
while True:
    page = api.list_pod_for_all_namespaces(limit=500, _continue=token)
    items.extend(page.items)
    token = page.metadata._continue
    if not token:
        break
print(f"{time.perf_counter() - t:.3f} {len(items)}")
"""

RECONCILE = """
import asyncio, sys, time
from kubeloop.client import ApiClient, load_kubeconfig, CONFIG_MAPS
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.runtime.workqueue import ItemExponentialFailureRateLimiter
import dataclasses
WORKERS, WRITE, N, RUN = int(sys.argv[2]), sys.argv[3] == "write", int(sys.argv[4]), sys.argv[5]
async def main():
    # Client-side throttling off: this measures the runtime, not a QPS budget.
    config = dataclasses.replace(load_kubeconfig(sys.argv[1]), qps=0)
    async with ApiClient(config) as client:
        mgr = Manager(client, ManagerOptions(name="bench"))
        done = set()
        finished = asyncio.Event()
        informer = await mgr.factory.informer_for(CONFIG_MAPS, namespace="default")
        async def reconcile(request):
            obj = informer.indexer.get(request.key)
            if WRITE and obj is not None and (obj["metadata"].get("annotations") or {}).get("bench/run") != RUN:
                await client.patch(CONFIG_MAPS, request.name, {"metadata": {"annotations": {"bench/run": RUN}}},
                                   namespace=request.namespace)
            done.add(request.key)
            if len(done) >= N:
                finished.set()
        await (mgr.controller("bench").for_(CONFIG_MAPS).in_namespace("default")
               .with_options(max_concurrent_reconciles=WORKERS,
                             rate_limiter=ItemExponentialFailureRateLimiter(0.005, 1000)).complete(reconcile))
        t = time.perf_counter()
        await mgr.start()
        await finished.wait()
        print(f"{time.perf_counter() - t:.3f} {len(done)}")
        await mgr.stop()
asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--objects", type=int, default=5_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kubeloop-bench-informer-"))
    data = work / "data"
    print(f"filling {args.pods} pods and {args.objects} configmaps ...", flush=True)
    fill(data, args.pods, args.objects)
    port = free_port()
    server = subprocess.Popen(pinned(0, [PY, "-m", "kubeloop", "server", "--data-dir", str(data),
                                          "--port", str(port)]), cwd=ROOT, stderr=subprocess.DEVNULL)
    kubeconfig = data / "kubeconfig"
    try:
        deadline = time.time() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                if kubeconfig.exists():
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)
        print(f"\n== informer sync of {args.pods} pods (fresh process each, server on CPU 0, client on CPU 1)")
        print(f"{'contestant':<34}{'sync s':>9}{'wall s':>9}{'CPU s':>8}{'peak RSS MiB':>14}")
        results = {}
        for name, code in (("kubeloop informer (dicts)", KUBELOOP_SYNC),
                           ("official client list (typed)", OFFICIAL_LIST)):
            out, wall, cpu, rss = run_child(code, kubeconfig)
            seconds, count = out.split()
            assert int(count) == args.pods, out
            results[name] = (float(seconds), cpu, rss)
            print(f"{name:<34}{float(seconds):>9.2f}{wall:>9.2f}{cpu:>8.2f}{rss:>14.0f}")
        k = results["kubeloop informer (dicts)"]
        o = results["official client list (typed)"]
        print(f"ratios official/kubeloop: time {o[0] / k[0]:.1f}x, CPU {o[1] / k[1]:.1f}x, RSS {o[2] / k[2]:.1f}x")
        print(f"\n== reconcile throughput over {args.objects} ConfigMaps")
        print(f"{'controller':<34}{'workers':>8}{'seconds':>9}{'objects/s':>11}")
        for write in (False, True):
            for workers in (1, 8):
                extra = [str(workers), "write" if write else "read", str(args.objects), f"run-{workers}"]
                out, _, _, _ = run_child(RECONCILE, kubeconfig, extra)
                seconds = float(out.split()[0])
                label = "annotate (1 PATCH each)" if write else "trivial (cache read only)"
                print(f"{label:<34}{workers:>8}{seconds:>9.2f}{args.objects / seconds:>11.0f}")
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
