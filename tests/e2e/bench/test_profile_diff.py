"""``bench/profile_diff.py`` prints what one phase of a profiled run added: the calls between two
cProfile dumps of one profiler, not the totals."""

from __future__ import annotations

import cProfile
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def marker_before_phase() -> int:
    return 1


def marker_in_phase() -> int:
    return 2


def test_the_difference_holds_only_the_phase_calls(tmp_path: Path) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(7):
        marker_before_phase()
    profiler.dump_stats(str(tmp_path / "a.prof"))  # as bench/rollout_roles.py does at each report
    profiler.enable()
    for _ in range(5):
        marker_before_phase()
    for _ in range(3):
        marker_in_phase()
    profiler.disable()
    profiler.dump_stats(str(tmp_path / "b.prof"))
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_diff.py"), str(tmp_path / "a.prof"),
                           str(tmp_path / "b.prof"), "--match", "marker_", "--sort", "calls"],
                          capture_output=True, text=True, timeout=60, check=True)
    rows = {line.split()[-1].rsplit("(", 1)[-1].rstrip(")"): int(line.split()[0])
            for line in done.stdout.splitlines() if "marker_" in line}
    assert rows == {"marker_before_phase": 5, "marker_in_phase": 3}
