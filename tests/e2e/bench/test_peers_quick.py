"""The peer benchmark harness works end to end (``bench/peers/run.py --quick``).

It runs every scenario at its reduced size with kubeloop and kopf's K-event variant (kopf's
venv is created under ``.venv-peers/`` on first use, or reused), then checks that every
result table is complete: each scenario ran, each applicable contestant has a row, each row
converged as judged on the server and carries the measured columns. Timings are never
asserted; a benchmark, not a test, judges them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "bench" / "peers" / "run.py"
SCENARIOS = ["B1", "B1-pods", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"]
KOPF_SCENARIOS = {"B1", "B2", "B3", "B7", "B8", "B9"}


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("peers")
    done = subprocess.run([sys.executable, str(RUN), "--quick", "--contestants", "kubeloop,kopf-event",
                           "--out", str(out), "--timeout", "60", "--recovery-timeout", "15"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((out / "peers-quick.json").read_text()), (out / "peers-quick.md").read_text()


def rows_of(results: dict[str, Any], scenario: str, contestant: str) -> list[dict[str, Any]]:
    return [r for r in results["rows"] if r["scenario"] == scenario and r["contestant"] == contestant]


@pytest.mark.timeout(600)
def test_every_scenario_has_a_converged_kubeloop_row(quick_results: tuple[dict[str, Any], str]) -> None:
    results, _ = quick_results
    assert results["meta"]["scenarios"] == SCENARIOS
    for scenario in SCENARIOS:
        rows = rows_of(results, scenario, "kubeloop")
        assert rows, f"no kubeloop row for {scenario}"
        for row in rows:
            assert row["ok"], (scenario, row.get("error"), row.get("observer"))
            assert row["stats"]["requests"].get("WATCH", 0) >= 1, (scenario, row["stats"])


@pytest.mark.timeout(600)
def test_controller_rows_carry_every_measured_column(quick_results: tuple[dict[str, Any], str]) -> None:
    results, _ = quick_results
    for row in results["rows"]:
        if row["scenario"] in KOPF_SCENARIOS | {"B1-pods"}:
            for column in ("seconds", "cpu_s", "peak_rss_mib", "server_cpu_s", "cpu_s_total"):
                assert isinstance(row.get(column), float), (row["scenario"], row["contestant"], column)
            assert row["stats"]["reconciles"] >= row["objects"], row["stats"]
            assert row["observer"]["latency"]["p50"] <= row["observer"]["latency"]["max"]
    b3 = rows_of(results, "B3", "kubeloop")[0]
    assert b3["observer"]["storm"]["converged"]
    b2 = rows_of(results, "B2", "kubeloop")[0]
    assert [c["converged"] for c in b2["observer"]["churn"]] == [True, True]
    b7 = rows_of(results, "B7", "kubeloop")[0]
    assert len(b7["rss_samples"]) >= 2
    for contestant in ("kubeloop", "kopf-event"):
        b8 = rows_of(results, "B8", contestant)[0]
        assert b8["observer"]["deletion"]["converged"], (contestant, b8["observer"]["deletion"])


@pytest.mark.timeout(600)
def test_informer_watch_and_recovery_rows(quick_results: tuple[dict[str, Any], str]) -> None:
    results, _ = quick_results
    b4 = rows_of(results, "B4", "kubeloop")[0]
    assert b4["milestone"]["objects"] == b4["objects"]
    b5 = rows_of(results, "B5", "kubeloop")[0]
    sizes = results["meta"]["sizes"]
    assert b5["stats"]["events"] == sizes["b5_objects"] * sizes["b5_updates_per_object"] * sizes["b5_repeat"]
    b6 = rows_of(results, "B6", "kubeloop")[0]
    assert (b6["missing"], b6["stale"], b6["ghosts"]) == (0, 0, 0)
    assert b6["cache_size"] == b6["truth_size"]


@pytest.mark.timeout(600)
def test_kopf_rows_when_its_venv_exists(quick_results: tuple[dict[str, Any], str]) -> None:
    results, report = quick_results
    for scenario in SCENARIOS:
        assert re.search(rf"^## {re.escape(scenario)}[ :]", report, re.MULTILINE), scenario
    if "kopf" not in results["meta"]["versions"]:
        # The kopf venv could not be created (no package index): the harness ran without it.
        assert not [r for r in results["rows"] if r["contestant"] == "kopf-event"]
        return
    assert any(line.startswith("kopf==") for line in results["meta"]["versions"]["kopf"])
    assert not any(line.startswith("kubernetes") for line in results["meta"]["versions"]["kopf"])
    for scenario in KOPF_SCENARIOS:
        rows = rows_of(results, scenario, "kopf-event")
        assert rows, f"no kopf row for {scenario}"
        for row in rows:
            assert row["ok"], (scenario, row.get("error"), row.get("observer"))
            assert row["stats"]["settings"]["posting.enabled"] is False
    assert "| B1 | " in report.split("## Ratios")[1]
