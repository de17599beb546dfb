"""The rollout sweep runs end to end at two tiny sizes and keeps every figure it promises.

Checked: one row per size, each with both steps' writes, CPU of all three processes, the ratio
to the floor, and resident memory of the three processes; the tables and the plot are written.
No timing is asserted: timings are a benchmark's business, not a test's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
SWEEP = ROOT / "bench" / "rollout_sweep.py"
SIZES = (20, 30)
PROCESSES = ("server", "controllers", "kubelet")


def test_the_sweep_records_per_pod_figures_for_each_size(tmp_path: Path) -> None:
    results = tmp_path / "sweep.json"
    done = subprocess.run([sys.executable, str(SWEEP), "--sizes", ",".join(map(str, SIZES)),
                           "--workloads", "deployment", "--timeout", "120", "--results", str(results)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(results.read_text())["rows"]
    assert [(row["pods"], row["workload"]) for row in rows] == [(n, "deployment") for n in SIZES]
    for row in rows:
        assert row["floor"]["seconds"] > 0
        for step in ("scale", "roll"):
            figures = row["steps"][step]
            # At least a pod creation and a binding per pod; the roll deletes the old pods too.
            assert figures["writes_per_pod"] >= 2, figures
            assert figures["ratio_to_floor"] > 0
            assert set(figures["cpu"]) == set(PROCESSES) and all(v > 0 for v in figures["cpu"].values())
            assert all(figures["rss_mib"][p] > 10 for p in PROCESSES), figures["rss_mib"]
        assert all(row["peak_rss_mib"][p] >= row["steps"]["scale"]["rss_mib"][p] for p in PROCESSES)
    table = results.with_suffix(".md").read_text()
    assert f"| deployment | {SIZES[1]} | roll |" in table
    svg = results.with_suffix(".svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") >= 4
