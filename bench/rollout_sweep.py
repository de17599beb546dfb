"""The rollout benchmark across sizes (issue 20, item 3): per-pod costs against the server's floor.

    .venv/bin/python bench/rollout_sweep.py --sizes 1000,5000 --workloads deployment,cloneset
    .venv/bin/python bench/rollout_sweep.py --sizes 20000 --workloads deployment --timeout 3600
    .venv/bin/python bench/rollout_sweep.py --render      # tables and plot from the stored results only

For each size N, in fresh processes so that each peak of resident memory belongs to one run:

1. the floor: a fresh in-memory server alone accepting N pod creations from one client in a
   tight sequential loop (``rollout.api_write_floor``);
2. the side-by-side run of ``bench/rollout.py --workload versus --split`` (server in the driver
   process, kubelet and controllers in processes of their own) for the chosen workloads: the
   Deployment scaled 0 -> N and rolled, then (drained, and) the CloneSet scaled 0 -> N and
   rolled in place.

Per workload and phase it keeps: wall seconds; CPU seconds by process (the server's figure is
the driver process's, which also holds the polling client); writes (POST, PUT, PATCH, DELETE of
the controllers and the kubelet) and writes per pod; "the floor for the same writes", the time
the floor's rate would take for those writes (writes x floor seconds / N), and the phase's time
over it -- the goal at 20,000 is at most 4x (and the same ratio in CPU seconds: all three
processes against the floor's server and client, steadier on a shared machine); resident memory
by process at the end of each phase and its peak so far (``VmHWM``). The 1-minute load average
is sampled every 5 s during each child, since other work may share the machine.

Rows are merged into ``bench/results/rollout-sweep.json`` (a later run of the same size and
workload replaces the earlier one), and rendered as ``rollout-sweep.md`` (tables) and
``rollout-sweep.svg`` (per-pod figures against size, drawn by :mod:`sweep_svg`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import rollout  # noqa: E402
from procmem import memory_of  # noqa: E402
from sweep_svg import Series, render_panels  # noqa: E402

Row = dict[str, Any]
RESULTS = BENCH / "results" / "rollout-sweep.json"
PROCESSES = ("server", "controllers", "kubelet")
STEPS = ("scale", "roll")
GOAL_RATIO = 4.0
GOAL_RSS_BYTES = 4 * 1024**3
MIB = 1024 * 1024


# -- children: one measurement each, in a fresh process -------------------------------------------

def child_floor(pods: int) -> dict[str, Any]:
    rollout.use_cache_friendly_gc()
    seconds, cpu = asyncio.run(rollout.api_write_floor(pods, 1))
    return {"seconds": seconds, "cpu": cpu, "memory": memory_of()}


def child_versus(pods: int, timeout: float, workloads: tuple[str, ...]) -> dict[str, Any]:
    rollout.use_cache_friendly_gc()
    phases = asyncio.run(rollout.versus(pods, timeout, True, workloads))
    rollout.report_versus(pods, True, phases)
    return {name: {**phase, "requests": list(phase["requests"])} for name, phase in phases.items()}


def run_child(argv: list[str], log_prefix: str) -> tuple[dict[str, Any], list[float]]:
    """Run this module as a child with ``argv``; its result and the 1-minute load averages seen."""
    with tempfile.TemporaryDirectory() as tmp:
        result_path = Path(tmp) / "result.json"
        process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *argv,
                                    "--result", str(result_path)])
        loads = [os.getloadavg()[0]]
        while True:
            try:
                process.wait(timeout=5.0)
                break
            except subprocess.TimeoutExpired:
                loads.append(os.getloadavg()[0])
        if process.returncode != 0:
            raise RuntimeError(f"{log_prefix}: child exited with {process.returncode}")
        result: dict[str, Any] = json.loads(result_path.read_text())
        return result, loads


# -- derived figures (pure) ---------------------------------------------------------------------------

def phase_figures(pods: int, phase: dict[str, Any], floor_seconds: float) -> dict[str, Any]:
    """Per-pod and floor-relative figures of one timed phase, as stored in the results."""
    controller, kubelet = phase["requests"]
    writes = rollout._writes(controller) + rollout._writes(kubelet)
    floor_for_writes = writes * floor_seconds / pods
    cpu = {name: value for name, value in phase["cpu"].items() if name in PROCESSES}
    return {"seconds": phase["seconds"], "writes": writes, "writes_per_pod": writes / pods,
            "floor_for_writes": floor_for_writes,
            "ratio_to_floor": phase["seconds"] / floor_for_writes if floor_for_writes else None,
            "cpu": cpu, "cpu_ms_per_pod": {name: 1000 * value / pods for name, value in cpu.items()},
            "gc": {name.split(":", 1)[1]: value for name, value in phase["cpu"].items() if name.startswith("gc:")},
            "requests": {"controllers": controller, "kubelet": kubelet},
            "rss_mib": {name: m.get("rss", 0) / MIB for name, m in phase["memory"].items()},
            "peak_rss_mib": {name: m.get("peak", 0) / MIB for name, m in phase["memory"].items()}}


def rows_of(pods: int, floor: dict[str, Any], phases: dict[str, Any], loads: list[float],
            label: str) -> list[Row]:
    """One row per workload of a side-by-side run."""
    rows = []
    for workload in rollout.VERSUS_WORKLOADS:
        if f"{workload} scale" not in phases:
            continue
        steps = {step: phase_figures(pods, phases[f"{workload} {step}"], floor["seconds"]) for step in STEPS}
        peak = steps["roll"]["peak_rss_mib"]
        rows.append({"pods": pods, "workload": workload, "label": label, "date": time.strftime("%Y-%m-%d %H:%M"),
                     "floor": {"seconds": floor["seconds"], "cpu": floor["cpu"], "per_second": pods / floor["seconds"]},
                     "load": {"mean": sum(loads) / len(loads), "max": max(loads)},
                     "steps": steps, "peak_rss_mib": peak, "peak_rss_total_mib": sum(peak.values())})
    return rows


def merge(existing: list[Row], new: list[Row]) -> list[Row]:
    """``existing`` with each row of the same size and workload replaced by the new one."""
    keys = {(row["pods"], row["workload"]) for row in new}
    kept = [row for row in existing if (row["pods"], row["workload"]) not in keys]
    return sorted(kept + new, key=lambda row: (row["workload"], row["pods"]))


# -- rendering ------------------------------------------------------------------------------------------

def cpu_ratio(row: Row, step: str) -> float:
    """The CPU seconds of all three processes in ``step`` over the floor's CPU (the server and
    its one client, one process) for the same number of writes: less sensitive than the wall
    ratio to other work on the machine, since both sides are CPU time."""
    figures = row["steps"][step]
    floor_cpu = figures["writes"] * row["floor"]["cpu"] / row["pods"]
    return float(sum(figures["cpu"].values()) / floor_cpu) if floor_cpu else 0.0


def table(rows: list[Row]) -> str:
    lines = ["| workload | pods | step | time | floor for the writes | ratio | CPU ratio | writes/pod | CPU ms/pod "
             "server / controllers / kubelet | RSS at end MiB server / controllers / kubelet | load mean (max) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        for step in STEPS:
            figures = row["steps"][step]
            cpu = " / ".join(f"{figures['cpu_ms_per_pod'].get(p, 0):.2f}" for p in PROCESSES)
            rss = " / ".join(f"{figures['rss_mib'].get(p, 0):.0f}" for p in PROCESSES)
            ratio = figures["ratio_to_floor"]
            lines.append(f"| {row['workload']} | {row['pods']:,} | {step} | {figures['seconds']:.1f} s | "
                         f"{figures['floor_for_writes']:.1f} s | {ratio:.2f}x | {cpu_ratio(row, step):.2f}x | "
                         f"{figures['writes_per_pod']:.2f} | {cpu} | {rss} | "
                         f"{row['load']['mean']:.1f} ({row['load']['max']:.1f}) |")
    lines += ["", "| workload | pods | floor (creates/s) | peak RSS MiB server / controllers / kubelet | total | "
              "goal: each step <= 4x, total < 4 GiB |", "|---|---:|---:|---:|---:|---|"]
    for row in rows:
        peak = row["peak_rss_mib"]
        ratios = [row["steps"][step]["ratio_to_floor"] or 0.0 for step in STEPS]
        met = all(r <= GOAL_RATIO for r in ratios) and row["peak_rss_total_mib"] * MIB < GOAL_RSS_BYTES
        lines.append(f"| {row['workload']} | {row['pods']:,} | {row['floor']['seconds']:.1f} s "
                     f"({row['floor']['per_second']:.0f}/s) | "
                     + " / ".join(f"{peak.get(p, 0):.0f}" for p in PROCESSES)
                     + f" | {row['peak_rss_total_mib']:.0f} | {'met' if met else 'not met'} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[Row], path: Path) -> None:
    workloads = sorted({row["workload"] for row in rows})

    def series(value: Any, names: list[tuple[str, str, Any]]) -> list[Series]:
        out = []
        for workload in workloads:
            picked = sorted((row for row in rows if row["workload"] == workload), key=lambda row: row["pods"])
            for label, dash, key in names:
                points = [(float(row["pods"]), float(value(row, key))) for row in picked]
                out.append(Series(f"{workload} {label}", points, dash=dash))
        return out

    by_step = [(step, "" if step == "scale" else "5,3", step) for step in STEPS]
    by_process = [(p, ("", "5,3", "1,3")[i], p) for i, p in enumerate(PROCESSES)]
    panels = [
        ("time / floor for the same writes (goal <= 4)",
         series(lambda row, step: row["steps"][step]["ratio_to_floor"] or 0.0, by_step)
         + series(lambda row, step: cpu_ratio(row, step), [(f"{step} CPU", "1,3", step) for step in STEPS]),
         GOAL_RATIO),
        ("CPU ms per pod, scale + roll",
         series(lambda row, p: sum(row["steps"][s]["cpu_ms_per_pod"].get(p, 0.0) for s in STEPS), by_process), None),
        ("writes per pod", series(lambda row, step: row["steps"][step]["writes_per_pod"], by_step), None),
        ("peak RSS MiB by process (goal: total < 4096)",
         series(lambda row, p: row["peak_rss_mib"].get(p, 0.0), by_process), None),
    ]
    path.write_text(render_panels("bench/rollout_sweep.py: per-pod costs against size (log x)", panels))


def render(path: Path) -> None:
    rows: list[Row] = json.loads(path.read_text())["rows"] if path.exists() else []
    text = table(rows)
    path.with_suffix(".md").write_text(text)
    plot(rows, path.with_suffix(".svg"))
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000", help="comma-separated pod counts")
    parser.add_argument("--workloads", default=",".join(rollout.VERSUS_WORKLOADS),
                        help="comma-separated: deployment, cloneset")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds each wait may take")
    parser.add_argument("--results", type=Path, default=RESULTS, help="JSON file the rows are merged into")
    parser.add_argument("--label", default="", help="free text stored with the rows (e.g. the commit)")
    parser.add_argument("--render", action="store_true", help="only render the stored results")
    parser.add_argument("--child", choices=("floor", "versus"), help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    workloads = tuple(name for name in args.workloads.split(",") if name)
    unknown = set(workloads) - set(rollout.VERSUS_WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    if args.child:
        result = child_floor(sizes[0]) if args.child == "floor" else child_versus(sizes[0], args.timeout, workloads)
        args.result.write_text(json.dumps(result))
        return
    if not args.render:
        for pods in sizes:
            floor, floor_loads = run_child(["--child", "floor", "--sizes", str(pods)], f"floor {pods}")
            print(f"floor {pods}: {floor['seconds']:.1f}s ({pods / floor['seconds']:.0f}/s), "
                  f"load {max(floor_loads):.1f}", flush=True)
            phases, loads = run_child(["--child", "versus", "--sizes", str(pods), "--workloads", ",".join(workloads),
                                       "--timeout", str(args.timeout)], f"versus {pods}")
            stored: list[Row] = json.loads(args.results.read_text())["rows"] if args.results.exists() else []
            rows = merge(stored, rows_of(pods, floor, phases, loads, args.label))
            args.results.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    render(args.results)


if __name__ == "__main__":
    main()
