"""The observer and load driver: judges convergence from the server's own state.

Runs on CPU 0 beside the server, in kubeloop's environment. It keeps **one** list+watch of
the benchmark's objects (label ``bench=yes``) and a per-object verdict, so the "how many objects are converged"
count moves by O(1) per watch event; it never polls N objects. It is also the load driver for
the scenarios that change objects while the contestant runs (B2 creates, B3 update storm, B7
slow updates, B8 deletion).

Protocol with the harness (JSON lines on stdout, one command on stdin):

1. prints ``{"event": "ready"}`` once its watch is established;
2. reads ``go <t0>`` (``t0``: monotonic time the contestant was started);
3. prints milestones (``converged``, ``hold-start``, ``hold-end`` ...) and finally
   ``{"event": "done", ...}`` with the scenario's measurements, or ``{"event": "timeout"}``.

An object is converged when its ``bench/seen`` annotation equals its ``data.v`` (B8: when
it carries at least one finalizer, then when it is gone).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from kubeloop.client import ApiClient, Gone, load_kubeconfig

ANNOTATION = "bench/seen"
SELECTOR = "bench=yes"
"""The benchmark's own objects. The server keeps a ``kube-root-ca.crt`` ConfigMap in every
namespace and recreates it when deleted (as kube-controller-manager's publisher does), so a
view of every ConfigMap never empties: B8 waited out its whole timeout for them."""
Obj = dict[str, Any]


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(orjson.dumps({"event": event, "t": time.monotonic(), **fields}).decode() + "\n")
    sys.stdout.flush()


def annotated(obj: Obj) -> bool:
    meta = obj.get("metadata") or {}
    value = str((obj.get("data") or {}).get("v", "0"))
    return ((meta.get("annotations") or {}).get(ANNOTATION)) == value


def finalized(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("finalizers"))


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": ordered[-1],
            "mean": statistics.fmean(ordered)}


class CollectionView:
    """Live verdicts for every object of one collection, fed by one watch."""

    def __init__(self, predicate: Callable[[Obj], bool]) -> None:
        self.predicate = predicate
        self.verdicts: dict[str, bool] = {}
        self.good = 0
        self.first_good: dict[str, float] = {}
        self.last_event = time.monotonic()
        self.events = 0
        self.changed = asyncio.Event()

    @property
    def total(self) -> int:
        return len(self.verdicts)

    def apply(self, event_type: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        now = time.monotonic()
        self.last_event = now
        self.events += 1
        before = self.verdicts.pop(key, False)
        self.good -= before
        if event_type != "DELETED":
            verdict = self.predicate(obj)
            self.verdicts[key] = verdict
            self.good += verdict
            if verdict and key not in self.first_good:
                self.first_good[key] = now
        self.changed.set()

    async def until(self, condition: Callable[[], bool], deadline: float) -> bool:
        while not condition():
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self.changed.wait(), min(remaining, 1.0))
            except TimeoutError:
                pass
        return True


    async def quiet_for(self, seconds: float, deadline: float) -> None:
        """Return once no event arrived for ``seconds`` (quiescence), or at ``deadline``."""
        while time.monotonic() < deadline:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), seconds)
            except TimeoutError:
                return


async def follow(client: ApiClient, resource: str, view: CollectionView, ready: asyncio.Event) -> None:
    """List, then watch forever from the list's resourceVersion (relisting on 410)."""
    while True:
        listing = await client.list(resource, label_selector=SELECTOR)
        for item in listing["items"]:
            view.apply("ADDED", item)
        rv = listing["metadata"]["resourceVersion"]
        ready.set()
        while True:
            try:
                async with client.watch(resource, resource_version=rv, label_selector=SELECTOR) as stream:
                    async for event in stream:
                        if event.type in ("ADDED", "MODIFIED", "DELETED"):
                            view.apply(event.type, event.object)
                    rv = stream.resource_version or rv
            except Gone:
                view.verdicts.clear()
                view.good = 0
                break


async def churn(client: ApiClient, view: CollectionView, rate: float, count: int, tag: str,
                deadline: float) -> dict[str, Any]:
    """Create ``count`` objects at ``rate``/s; latency = created -> converged, per object."""
    created: dict[str, float] = {}
    start = time.monotonic()
    for i in range(count):
        due = start + i / rate
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        namespace, name = f"ns-{i % 10}", f"churn-{tag}-{i}"
        created[f"{namespace}/{name}"] = time.monotonic()
        await client.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": name, "namespace": namespace,
                                                        "labels": {"bench": "yes"}},
                                           "data": {"v": "0"}}, namespace=namespace)
    sent = time.monotonic() - start
    ok = await view.until(lambda: all(k in view.first_good for k in created), deadline)
    latencies = [view.first_good[k] - t for k, t in created.items() if k in view.first_good]
    return {"rate": rate, "count": count, "send_seconds": sent, "converged": ok,
            "latency": percentiles(latencies)}


