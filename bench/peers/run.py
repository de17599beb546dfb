"""Side-by-side benchmarks of kubeloop against kopf and the other Python peers (B1-B9).

    .venv/bin/python bench/peers/run.py [--quick] [--only B1,B4] [--contestants kubeloop,kopf-event]
    .venv/bin/python bench/peers/run.py --only B1 --b1 5000 [--b1-workers 1,2,4,8,16] --contestants kubeloop

Sets up each peer's own virtual environment (cached in ``.venv-peers/``), builds the
pre-filled server data directories, and runs every applicable (scenario, contestant) pair
sequentially, each contestant in a fresh process pinned to CPU 1 against a fresh
``kubeloop server`` on CPU 0 (started from a byte-identical copy of the same data, so every
contestant meets the same state). Convergence is judged on the server by the observer
(``observer.py``), never from a contestant's logs. Results: ``bench/results/peers.json``,
``peers.md`` (tables, ratios, goals) and PNG plots; ``--quick`` uses small sizes and writes
to ``--out`` (CI uses it to check the harness; it asserts no timing).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import scenarios as scenario_module  # noqa: E402
from fixtures import Dataset, Template, build_template  # noqa: E402
from report import write_report  # noqa: E402
from scenarios import RunContext, RunSpec, run_controller, run_recovery, run_self_reporting  # noqa: E402
from venvs import (  # noqa: E402
    CONTESTANTS,
    DEFAULT_VENV_ROOT,
    PEER_REQUIREMENTS,
    byte_compile_kubeloop,
    ensure_venv,
    freeze,
    interpreter,
)


@dataclass(frozen=True)
class Sizes:
    """How big each scenario is."""

    b1: list[int]
    b1_pods: list[int]
    b2_base: int
    b2_churn: str
    """``rate:count,...``: new objects per second and how many, one batch per rate."""
    b3_objects: int
    b3_rounds: int
    b4: list[int]
    b5_objects: int
    b5_updates_per_object: int
    b5_repeat: int
    """B5 watches the same history this many times: the server ends a watch whose backlog passes
    10,000 events (its slow-watcher guard), so one replay must stay below that."""
    b6: int
    b7_objects: int
    b7_hold_s: float
    b7_sample_s: float
    b8: int
    b9_objects: int
    b9_workers: list[int]


FULL = Sizes(b1=[1000, 5000], b1_pods=[1000], b2_base=1000, b2_churn="100:1000,500:1000", b3_objects=100,
             b3_rounds=20, b4=[1000, 5000], b5_objects=1000, b5_updates_per_object=9, b5_repeat=11, b6=1000,
             b7_objects=5000, b7_hold_s=120.0, b7_sample_s=5.0, b8=1000, b9_objects=200, b9_workers=[1, 10, 100])
QUICK = Sizes(b1=[60], b1_pods=[30], b2_base=40, b2_churn="50:30,200:30", b3_objects=20, b3_rounds=5, b4=[60],
              b5_objects=50, b5_updates_per_object=10, b5_repeat=2, b6=60, b7_objects=60, b7_hold_s=3.0,
              b7_sample_s=1.0, b8=30, b9_objects=10, b9_workers=[5, 10])
TIMEOUTS = {"B9": 150.0}
"""Per-scenario caps on a run (full mode): kopf with worker_limit=1 keeps each idle per-object
worker (and its slot) for idle_timeout=5 s, so 200 objects would need ~1,000 s."""
APPLICABLE = {
    "B1": ["kubeloop", "kubeloop-w8", "kubeloop-w8-uvloop", "kopf-event", "kopf-event-uvloop", "kopf-create",
           "official"],
    "B1-pods": ["kubeloop", "aiok8s"],
    "B2": ["kubeloop", "kubeloop-w8", "kopf-event", "kopf-create", "official"],
    "B3": ["kubeloop", "kubeloop-w8", "kopf-event", "kopf-create", "official"],
    "B4": ["kubeloop", "official", "aiok8s", "lightkube", "kr8s"],
    "B5": ["kubeloop", "official", "aiok8s", "lightkube", "kr8s"],
    "B6": ["kubeloop", "official", "aiok8s", "lightkube", "kr8s"],
    "B7": ["kubeloop", "kopf-event"],
    "B8": ["kubeloop", "kopf-event"],
    "B9": ["kubeloop", "kopf-event"],
}
SCENARIOS = list(APPLICABLE)


class Runner:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.sizes = QUICK if args.quick else FULL
        if args.b1:
            self.sizes = dataclasses.replace(self.sizes, b1=[int(n) for n in args.b1.split(",")])
        self.work = work
        self.templates: dict[Dataset, Template] = {}
        self.rows: list[dict[str, Any]] = []
        self.venv_root = Path(args.venv_root)

    def context(self, **kwargs: Any) -> RunContext:
        return RunContext(self.work, server_loop=self.args.server_loop, **kwargs)

    def template(self, dataset: Dataset) -> Template:
        if dataset not in self.templates:
            self.templates[dataset] = build_template(self.work / "templates", dataset)
        return self.templates[dataset]

    def contestants(self, scenario: str) -> list[str]:
        if not self.args.contestants:
            return list(APPLICABLE[scenario])
        # In the order given, so that rounds can alternate who runs first.
        return [c for c in self.args.contestants.split(",") if c in APPLICABLE[scenario]]

    def spec(self, scenario: str, name: str, dataset: Dataset, **kwargs: Any) -> RunSpec:
        contestant = CONTESTANTS[name]
        timeout = self.args.timeout if self.args.quick else min(self.args.timeout, TIMEOUTS.get(scenario, 1e9))
        return RunSpec(scenario, contestant, interpreter(contestant, self.venv_root), self.template(dataset),
                       timeout=timeout, **kwargs)

    def record(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        seconds = row.get("seconds") or row.get("recovery_seconds")
        shown = f"{seconds:.2f}s" if isinstance(seconds, float) else "-"
        print(f"  {row['scenario']:<8} {row['contestant']:<12} {row.get('label') or '':<11} "
              f"N={row['objects']:<6} ok={row['ok']!s:<5} time={shown:<9} cpu={row.get('cpu_s') or 0:.2f}s "
              f"peakRSS={row.get('peak_rss_mib') or 0:.0f}MiB", flush=True)

    def guarded(self, make: Callable[[], dict[str, Any]], scenario: str, name: str, objects: int) -> None:
        """A crashed run becomes a failed row, so one peer's failure never hides the others."""
        try:
            self.record(make())
        except Exception as error:
            self.record({"scenario": scenario, "contestant": name, "label": "", "objects": objects,
                         "ok": False, "error": f"{type(error).__name__}: {error}"})

    def controller_runs(self, scenario: str, sizes: list[int], resource: str = "configmaps",
                        ctx: RunContext | None = None, **kwargs: Any) -> None:
        ctx = ctx or self.context()
        for n in sizes:
            for name in self.contestants(scenario):
                spec = self.spec(scenario, name, Dataset(resource, n), **kwargs)
                self.guarded(partial(run_controller, ctx, spec), scenario, name, n)

    def run(self, scenario: str) -> None:
        s = self.sizes
        print(f"== {scenario}", flush=True)
        if scenario == "B1" and self.args.b1_workers:
            for workers in (int(w) for w in self.args.b1_workers.split(",")):
                self.controller_runs("B1", s.b1, workers=workers, label=f"workers={workers}")
        elif scenario == "B1":
            self.controller_runs("B1", s.b1)
        elif scenario == "B1-pods":
            self.controller_runs("B1-pods", s.b1_pods, resource="pods")
        elif scenario == "B2":
            self.controller_runs("B2", [s.b2_base], observer_args=["--churn", s.b2_churn])
        elif scenario == "B3":
            self.controller_runs("B3", [s.b3_objects], observer_args=["--rounds", str(s.b3_rounds)])
        elif scenario == "B7":
            self.controller_runs("B7", [s.b7_objects], ctx=self.context(sample_rss=s.b7_sample_s),
                                 observer_args=["--hold", str(s.b7_hold_s)])
        elif scenario == "B8":
            self.controller_runs("B8", [s.b8], mode="finalize")
        elif scenario == "B9":
            for workers in s.b9_workers:
                self.controller_runs("B9", [s.b9_objects], workers=workers, sleep=0.05, label=f"workers={workers}")
        elif scenario == "B4":
            ctx = self.context()
            for n in s.b4:
                for name in self.contestants("B4"):
                    spec = self.spec("B4", name, Dataset("deployments", n), mode="informer")
                    self.guarded(partial(run_self_reporting, ctx, spec, "synced"), "B4", name, n)
        elif scenario == "B5":
            n = s.b5_objects
            template = self.template(Dataset("configmaps", n, s.b5_updates_per_object))
            ctx = self.context(watch_cache_size=n * s.b5_updates_per_object + 100)
            for name in self.contestants("B5"):
                spec = self.spec("B5", name, template.dataset, mode="watch")
                self.guarded(partial(run_self_reporting, ctx, spec, "done", from_rv=template.revision_before_updates,
                                     until_rv=template.revision, repeat=s.b5_repeat),
                    "B5", name, n)
        elif scenario == "B6":
            ctx = self.context()
            n = s.b6
            for name in self.contestants("B6"):
                spec = self.spec("B6", name, Dataset("configmaps", n), mode="informer")
                self.guarded(partial(run_recovery, ctx, spec, window=max(20, n // 10),
                                     recovery_timeout=self.args.recovery_timeout),
                             "B6", name, n)


def machine_info() -> dict[str, Any]:
    def sh(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""

    model = next((line.split(":", 1)[1].strip() for line in sh("lscpu").splitlines()
                  if line.startswith("Model name")), platform.processor())
    return {"cpu": model, "cpus": os.cpu_count(), "kernel": platform.release(), "python": sys.version.split()[0],
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI: checks the harness, not timings)")
    parser.add_argument("--only", default="", help=f"comma-separated scenarios out of {','.join(SCENARIOS)}")
    parser.add_argument("--contestants", default="", help=f"comma-separated, out of {','.join(CONTESTANTS)}")
    parser.add_argument("--b1", default="", help="B1 object counts, comma-separated (default: the mode's sizes)")
    parser.add_argument("--b1-workers", default="",
                        help="B1 only: sweep max_concurrent_reconciles over these counts, e.g. 1,2,4,8,16")
    parser.add_argument("--server-loop", default="", choices=["", "auto", "uvloop", "asyncio"],
                        help="the server's KUBELOOP_EVENT_LOOP (default: the command's own default)")
    parser.add_argument("--contestant-wrapper", default="",
                        help="run each contestant under this command, e.g. 'valgrind --tool=callgrind "
                             "--callgrind-out-file=/tmp/cg/out.%%p' (counts instructions; times mean nothing then)")
    parser.add_argument("--venv-root", default=str(DEFAULT_VENV_ROOT), help="where peer venvs are cached")
    parser.add_argument("--out", default=str(HERE.parent / "results"), help="results directory")
    parser.add_argument("--timeout", type=float, default=600.0, help="per-run convergence timeout, seconds")
    parser.add_argument("--recovery-timeout", type=float, default=30.0, help="B6: seconds to wait for recovery")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, data)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other scenarios' rows of an earlier run in the same --out")
    parser.add_argument("--report-only", action="store_true",
                        help="only rewrite the Markdown report and the plots from the results JSON in --out")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots (drawn in their own venv)")
    args = parser.parse_args()
    if args.report_only:
        results = Path(args.out) / ("peers-quick.json" if args.quick else "peers.json")
        saved = json.loads(results.read_text())
        write_report(Path(args.out), saved["meta"], saved["rows"])
        if not args.quick and not args.no_plots:
            plotter = ensure_venv(Path(args.venv_root), "plots")
            subprocess.run([str(plotter), str(HERE / "plots.py"), str(results), args.out], check=False)
        return
    scenario_module.CONTESTANT_WRAPPER = shlex.split(args.contestant_wrapper)
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {0})
    scenarios = [s for s in (args.only.split(",") if args.only else SCENARIOS) if s]
    unknown = [s for s in scenarios if s not in APPLICABLE]
    if unknown:
        parser.error(f"unknown scenarios: {unknown}")
    work = Path(tempfile.mkdtemp(prefix="kubeloop-bench-peers-"))
    runner = Runner(args, work)
    wanted_venvs = {CONTESTANTS[c].venv for s in scenarios for c in runner.contestants(s)} - {None}
    versions: dict[str, list[str]] = {"kubeloop": freeze(Path(sys.executable))}
    byte_compile_kubeloop(Path(sys.executable))
    for venv in sorted(v for v in wanted_venvs if v):
        try:
            versions[venv] = freeze(ensure_venv(Path(args.venv_root), venv))
        except subprocess.CalledProcessError as error:
            print(f"cannot set up the {venv} venv ({error}); its contestants are skipped", flush=True)
            runner_skip = [c for c, spec in CONTESTANTS.items() if spec.venv == venv]
            for scenario in APPLICABLE:
                APPLICABLE[scenario] = [c for c in APPLICABLE[scenario] if c not in runner_skip]
    started = time.time()
    load_before = os.getloadavg()
    try:
        for scenario in scenarios:
            runner.run(scenario)
    finally:
        meta = {"quick": args.quick, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                "duration_s": round(time.time() - started), "loadavg_before": load_before,
                "loadavg_after": os.getloadavg(), "machine": machine_info(), "versions": versions,
                "requirements": PEER_REQUIREMENTS, "server_loop": args.server_loop or "default",
                "sizes": dataclasses.asdict(runner.sizes), "scenarios": scenarios,
                "contestants": {c.name: c.description for c in CONTESTANTS.values()}}
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        results = out / ("peers-quick.json" if args.quick else "peers.json")
        meta["runs"] = [{"started": meta["started"], "scenarios": scenarios, "loadavg_before": load_before,
                         "loadavg_after": meta["loadavg_after"]}]
        if args.merge and results.exists():
            earlier = json.loads(results.read_text())
            runner.rows = [r for r in earlier["rows"] if r["scenario"] not in scenarios] + runner.rows
            before = earlier["meta"].get("runs") or [{key: earlier["meta"].get(key) for key in (
                "started", "scenarios", "loadavg_before", "loadavg_after")}]
            meta["runs"] = before + meta["runs"]
            meta["scenarios"] = [s for s in SCENARIOS if s in set(scenarios) | set(earlier["meta"]["scenarios"])]
            meta["versions"] = {**earlier["meta"]["versions"], **versions}
        results.write_text(json.dumps({"meta": meta, "rows": runner.rows}, indent=1, default=str))
        write_report(out, meta, runner.rows)
        if not args.quick and not args.no_plots and runner.rows:
            plotter = ensure_venv(Path(args.venv_root), "plots")
            subprocess.run([str(plotter), str(HERE / "plots.py"), str(out / "peers.json"), str(out)], check=False)
        print(f"results in {out}", flush=True)
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
