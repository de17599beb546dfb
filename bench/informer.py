"""Informer sync and reconcile throughput against the embedded API server.

    .venv/bin/python bench/informer.py [--pods 50000] [--objects 5000] [--shape uniform|realistic]
                                       [--skip-reconcile] [--tracemalloc]

1. Fills a data dir with N pods (straight into the store, so filling is not measured), starts
   `kubeloop server` on it (pinned to CPU 0 when `taskset` exists), then in fresh processes
   (pinned to CPU 1): kubeloop informers syncing every pod (with the factory's defaults, with
   structural sharing off, with the managedFields-stripping transform); the official `kubernetes` client
   listing the same pods (typed models, as its users get them). Prints wall time, CPU seconds
   and peak RSS of each, and the ratios.

   The cache's size is the informer process's RSS growth over the sync (RSS, from
   /proc/self/statm, after the sync minus before the informer started), set against the raw
   JSON: the bytes of the whole list as the server sends it (one unpaged GET after the
   measurement). With --tracemalloc each informer runs once more under tracemalloc and the
   bytes still allocated after the sync (the store, its indexes and anything kept) are
   reported too; that run is slower and its times are not shown.

   --shape uniform: every pod of one small template (about 0.6 kB), as before. --shape
   realistic: pods as a Deployment, the scheduler and a kubelet leave them (about 4.3 kB:
   ownerReferences, two managedFields entries, a token volume with a random suffix, two
   tolerations, five conditions, IPs, container statuses), 200 pods per ReplicaSet, spread over
   100 nodes, creation times 50 per second.
2. Reconcile throughput: a trivial controller (reads its object from the cache, returns) and an
   annotating one (one PATCH per object) over M ConfigMaps, with 1 and 8 workers, client-side
   throttling off. Time runs from the manager's start (so it includes the cache sync).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def pinned(cpu: int, argv: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *argv] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _suffix(n: int) -> str:
    """Five characters of the alphabet the API server's name generator uses, distinct per n < 27**5."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[n // 27**k % 27] for k in range(5))


