"""PNG plots of a peers.json, drawn with matplotlib in its own venv (``.venv-peers/plots``).

    .venv-peers/plots/bin/python bench/peers/plots.py bench/results/peers.json bench/results/

run.py calls this after a full run; matplotlib stays out of kubeloop's dependencies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

Row = dict[str, Any]


def grouped_bars(rows: list[Row], scenario: str, value: str, ylabel: str, title: str, path: Path) -> None:
    """One group of bars per N (or label), one bar per contestant."""
    picked = [r for r in rows if r["scenario"] == scenario and r.get("ok") and r.get(value) is not None]
    if not picked:
        return
    groups = sorted({(r["objects"], r.get("label") or "") for r in picked})
    names = list(dict.fromkeys(r["contestant"] for r in picked))
    table = {(r["objects"], r.get("label") or "", r["contestant"]): r[value] for r in picked}
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, name in enumerate(names):
        xs = [g + i * width for g in range(len(groups))]
        ys = [table.get((*group, name), 0) for group in groups]
        ax.bar(xs, ys, width, label=name)
    ax.set_xticks([g + width * (len(names) - 1) / 2 for g in range(len(groups))])
    ax.set_xticklabels([f"N={n}" + (f"\n{label}" if label else "") for n, label in groups])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def rss_over_time(rows: list[Row], path: Path) -> None:
    picked = [r for r in rows if r["scenario"] == "B7" and r.get("rss_samples")]
    if not picked:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in picked:
        samples = r["rss_samples"]
        ax.plot([t for t, _ in samples], [m for _, m in samples], label=r["contestant"])
    ax.set_xlabel("seconds into the hold (1 update/s)")
    ax.set_ylabel("RSS MiB")
    ax.set_title(f"B7 idle memory, N={picked[0]['objects']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows: list[Row] = json.loads(source.read_text())["rows"]
    for r in rows:
        stats = r.get("stats") or {}
        if r["scenario"] == "B5" and stats.get("events") and stats.get("watch_seconds"):
            r["events_per_s"] = stats["events"] / stats["watch_seconds"]
        if r["scenario"] == "B3" and stats.get("reconciles_by_value"):
            storm = sum(n for v, n in stats["reconciles_by_value"].items() if v != "0")
            r["storm_reconciles"] = storm / r["objects"]
        if r["scenario"] == "B9" and r.get("seconds"):
            r["throughput"] = r["objects"] / r["seconds"]
    plots = [
        ("B1", "seconds", "seconds to converge", "B1 cold start: time to 100% annotated", "b1-time.png"),
        ("B1", "peak_rss_mib", "peak RSS MiB", "B1 cold start: peak RSS", "b1-rss.png"),
        ("B1", "cpu_s", "CPU seconds", "B1 cold start: contestant CPU", "b1-cpu.png"),
        ("B3", "storm_reconciles", "reconciles per object", "B3 update storm: reconciles per object",
         "b3-reconciles.png"),
        ("B4", "seconds", "seconds to synced cache", "B4 informer sync (Deployments)", "b4-time.png"),
        ("B4", "peak_rss_mib", "peak RSS MiB", "B4 informer sync: peak RSS", "b4-rss.png"),
        ("B5", "events_per_s", "events per second", "B5 watch throughput", "b5-throughput.png"),
        ("B9", "throughput", "objects per second", "B9 handler concurrency (50 ms handler)", "b9-throughput.png"),
    ]
    for scenario, value, ylabel, title, name in plots:
        grouped_bars(rows, scenario, value, ylabel, title, out / name)
    rss_over_time(rows, out / "b7-rss.png")


if __name__ == "__main__":
    main()
