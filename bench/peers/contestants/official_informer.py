"""Contestant: the official ``kubernetes`` client (37.x): ``SharedInformer`` + thread workers.

The client has an informer (one daemon thread, list then watch, typed pydantic objects, no
indexers) but no workqueue, so the controller is hand-written the way its users write one:
the informer's ADDED/MODIFIED handlers put the object's key on a ``queue.Queue`` unless it is
already pending (a dedup set, the least a fair workqueue does), and ``--workers`` threads
(default 4) take keys, read the object from the informer cache and PATCH the annotation.

Modes: ``annotate`` (B1-B3), ``informer`` (B4 sync time, B6 recovery: report ``synced`` when
the informer's first list is in; dump the cache on SIGTERM), ``watch`` (B5: ``Watch.stream``
with ``deserialize=False``, the client's fastest path).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ANNOTATION, Contestant, rss_mib
from kubernetes import client, config, watch
from kubernetes.informer import SharedInformer

c = Contestant.from_argv()
config.load_kube_config(config_file=c.args.kubeconfig)
api = client.CoreV1Api()
apps = client.AppsV1Api()
LIST = {"configmaps": api.list_config_map_for_all_namespaces, "pods": api.list_pod_for_all_namespaces,
        "deployments": apps.list_deployment_for_all_namespaces}[c.args.resource]
PATCH = {"configmaps": api.patch_namespaced_config_map, "pods": api.patch_namespaced_pod}.get(c.args.resource)


def key_of(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def run_controller() -> None:
    informer = SharedInformer(list_func=LIST)
    keys: queue.Queue[str] = queue.Queue()
    pending: set[str] = set()
    lock = threading.Lock()

    def enqueue(obj: Any) -> None:
        key = key_of(obj)
        with lock:
            if key in pending:
                return
            pending.add(key)
        keys.put(key)

    def worker() -> None:
        assert PATCH is not None
        while not c.stop.is_set():
            try:
                key = keys.get(timeout=0.2)
            except queue.Empty:
                continue
            with lock:
                pending.discard(key)
            obj = informer.cache.get_by_key(key)
            if obj is None:
                continue
            value = str((getattr(obj, "data", None) or {}).get("v", "0"))
            c.reconciled(value)
            if c.args.sleep:
                time.sleep(c.args.sleep)
            if (obj.metadata.annotations or {}).get(ANNOTATION) != value:
                PATCH(obj.metadata.name, obj.metadata.namespace, {"metadata": {"annotations": {ANNOTATION: value}}})
                c.patched()

    informer.add_event_handler("ADDED", enqueue)
    informer.add_event_handler("MODIFIED", enqueue)
    c.install_sigterm()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(c.args.workers or 4)]
    for thread in threads:
        thread.start()
    informer.start()
    c.event("started")
    c.stop.wait()
    informer.stop()
    for thread in threads:
        thread.join(timeout=5)
    c.finish()


def run_informer() -> None:
    informer = SharedInformer(list_func=LIST)
    alive: set[str] = set()
    duplicates = 0
    sentinel_seen = threading.Event()

    def note(obj: Any) -> None:
        if c.args.sentinel and not sentinel_seen.is_set() and key_of(obj) == c.args.sentinel:
            sentinel_seen.set()
            c.event("sentinel")

    def on_added(obj: Any) -> None:
        # An ADDED for an object the cache already holds is a duplicate delivery.
        nonlocal duplicates
        key = key_of(obj)
        duplicates += key in alive
        alive.add(key)
        note(obj)

    informer.add_event_handler("ADDED", on_added)
    informer.add_event_handler("MODIFIED", note)
    informer.add_event_handler("DELETED", lambda obj: alive.discard(key_of(obj)))
    c.install_sigterm()
    before = rss_mib()
    informer.start()
    # The informer has no synced flag; its first list is in once it holds a resourceVersion.
    while informer._resource_version is None and not c.stop.is_set():
        time.sleep(0.005)
    c.event("synced", objects=len(informer.cache.list_keys()), rss_mib=rss_mib(), rss_before_mib=before)
    c.stop.wait()
    cache = {key_of(o): o.metadata.resource_version for o in informer.cache.list()}
    informer.stop()
    c.finish(cache=cache, duplicate_adds=duplicates)


def run_watch() -> None:
    events = 0
    start = time.monotonic()
    for _ in range(c.args.repeat):
        watcher = watch.Watch()
        for event in watcher.stream(LIST, resource_version=c.args.from_rv, deserialize=False):
            events += 1
            obj = event["object"]
            rv = int((obj.get("metadata") or {}).get("resourceVersion") or 0) if isinstance(obj, dict) else 0
            if rv >= c.args.until_rv:
                break
        watcher.stop()
    c.event("done", events=events)
    c.finish(events=events, watch_seconds=time.monotonic() - start)


if __name__ == "__main__":
    {"annotate": run_controller, "informer": run_informer, "watch": run_watch}[c.args.mode]()
