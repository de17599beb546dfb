"""Result tables (Markdown), kubeloop/peer ratios and the goals verdict.

Where each number comes from is stated in the table notes: **observer** = measured on the
server's state by the observer process; **/proc** = the harness reading the contestant's
``/proc/<pid>`` at the moment convergence was seen; **contestant** = counted inside the
contestant process (requests by verb through a wrapper around its HTTP library, reconcile
invocations in the handler). Plots are drawn by ``plots.py`` in its own environment.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

Row = dict[str, Any]
VERBS = ("LIST", "WATCH", "GET", "PATCH", "POST", "PUT", "DELETE")


def _f(value: Any, digits: int = 2) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_f(v) for v in row) + " |" for row in rows]
    return lines


def _requests(row: Row) -> list[Any]:
    counts = (row.get("stats") or {}).get("requests") or {}
    return [counts.get(v, 0) if row.get("stats") else None for v in VERBS]


def _storm_reconciles(row: Row) -> float | None:
    by_value = (row.get("stats") or {}).get("reconciles_by_value") or {}
    if not by_value or not row.get("objects"):
        return None
    storm = sum(int(n) for v, n in by_value.items() if v != "0")
    return storm / int(row["objects"])


def _slope(samples: list[list[float]]) -> float | None:
    """Least-squares RSS slope, MiB per minute."""
    if len(samples) < 2:
        return None
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_r = sum(r for _, r in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    return 60 * sum((t - mean_t) * (r - mean_r) for t, r in samples) / var if var else None


def scenario_table(scenario: str, rows: list[Row]) -> list[str]:
    common = ["contestant", "N", "ok"]
    if scenario == "B4":
        header = [*common, "synced s", "CPU s", "peak RSS MiB", "cache MiB (RSS growth)", "raw JSON MiB",
                  "cache/raw", *VERBS[:2]]
        body = []
        for r in rows:
            synced = (r.get("milestone") or {})
            growth = (synced.get("rss_mib") or 0) - (synced.get("rss_before_mib") or 0) if synced else None
            body.append([r["contestant"], r["objects"], r["ok"], r.get("seconds"), r.get("cpu_s"),
                         r.get("peak_rss_mib"), growth, r.get("raw_json_mib"),
                         (growth / r["raw_json_mib"]) if growth is not None and r.get("raw_json_mib") else None,
                         *_requests(r)[:2]])
        return _table(header, body)
    if scenario == "B5":
        header = [*common, "events", "s (process start -> last event)", "events/s (watch)", "CPU s",
                  "CPU µs/event", "peak RSS MiB"]
        body = []
        for r in rows:
            stats = r.get("stats") or {}
            events, watch_s = stats.get("events"), stats.get("watch_seconds")
            body.append([r["contestant"], r["objects"], r["ok"], events, r.get("seconds"),
                         events / watch_s if events and watch_s else None, r.get("cpu_s"),
                         1e6 * r["cpu_s"] / events if events and r.get("cpu_s") else None, r.get("peak_rss_mib")])
        return _table(header, body)
    if scenario == "B6":
        header = [*common, "recovered", "recovery s", "missing", "stale", "ghosts", "duplicate ADDs",
                  "cache / server objects", *VERBS[:2]]
        body = [[r["contestant"], r["objects"], r["ok"], r.get("recovered"), r.get("recovery_seconds"),
                 r.get("missing"), r.get("stale"), r.get("ghosts"), r.get("duplicate_adds"),
                 f"{r.get('cache_size', '-')} / {r.get('truth_size', '-')}", *_requests(r)[:2]] for r in rows]
        return _table(header, body)
    header = [*common, "label", "time s", "p50 s", "p90 s", "CPU s", "peak RSS MiB", "server CPU s",
              "reconciles", *VERBS]
    extra: list[str] = []
    if scenario == "B2":
        extra = ["churn p50/p99 s (per rate)"]
    elif scenario == "B3":
        extra = ["storm reconciles/object", "quiescence s"]
    elif scenario == "B7":
        extra = ["RSS start→end MiB", "slope MiB/min", "max tasks"]
    elif scenario == "B8":
        extra = ["delete→gone s"]
    elif scenario == "B9":
        extra = ["objects/s"]
    body = []
    for r in rows:
        obs = r.get("observer") or {}
        latency = obs.get("latency") or {}
        stats = r.get("stats") or {}
        line = [r["contestant"], r["objects"], r["ok"], r.get("label"), r.get("seconds"), latency.get("p50"),
                latency.get("p90"), r.get("cpu_s"), r.get("peak_rss_mib"), r.get("server_cpu_s"),
                stats.get("reconciles"), *_requests(r)]
        if scenario == "B2":
            line.append("; ".join(
                f"{c['rate']:.0f}/s: {_f(c['latency'].get('p50'), 3)}/{_f(c['latency'].get('p99'), 3)}"
                for c in obs.get("churn") or []))
        elif scenario == "B3":
            storm = obs.get("storm") or {}
            line += [_storm_reconciles(r), storm.get("quiescent_seconds")]
        elif scenario == "B7":
            samples = r.get("rss_samples") or []
            line += [f"{samples[0][1]:.0f}→{samples[-1][1]:.0f}" if samples else None, _slope(samples),
                     stats.get("max_tasks")]
        elif scenario == "B8":
            line.append((obs.get("deletion") or {}).get("delete_seconds"))
        elif scenario == "B9":
            line.append(r["objects"] / r["seconds"] if r.get("seconds") else None)
        body.append(line)
    return _table(header + extra, body)


def ratios(rows: list[Row]) -> list[str]:
    """peer / kubeloop for time, CPU and peak RSS, per (scenario, N, label)."""
    groups: dict[tuple[str, Any, Any], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        groups[(r["scenario"], r["objects"], r.get("label"))][r["contestant"]] = r
    body = []
    for (scenario, n, label), by_name in groups.items():
        base = by_name.get("kubeloop")
        if not base or not base.get("ok"):
            continue
        for name, r in by_name.items():
            if name == "kubeloop" or not r.get("ok"):
                continue
            time_key = "recovery_seconds" if scenario == "B6" else "seconds"

            def ratio(key: str, peer: Row = r, kubeloop: Row = base) -> float | None:
                a, b = peer.get(key), kubeloop.get(key)
                return a / b if isinstance(a, int | float) and isinstance(b, int | float) and b else None

            body.append([scenario, n, label, name, ratio(time_key), ratio("cpu_s"), ratio("peak_rss_mib")])
    return _table(["scenario", "N", "label", "peer", "time peer/kubeloop", "CPU peer/kubeloop",
                   "peak RSS peer/kubeloop"], body)


def goals(rows: list[Row]) -> list[str]:
    def find(scenario: str, name: str, n: int | None = None) -> list[Row]:
        return [r for r in rows if r["scenario"] == scenario and r["contestant"] == name
                and (n is None or r["objects"] == n) and r.get("ok")]

    lines = []
    for k in find("B1", "kubeloop") + find("B1", "kubeloop-w8"):
        for p in find("B1", "kopf-event", k["objects"]) + find("B1", "kopf-create", k["objects"]):
            speed = p["seconds"] / k["seconds"]
            memory = k["peak_rss_mib"] / p["peak_rss_mib"]
            met = speed >= 5 and memory <= 0.5
            lines.append(f"- B1 N={k['objects']} {k['contestant']} vs {p['contestant']}: {speed:.1f}x faster "
                         f"(goal ≥5x), peak RSS {memory:.2f} of kopf's (goal ≤0.5): **{'met' if met else 'NOT met'}**")
    for k in find("B3", "kubeloop") + find("B3", "kubeloop-w8"):
        mine = _storm_reconciles(k)
        for p in find("B3", "kopf-event") + find("B3", "kopf-create"):
            theirs = _storm_reconciles(p)
            met = mine is not None and mine <= 3
            lines.append(f"- B3 reconciles/object during the storm: {k['contestant']} {_f(mine)} (goal ≤3), "
                         f"{p['contestant']} {_f(theirs)}: **{'met' if met else 'NOT met'}**")
    for k in find("B4", "kubeloop"):
        peers = [r for r in rows if r["scenario"] == "B4" and r["objects"] == k["objects"]
                 and r["contestant"] != "kubeloop" and r.get("ok")]
        faster = all(k["seconds"] < p["seconds"] for p in peers)
        synced = k.get("milestone") or {}
        growth = (synced.get("rss_mib") or 0) - (synced.get("rss_before_mib") or 0)
        factor = growth / k["raw_json_mib"] if k.get("raw_json_mib") else None
        met = faster and factor is not None and factor <= 2
        lines.append(f"- B4 N={k['objects']}: faster than every peer: {faster}; cache {growth:.1f} MiB = "
                     f"{_f(factor)}x raw JSON (goal ≤2x): **{'met' if met else 'NOT met'}**")
    for k in [r for r in rows if r["scenario"] == "B6" and r["contestant"] == "kubeloop"]:
        lines.append(f"- B6: missing {k.get('missing')}, stale {k.get('stale')}, ghosts {k.get('ghosts')}, "
                     f"duplicate ADDs {k.get('duplicate_adds')}: **{'met' if k.get('ok') else 'NOT met'}**")
    return lines


TITLES = {
    "B1": "B1 cold-start convergence (ConfigMaps; annotate every object once)",
    "B1-pods": "B1-pods: B1 on Pods (the only kind aiok8s's controller supports)",
    "B2": "B2 steady churn (create new objects at a fixed rate after B1)",
    "B3": "B3 update storm (every object updated many times, as fast as the server takes it)",
    "B4": "B4 informer sync (Deployments, list+watch to a synced cache, no reconcile)",
    "B5": "B5 watch throughput (replay of the server's history window, as fast as the client reads)",
    "B6": "B6 410 / relist recovery (server restart with compacted history; caches compared with the server)",
    "B7": "B7 idle memory (hold with 1 update/s)",
    "B8": "B8 finalizer deletion (delete all objects carrying the operator's finalizer)",
    "B9": "B9 handler concurrency (50 ms async sleep in the handler)",
}


def write_report(out: Path, meta: dict[str, Any], rows: list[Row]) -> Path:
    machine = meta["machine"]
    lines = [f"# Peer benchmark results ({'quick' if meta['quick'] else 'full'} run)", "",
             f"Last run started {meta['started']} UTC ({meta['duration_s']} s); machine: {machine['cpu']}, "
             f"{machine['cpus']} CPUs, {machine['memory_gib']} GiB, Linux {machine['kernel']}, "
             f"Python {machine['python']}; load average before/after: "
             f"{' '.join(f'{x:.2f}' for x in meta['loadavg_before'])} / "
             f"{' '.join(f'{x:.2f}' for x in meta['loadavg_after'])}.", "",
             *[f"- run started {run['started']} UTC ({', '.join(run['scenarios'])}): load average before "
               f"{' '.join(f'{x:.2f}' for x in run['loadavg_before'])}, after "
               f"{' '.join(f'{x:.2f}' for x in run['loadavg_after'])}"
               + (f" ({run['note']})" if run.get("note") else "")
               for run in meta.get("runs", [])], "",
             "Sources: time and latencies from the observer (server state); CPU s and peak RSS from "
             "/proc at convergence; server CPU from /proc of the server; requests and reconciles "
             "counted inside the contestant.", ""]
    by_scenario: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_scenario[r["scenario"]].append(r)
    for scenario in meta["scenarios"]:
        lines += [f"## {TITLES.get(scenario, scenario)}", ""]
        scenario_rows = by_scenario.get(scenario, [])
        lines += scenario_table(scenario, scenario_rows) if scenario_rows else ["(no runs)"]
        errors = [f"- {r['contestant']}: {r['error']}" for r in scenario_rows if r.get("error")]
        errors += [f"- {r['contestant']} {r.get('label') or ''}: gave up after the run's time limit with "
                   f"{(r.get('observer') or {}).get('good')} of {(r.get('observer') or {}).get('total')} objects "
                   f"converged ({(r.get('observer') or {}).get('phase')} phase)"
                   for r in scenario_rows if (r.get("observer") or {}).get("event") == "timeout"]
        lines += ["", *errors, ""] if errors else [""]
    lines += ["## Ratios (peer / kubeloop; above 1 means kubeloop is better)", "", *ratios(rows), "",
              "## Goals", "", *(goals(rows) or ["(not enough successful runs to judge)"]), ""]
    path = out / ("peers-quick.md" if meta["quick"] else "peers.md")
    path.write_text("\n".join(lines))
    return path