async def storm(client: ApiClient, view: CollectionView, rounds: int, deadline: float) -> dict[str, Any]:
    """Every object gets ``rounds`` data updates, as fast as the server takes them."""
    keys = list(view.verdicts)
    start = time.monotonic()
    for value in range(1, rounds + 1):
        await asyncio.gather(*(
            client.patch("configmaps", key.split("/")[1], {"data": {"v": str(value)}}, namespace=key.split("/")[0])
            for key in keys))
    sent = time.monotonic() - start
    ok = await view.until(lambda: view.good == view.total, deadline)
    converged_at = time.monotonic()
    await view.quiet_for(1.0, deadline)
    return {"updates": rounds * len(keys), "send_seconds": sent, "converged": ok,
            "converge_seconds": converged_at - start, "quiescent_seconds": view.last_event - start}


async def hold(client: ApiClient, view: CollectionView, seconds: float, deadline: float) -> dict[str, Any]:
    """One data update per second, round robin, for ``seconds``."""
    keys = sorted(view.verdicts)
    emit("hold-start")
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < seconds:
        namespace, name = keys[i % len(keys)].split("/")
        await client.patch("configmaps", name, {"data": {"v": str(1 + i // len(keys))}}, namespace=namespace)
        i += 1
        await asyncio.sleep(max(0.0, start + i - time.monotonic()))
    emit("hold-end")
    ok = await view.until(lambda: view.good == view.total, deadline)
    return {"updates": i, "converged": ok}


async def delete_all(client: ApiClient, view: CollectionView, deadline: float) -> dict[str, Any]:
    namespaces = sorted({k.split("/")[0] for k in view.verdicts})
    start = time.monotonic()
    for namespace in namespaces:
        await client.delete_collection("configmaps", namespace=namespace, label_selector=SELECTOR)
    ok = await view.until(lambda: view.total == 0, deadline)
    return {"converged": ok, "delete_seconds": time.monotonic() - start, "left": view.total}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--resource", default="configmaps")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--churn", default="", help="rate:count,... (B2)")
    parser.add_argument("--rounds", type=int, default=20, help="updates per object (B3)")
    parser.add_argument("--hold", type=float, default=0.0, help="seconds of 1 update/s (B7)")
    args = parser.parse_args()
    config = dataclasses.replace(load_kubeconfig(args.kubeconfig), qps=0)
    view = CollectionView(finalized if args.scenario == "B8" else annotated)
    async with ApiClient(config) as client:
        ready = asyncio.Event()
        follower = asyncio.create_task(follow(client, args.resource, view, ready))
        await ready.wait()
        emit("ready", objects=view.total)
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        t0 = float(line.split()[1])
        deadline = time.monotonic() + args.timeout
        ok = await view.until(lambda: view.total > 0 and view.good == view.total, deadline)
        if not ok:
            emit("timeout", phase="converge", good=view.good, total=view.total)
            follower.cancel()
            return
        converged = time.monotonic()
        latencies = [t - t0 for t in view.first_good.values()]
        emit("converged", seconds=converged - t0)
        result: dict[str, Any] = {"seconds": converged - t0, "latency": percentiles(latencies),
                                  "objects": view.total, "observer_events": view.events}
        if args.scenario == "B2":
            result["churn"] = [await churn(client, view, float(rate), int(count), f"r{rate}", deadline)
                               for rate, count in (part.split(":") for part in args.churn.split(","))]
        elif args.scenario == "B3":
            result["storm"] = await storm(client, view, args.rounds, deadline)
        elif args.scenario == "B7":
            result["hold"] = await hold(client, view, args.hold, deadline)
        elif args.scenario == "B8":
            result["deletion"] = await delete_all(client, view, deadline)
        result["observer_events"] = view.events
        emit("done", **result)
        follower.cancel()


if __name__ == "__main__":
    asyncio.run(main())
