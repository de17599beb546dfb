"""Ordering a CloneSet's update candidates: per-comparison reads against a key per pod (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/cloneset_order.py [--pods 2000 5000]``

At the start of a roll every pod of the CloneSet is an update candidate, ordered by Kubernetes'
``ActivePods`` order and cut to what the unavailability budget lets through
(``kubeloop.controllers.cloneset.update.first_update_candidates``). Compared side by side in one
run, on the same running, ready pods (20 nodes, creation and ready times spread over ten
minutes): the order through ``functools.cmp_to_key(active_pods_compare)`` (each comparison reads
and parses both pods' times) and through ``active_pods_key`` (each pod read once), for the
first quarter (a 25% budget) and for all of them. Process CPU time, best of 3; both must give
the same indexes.
"""

from __future__ import annotations

import argparse
import functools
import heapq
import random
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubeloop.api.meta import format_time, now
from kubeloop.controllers.cloneset.ordering import active_pods_compare
from kubeloop.controllers.cloneset.update import first_update_candidates


def make_pods(count: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    base = now()

    def moment() -> str:
        return format_time(base - timedelta(seconds=rng.randint(0, 600)))

    return [{"metadata": {"name": f"p{i}", "creationTimestamp": moment()}, "spec": {"nodeName": f"n{i % 20}"},
             "status": {"phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": moment()}],
                        "containerStatuses": [{"name": "c", "restartCount": 0}]}} for i in range(count)]


def _best(action: Callable[[], list[int]]) -> tuple[float, list[int]]:
    times, result = [], []
    for _ in range(3):
        started = time.process_time()
        result = action()
        times.append(time.process_time() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, nargs="+", default=[2000, 5000])
    args = parser.parse_args()
    for count in args.pods:
        for line in _compare(make_pods(count)):
            print(line)


def _compare(pods: list[dict[str, Any]]) -> list[str]:
    count = len(pods)
    indexes = list(range(count))
    def by_active(i: int, j: int) -> int:
        return active_pods_compare(pods[i], pods[j])

    compare = functools.cmp_to_key(by_active)
    lines = []
    for first in (count // 4, count):
        def by_comparisons(first: int = first) -> list[int]:
            return heapq.nsmallest(first, indexes, key=lambda i: (False, compare(i)))

        def by_key(first: int = first) -> list[int]:
            return first_update_candidates(pods, indexes, first)

        (compared, expected), (keyed, got) = _best(by_comparisons), _best(by_key)
        assert got == expected
        lines.append(f"{count} pods, first {first}: comparisons {compared * 1e3:7.1f} ms, "
                     f"key per pod {keyed * 1e3:6.1f} ms ({compared / keyed:.1f}x)")
    return lines

if __name__ == "__main__":
    main()
