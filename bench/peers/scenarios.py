"""Running one (scenario, contestant) pair: server up from a template copy, contestant, verdict.

Three shapes of run:

- **controller runs** (B1, B2, B3, B7, B8, B9): the observer watches the collection, the
  contestant reconciles it; the time is from the contestant's process start to the moment
  the observer sees every object converged on the server;
- **informer sync** (B4) and **watch throughput** (B5): the contestant reports its own
  milestone (cache synced / last event read) on stdout; B4's cache size is its RSS growth
  during the sync, compared with the raw JSON size of the objects;
- **recovery** (B6): after the contestant synced, the server is stopped, the store is changed
  offline (deletes, updates, creates, and enough changes that every watch's resourceVersion
  is older than the server's window: 410 Gone on resume), the server restarts on the same
  port, a sentinel object is created, and the contestant's cache is compared with the server's
  own list once it saw the sentinel (or after the recovery timeout).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixtures import Template, copy_template, mutate_offline
from processes import Child, Server, free_port
from venvs import CONTESTANTS_DIR, Contestant

OBSERVER = Path(__file__).resolve().parent / "observer.py"


@dataclass
class RunSpec:
    scenario: str
    contestant: Contestant
    python: Path
    template: Template
    mode: str = "annotate"
    workers: int = 0
    sleep: float = 0.0
    observer_args: list[str] = field(default_factory=list)
    timeout: float = 600.0
    label: str = ""
    """Column label when a scenario sweeps a parameter (e.g. ``workers=10``)."""


@dataclass
class RunContext:
    work: Path
    watch_cache_size: int = 100_000
    sample_rss: float = 0.0
    """Seconds between RSS samples of the contestant during a B7 hold (0: none)."""
    server_loop: str = ""
    """The server's ``KUBELOOP_EVENT_LOOP`` ("": the command's default)."""


CONTESTANT_WRAPPER: list[str] = []
"""A command the contestant runs under (``run.py --contestant-wrapper``, e.g. callgrind)."""


def _contestant_argv(spec: RunSpec, kubeconfig: Path, stats: Path, **extra: Any) -> list[str]:
    argv = [*CONTESTANT_WRAPPER, str(spec.python), str(CONTESTANTS_DIR / spec.contestant.script),
            "--scenario", spec.scenario, "--mode", spec.mode, "--kubeconfig", str(kubeconfig),
            "--resource", spec.template.dataset.resource, "--objects", str(spec.template.dataset.objects),
            "--stats", str(stats)]
    if spec.contestant.variant:
        argv += ["--variant", spec.contestant.variant]
    workers = spec.workers or spec.contestant.workers
    if workers:
        argv += ["--workers", str(workers)]
    if spec.sleep:
        argv += ["--sleep", str(spec.sleep)]
    if spec.contestant.loop:
        argv += ["--loop", spec.contestant.loop]
    for key, value in extra.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


def _read_stats(path: Path) -> dict[str, Any]:
    try:
        result: dict[str, Any] = json.loads(path.read_text())
        return result
    except (OSError, ValueError):
        return {}


def _base_row(spec: RunSpec) -> dict[str, Any]:
    return {"scenario": spec.scenario, "contestant": spec.contestant.name, "label": spec.label,
            "objects": spec.template.dataset.objects, "resource": spec.template.dataset.resource,
            "workers": spec.workers, "raw_json_mib": spec.template.raw_json_bytes / 2**20, "ok": False}


def _run_dir(ctx: RunContext, spec: RunSpec) -> Path:
    name = f"{spec.scenario}-{spec.template.dataset.name}-{spec.contestant.name}-{spec.label or 'default'}"
    path = ctx.work / "runs" / name.replace("=", "")
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_controller(ctx: RunContext, spec: RunSpec) -> dict[str, Any]:
    """B1/B2/B3/B7/B8/B9: convergence as the observer sees it on the server."""
    row = _base_row(spec)
    run_dir = _run_dir(ctx, spec)
    data = copy_template(spec.template, run_dir / "data")
    server = Server(data, free_port(), ctx.watch_cache_size, run_dir / "server.log", ctx.server_loop)
    server.start()
    observer = contestant = None
    try:
        observer = Child([str(Path(__import__("sys").executable)), str(OBSERVER), "--kubeconfig",
                          str(server.kubeconfig), "--scenario", spec.scenario, "--resource",
                          spec.template.dataset.resource, "--timeout", str(spec.timeout), *spec.observer_args],
                         cpu=0, stdin=True, log=run_dir / "observer.log")
        if observer.wait_event({"ready"}, 120) is None:
            raise RuntimeError(f"observer not ready; see {run_dir / 'observer.log'}")
        server_cpu_before = server.cpu_seconds()
        stats_path = run_dir / "stats.json"
        contestant = Child(_contestant_argv(spec, server.kubeconfig, stats_path), cpu=1,
                           log=run_dir / "contestant.log")
        observer.send(f"go {contestant.started}")
        rss_samples: list[tuple[float, float]] = []
        at_converged: dict[str, float] = {}
        result: dict[str, Any] | None = None
        deadline = time.monotonic() + spec.timeout + 60
        while time.monotonic() < deadline:
            event = observer.wait_event({"converged", "hold-start", "hold-end", "done", "timeout"}, 1.0)
            due = not rss_samples or time.monotonic() - rss_samples[-1][0] >= ctx.sample_rss
            if ctx.sample_rss and row.get("holding") and due:
                rss_samples.append((time.monotonic(), contestant.snapshot()["rss_mib"]))
            if event is None:
                if contestant.exited():
                    result = {"event": "contestant-exited", "code": contestant.proc.returncode}
                    break
                continue
            name = event["event"]
            if name == "converged":
                at_converged = contestant.snapshot()
            elif name == "hold-start":
                row["holding"] = True
                rss_samples.append((time.monotonic(), contestant.snapshot()["rss_mib"]))
            elif name == "hold-end":
                row["holding"] = False
            elif name in ("done", "timeout", "exit"):
                result = event
                break
        at_end = contestant.snapshot()
        row["server_cpu_s"] = server.cpu_seconds() - server_cpu_before
        contestant.stop()
        stats = _read_stats(stats_path)
        row.pop("holding", None)
        row.update(
            ok=bool(result and result["event"] == "done"),
            seconds=(result or {}).get("seconds"),
            cpu_s=at_converged.get("cpu_s"), peak_rss_mib=at_converged.get("peak_rss_mib"),
            cpu_s_end=at_end.get("cpu_s"), peak_rss_mib_end=at_end.get("peak_rss_mib"),
            observer=result or {}, stats=stats, **contestant.final_usage(),
            rss_samples=[(round(t - rss_samples[0][0], 1), round(r, 1)) for t, r in rss_samples],
            exit_code=contestant.proc.returncode)
        return row
    finally:
        for child in (contestant, observer):
            if child is not None:
                child.stop(grace=10)
        server.stop()


def run_self_reporting(ctx: RunContext, spec: RunSpec, milestone: str, **extra: Any) -> dict[str, Any]:
    """B4/B5: the contestant reports its milestone and exits (or is stopped) by itself."""
    row = _base_row(spec)
    run_dir = _run_dir(ctx, spec)
    data = copy_template(spec.template, run_dir / "data")
    server = Server(data, free_port(), ctx.watch_cache_size, run_dir / "server.log", ctx.server_loop)
    server.start()
    contestant = None
    try:
        server_cpu_before = server.cpu_seconds()
        stats_path = run_dir / "stats.json"
        contestant = Child(_contestant_argv(spec, server.kubeconfig, stats_path, **extra), cpu=1,
                           log=run_dir / "contestant.log")
        event = contestant.wait_event({milestone}, spec.timeout)
        snap = contestant.snapshot()
        row["server_cpu_s"] = server.cpu_seconds() - server_cpu_before
        if milestone == "done":
            contestant.wait(30.0)  # a watch contestant writes its stats and exits by itself
        contestant.stop()
        stats = _read_stats(stats_path)
        ok = bool(event and event["event"] == milestone)
        row.update(ok=ok, seconds=(event["t"] - contestant.started) if ok and event else None,
                   cpu_s=snap["cpu_s"], peak_rss_mib=snap["peak_rss_mib"], milestone=event or {},
                   stats=stats, **contestant.final_usage(), exit_code=contestant.proc.returncode)
        return row
    finally:
        if contestant is not None:
            contestant.stop(grace=10)
        server.stop()


async def _server_truth(kubeconfig: Path, resource: str, sentinel: str | None) -> dict[str, str]:
    from kubeloop.client import ApiClient, load_kubeconfig

    config = dataclasses.replace(load_kubeconfig(str(kubeconfig)), qps=0)
    async with ApiClient(config) as client:
        if sentinel:
            namespace, name = sentinel.split("/")
            await client.create(resource, {"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": name, "namespace": namespace},
                                           "data": {"v": "0"}}, namespace=namespace)
        listing = await client.list(resource)
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in listing["items"]}


def run_recovery(ctx: RunContext, spec: RunSpec, window: int, recovery_timeout: float) -> dict[str, Any]:
    """B6: stale resourceVersion after a restart with compacted history; compare caches."""
    row = _base_row(spec)
    run_dir = _run_dir(ctx, spec)
    data = copy_template(spec.template, run_dir / "data")
    server = Server(data, free_port(), window, run_dir / "server.log", ctx.server_loop)
    server.start()
    contestant = None
    sentinel = "ns-0/sentinel"
    try:
        stats_path = run_dir / "stats.json"
        contestant = Child(_contestant_argv(spec, server.kubeconfig, stats_path, sentinel=sentinel), cpu=1,
                           log=run_dir / "contestant.log")
        synced = contestant.wait_event({"synced"}, spec.timeout)
        if not synced or synced["event"] != "synced":
            raise RuntimeError(f"{spec.contestant.name} did not sync; see {run_dir / 'contestant.log'}")
        server.stop()
        changes = mutate_offline(data, spec.template.dataset.resource, 0.1, window)
        server.start()
        restarted = time.monotonic()
        truth = asyncio.run(_server_truth(server.kubeconfig, spec.template.dataset.resource, sentinel))
        seen = contestant.wait_event({"sentinel"}, recovery_timeout)
        recovered = bool(seen and seen["event"] == "sentinel")
        # Give a recovered contestant a moment to finish the relist it is in, then compare.
        time.sleep(1.0 if recovered else 0.0)
        contestant.stop()
        stats = _read_stats(stats_path)
        cache: dict[str, str] = stats.get("cache") or {}
        missing = [k for k in truth if k not in cache]
        stale = [k for k in truth if k in cache and cache[k] != truth[k]]
        ghosts = [k for k in cache if k not in truth]
        row.update(ok=recovered and not missing and not stale and not ghosts and bool(stats),
                   recovered=recovered, recovery_seconds=(seen["t"] - restarted) if recovered and seen else None,
                   changes=changes, missing=len(missing), stale=len(stale), ghosts=len(ghosts),
                   duplicate_adds=stats.get("duplicate_adds"), cache_size=len(cache), truth_size=len(truth),
                   stats=stats, **contestant.final_usage(), exit_code=contestant.proc.returncode)
        return row
    finally:
        if contestant is not None:
            contestant.stop(grace=10)
        server.stop()
