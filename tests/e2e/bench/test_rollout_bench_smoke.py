"""The Deployment rollout benchmark runs end to end at a tiny size, in both process layouts.

Only that it completes and reports every figure is checked (writes of both the controllers and
the kubelet, CPU per process with ``--split``); timings are a benchmark's business, not a test's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
ROLLOUT = ROOT / "bench" / "rollout.py"
PODS = 30


def run_rollout(*extra: str) -> str:
    done = subprocess.run([sys.executable, str(ROLLOUT), "--workload", "deployment", "--pods", str(PODS),
                           "--timeout", "120", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def phase_line(output: str, phase: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith(f"Deployment {phase}: complete in ")]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("split", [False, True], ids=["one-process", "split"])
def test_the_rollout_benchmark_completes_and_reports(split: bool) -> None:
    output = run_rollout(*(["--split"] if split else []))
    assert f"API floor: {PODS} pod creations in " in output
    for phase in (f"scale 0 -> {PODS}", "roll to a new image"):
        line = phase_line(output, phase)
        writes = re.search(r"controller writes (\d+) .*; kubelet writes (\d+) ", line)
        assert writes is not None, line
        # Every pod is created by the controllers and bound and started by the kubelet.
        assert int(writes.group(1)) >= PODS and int(writes.group(2)) >= 2 * PODS, line
        if split:
            assert re.search(r"\[server [\d.]+s, controllers [\d.]+s, kubelet [\d.]+s", line), line
    assert "old pods all gone after" in output
    assert ("processes of their own" in output) == split


def test_the_side_by_side_benchmark_runs_both_workloads_and_reports_the_ratios() -> None:
    done = subprocess.run([sys.executable, str(ROLLOUT), "--workload", "versus", "--pods", str(PODS),
                           "--timeout", "120"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout
    for phase in ("deployment scale", "deployment roll", "cloneset scale", "cloneset roll"):
        lines = [line for line in output.splitlines() if line.startswith(f"versus {phase} {PODS}: complete in ")]
        assert len(lines) == 1, output
        writes = re.search(r"controller writes (\d+) .*; kubelet writes (\d+) ", lines[0])
        assert writes is not None, lines[0]
        # Scaling creates every pod; rolling rewrites every pod (new pods, or in place).
        assert int(writes.group(1)) >= PODS, lines[0]
    for step in ("scale", "roll"):
        assert re.search(rf"versus ratio CloneSet/Deployment {step}: time [\d.]+x", output), output