def realistic_pod(i: int, rng: random.Random, start: float) -> dict[str, Any]:
    """Pod i of a Deployment-made set, as the controllers, the scheduler and a kubelet leave it."""
    rs = i // 200
    owner_uid = str(uuid.UUID(int=rs + 1))
    template_hash = hashlib.sha256(str(rs).encode()).hexdigest()[:10]
    rs_name = f"web-{rs}-{template_hash}"
    node = rng.randrange(100)
    created, started = _stamp(start + i // 50), _stamp(start + i // 50 + 2)
    volume = f"kube-api-access-{uuid.UUID(int=rng.getrandbits(128)).hex[:5]}"
    pod_ip = f"10.244.{i // 250 % 256}.{i % 250}"
    empty: dict[str, Any] = {}
    condition_fields = {".": empty, "f:lastProbeTime": empty, "f:lastTransitionTime": empty, "f:status": empty,
                        "f:type": empty}
    kcm_fields = {
        "f:metadata": {"f:generateName": empty, "f:labels": {".": empty, "f:app": empty, "f:pod-template-hash": empty},
                       "f:ownerReferences": {".": empty, f'k:{{"uid":"{owner_uid}"}}': empty}},
        "f:spec": {"f:containers": {'k:{"name":"app"}': {
            ".": empty, "f:image": empty, "f:imagePullPolicy": empty, "f:name": empty,
            "f:ports": {".": empty, 'k:{"containerPort":80,"protocol":"TCP"}': {
                ".": empty, "f:containerPort": empty, "f:protocol": empty}},
            "f:resources": {".": empty, "f:requests": {".": empty, "f:cpu": empty}},
            "f:terminationMessagePath": empty, "f:terminationMessagePolicy": empty}},
            "f:dnsPolicy": empty, "f:enableServiceLinks": empty, "f:restartPolicy": empty, "f:schedulerName": empty,
            "f:securityContext": empty, "f:terminationGracePeriodSeconds": empty}}
    kubelet_fields = {"f:status": {
        "f:conditions": {f'k:{{"type":"{t}"}}': condition_fields for t in ("ContainersReady", "Initialized", "Ready")},
        "f:containerStatuses": empty, "f:hostIP": empty, "f:phase": empty, "f:podIP": empty,
        "f:podIPs": {".": empty, f'k:{{"ip":"{pod_ip}"}}': {".": empty, "f:ip": empty}}, "f:startTime": empty}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"{rs_name}-{_suffix(i * 7919)}", "generateName": f"{rs_name}-",
            "namespace": f"ns-{rs % 10}", "uid": str(uuid.UUID(int=rng.getrandbits(128))),
            "creationTimestamp": created, "labels": {"app": f"web-{rs}", "pod-template-hash": template_hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "uid": owner_uid,
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": created,
                 "fieldsType": "FieldsV1", "fieldsV1": kcm_fields},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": started,
                 "fieldsType": "FieldsV1", "fieldsV1": kubelet_fields, "subresource": "status"}]},
        "spec": {
            "volumes": [{"name": volume, "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}], "defaultMode": 420}}],
            "containers": [{"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": "10m"}},
                            "volumeMounts": [{"name": volume, "readOnly": True,
                                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                            "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "nodeName": f"node-{node}",
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [{"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300} for k in ("not-ready", "unreachable")],
            "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"},
        "status": {
            "phase": "Running",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": started if t in ("Ready", "ContainersReady") else created}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                     "PodScheduled")],
            "hostIP": f"10.0.0.{node}", "hostIPs": [{"ip": f"10.0.0.{node}"}], "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}], "startTime": created,
            "containerStatuses": [{"name": "app", "state": {"running": {"startedAt": started}}, "lastState": {},
                                   "ready": True, "restartCount": 0, "image": "docker.io/library/nginx:1.25",
                                   "imageID": "docker.io/library/nginx@sha256:" + "0a1b" * 16,
                                   "containerID": "containerd://" + uuid.UUID(int=rng.getrandbits(128)).hex * 2,
                                   "started": True}],
            "qosClass": "Burstable"},
    }


def fill(data_dir: Path, pods: int, configmaps: int, shape: str = "uniform") -> None:
    from kubeloop.server.storage import ResourceType, Storage

    storage = Storage.open(data_dir)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rng = random.Random(20)
    start = time.time() - 86400
    for i in range(pods):
        if shape == "realistic":
            storage.create(ResourceType("", "pods"), realistic_pod(i, rng, start))
            continue
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
import asyncio, gc, json, os, sys, time, tracemalloc
from kubeloop.client import ApiClient, load_kubeconfig, PODS
try:
    from kubeloop.runtime.informers import strip_managed_fields
except ImportError:
    strip_managed_fields = None
from kubeloop.runtime.informers.factory import SharedInformerFactory
MODE, TRACE = sys.argv[2], sys.argv[3] == "trace"
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
async def main():
    async with ApiClient(load_kubeconfig(sys.argv[1])) as client:
        await client.resource(PODS)  # discovery before the baseline
        # "default" passes no options, so this code also runs against a checkout from before them.
        options = {"default": {}, "unshared": {"share_subtrees": False},
                   "strip": {"transform": strip_managed_fields}}[MODE]
        factory = SharedInformerFactory(client, **options)
        informer = await factory.informer_for(PODS)
        gc.collect()
        if TRACE:
            tracemalloc.start()
        traced0 = tracemalloc.get_traced_memory()[0] if TRACE else 0
        rss0, cpu0, t = rss(), time.process_time(), time.perf_counter()
        await factory.start()
        assert await factory.wait_for_cache_sync(600)
        sync, cpu, rss1 = time.perf_counter() - t, time.process_time() - cpu0, rss()
        traced = tracemalloc.get_traced_memory()[0] - traced0 if TRACE else 0
        tracemalloc.stop()
        count = len(informer.indexer)
        await factory.shutdown()
        raw = len(await client.request("GET", "/api/v1/pods"))
        print(json.dumps({"sync": sync, "cpu": cpu, "count": count, "growth": rss1 - rss0, "traced": traced,
                          "raw": raw}))
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


INFORMER_MODES = (("default", "kubeloop informer (defaults)"), ("unshared", "  share_subtrees=False"),
                  ("strip", "  + strip_managed_fields"))


def sync_table(args: argparse.Namespace, kubeconfig: Path) -> None:
    print(f"\n== informer sync of {args.pods} {args.shape} pods (fresh process each, server on CPU 0, client on CPU 1)")
    print(f"{'contestant':<34}{'sync s':>8}{'sync CPU':>9}{'wall s':>8}{'CPU s':>7}{'peak RSS':>9}"
          f"{'growth MiB':>11}{'raw MiB':>8}{'growth/raw':>11}{'traced/raw':>11}")
    results: dict[str, tuple[float, float, float]] = {}
    for mode, name in INFORMER_MODES:
        if mode not in args.modes.split(","):
            continue
        out, wall, cpu, rss = run_child(KUBELOOP_SYNC, kubeconfig, [mode, "rss"])
        row = json.loads(out)
        assert row["count"] == args.pods, out
        traced = ""
        if args.tracemalloc:
            traced_row = json.loads(run_child(KUBELOOP_SYNC, kubeconfig, [mode, "trace"])[0])
            traced = f"{traced_row['traced'] / row['raw']:.2f}x"
        results[name] = (row["sync"], cpu, rss)
        print(f"{name:<34}{row['sync']:>8.2f}{row['cpu']:>9.2f}{wall:>8.2f}{cpu:>7.2f}{rss:>9.0f}"
              f"{row['growth'] / 2**20:>11.1f}{row['raw'] / 2**20:>8.1f}{row['growth'] / row['raw']:>10.2f}x"
              f"{traced:>11}", flush=True)
    if args.skip_official:
        return
    out, wall, cpu, rss = run_child(OFFICIAL_LIST, kubeconfig)
    seconds, count = out.split()
    assert int(count) == args.pods, out
    name = "official client list (typed)"
    print(f"{name:<34}{float(seconds):>8.2f}{'':>9}{wall:>8.2f}{cpu:>7.2f}{rss:>9.0f}")
    k = next(iter(results.values()))
    print(f"ratios official/kubeloop: time {float(seconds) / k[0]:.1f}x, CPU {cpu / k[1]:.1f}x, "
          f"RSS {rss / k[2]:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--objects", type=int, default=5_000)
    parser.add_argument("--shape", choices=("uniform", "realistic"), default="uniform")
    parser.add_argument("--skip-reconcile", action="store_true")
    parser.add_argument("--skip-official", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--modes", default="default,unshared,strip",
                        help="informer runs: default (the factory's defaults), unshared (share_subtrees=False), "
                             "strip (defaults + the strip_managed_fields transform)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kubeloop-bench-informer-"))
    data = work / "data"
    print(f"filling {args.pods} {args.shape} pods and {args.objects} configmaps ...", flush=True)
    fill(data, args.pods, args.objects, args.shape)
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
        sync_table(args, kubeconfig)
        if args.skip_reconcile:
            return
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
