"""Work-queue throughput: add/get/done cycles per second beside the bare-loop ceiling.

    .venv/bin/python bench/workqueue.py [--adds 200000] [--chunk 1000] [--repeat 3]

Workload: adds arrive in bursts of `--chunk` (as an informer delivers a relist or a burst of
events); after each burst the producer yields to the event loop and the workers (asyncio
tasks) hand out and finish everything queued: `get`, then `done` straight away, so the queue's
own cost is what is measured, not a reconcile's. Two key patterns:
- distinct: every add is a new key, so every add becomes one get/done;
- 90% duplicates: each burst adds a tenth as many keys, each ten times, so nine adds in ten
  collapse into one that is already pending (the common case of a busy object).

Figures are adds per CPU second (each add plus the get/done it causes, if any), best of
`--repeat` runs, for:
- the ceiling: the same bookkeeping written inline as a bare loop over one deque and two sets
  (no asyncio, no methods, no waiting): what Python allows at best;
- the API floor: the same bookkeeping behind the queue's three calls (`add`, `await get()`,
  `done`) and nothing else (`MinimalQueue`): what any interpreted queue with this API pays;
- `WorkQueue` with 1 and 16 workers, metrics off (unnamed) and on (named, with the
  `PrometheusMetricsProvider` on a private registry);
- for comparison, metrics on through prometheus_client's own labelled `Gauge`/`Counter`/
  `Histogram` children (the obvious design, which kubeloop does not use).
`WorkQueue` is whichever implementation `KUBELOOP_WORKQUEUE` picks (the C core when built).

`--go BINARY --tree LABEL=DIR[@python|@native] ...` compares source trees with client-go's
queue in Go (`bench/go/README.md`); `--instructions --tree ...` counts instructions per add
under callgrind instead (`bench/README.md`, "Work queue: the hot path in C").
Each queue figure is printed with its ratio to the ceiling of the same key pattern.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from functools import partial

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kubeloop.runtime.workqueue import DURATION_BUCKETS, MetricsProvider, PrometheusMetricsProvider, WorkQueue


def make_bursts(adds: int, chunk: int, duplicates: bool) -> list[list[int]]:
    """The adds, burst by burst. With duplicates each burst holds chunk/10 keys, ten times each."""
    bursts = []
    next_key = 0
    for _ in range(adds // chunk):
        if duplicates:
            distinct = list(range(next_key, next_key + chunk // 10))
            bursts.append(distinct * 10)
            next_key += chunk // 10
        else:
            bursts.append(list(range(next_key, next_key + chunk)))
            next_key += chunk
    return bursts


def bare_loop(bursts: list[list[int]]) -> int:
    """The ceiling: the queue's bookkeeping inline over one deque and two sets. Returns gets."""
    fifo: deque[int] = deque()
    dirty: set[int] = set()
    processing: set[int] = set()
    gets = 0
    for burst in bursts:
        for key in burst:
            if key in dirty:
                continue
            dirty.add(key)
            if key not in processing:
                fifo.append(key)
        while fifo:
            key = fifo.popleft()
            processing.add(key)
            dirty.discard(key)
            gets += 1
            processing.discard(key)
            if key in dirty:
                fifo.append(key)
    return gets


class MinimalQueue:
    """The bare loop's bookkeeping behind the queue's API (add, `await get()`, done) and nothing
    else: no shutdown, no waiting, no wake-ups, no metrics. What any interpreted queue with this
    API costs at least."""

    def __init__(self) -> None:
        self._dirty: dict[int, float] = {}
        self._processing: dict[int, float] = {}
        self._queue: deque[int] = deque()

    def add(self, item: int) -> None:
        if item in self._dirty:
            return
        self._dirty[item] = 0.0
        if item in self._processing:
            return
        self._queue.append(item)

    async def get(self) -> tuple[int, bool]:
        item = self._queue.popleft()
        del self._dirty[item]
        self._processing[item] = 0.0
        return item, False

    def done(self, item: int) -> None:
        del self._processing[item]
        if item in self._dirty:
            self._queue.append(item)


async def minimal_run(bursts: list[list[int]]) -> int:
    """The API floor: `MinimalQueue` driven inline (the worker loop runs after each burst)."""
    queue = MinimalQueue()
    add, get, done, fifo = queue.add, queue.get, queue.done, queue._queue
    gets = 0
    for burst in bursts:
        for key in burst:
            add(key)
        while fifo:
            result = await get()
            if result[1]:
                return gets
            gets += 1
            done(result[0])
    return gets


def run_minimal(bursts: list[list[int]]) -> int:
    return asyncio.run(minimal_run(bursts))


async def queue_run(bursts: list[list[int]], workers: int, queue: WorkQueue[int]) -> int:
    """Feed the bursts to `queue` and let `workers` tasks drain it. Returns gets."""
    gets = 0

    async def work() -> None:
        nonlocal gets
        get = queue.get
        done = queue.done
        while True:
            result = await get()
            if result[1]:
                return
            gets += 1
            done(result[0])

    tasks = [asyncio.create_task(work()) for _ in range(workers)]
    await asyncio.sleep(0)
    add = queue.add
    for burst in bursts:
        for key in burst:
            add(key)
        await asyncio.sleep(0)
    await queue.shutdown_with_drain()
    await asyncio.gather(*tasks)
    return gets


class NativePrometheusProvider:
    """prometheus_client's own metric children, one labelled child per queue name."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["name"]
        self.depth = Gauge("workqueue_depth", "depth", labels, registry=registry)
        self.adds = Counter("workqueue_adds", "adds", labels, registry=registry)
        self.latency = Histogram(
            "workqueue_queue_duration_seconds", "latency", labels, registry=registry, buckets=DURATION_BUCKETS
        )
        self.work = Histogram(
            "workqueue_work_duration_seconds", "work", labels, registry=registry, buckets=DURATION_BUCKETS
        )
        self.unfinished = Gauge("workqueue_unfinished_work_seconds", "unfinished", labels, registry=registry)
        self.longest = Gauge("workqueue_longest_running_processor_seconds", "longest", labels, registry=registry)
        self.retries = Counter("workqueue_retries", "retries", labels, registry=registry)

    def new_depth_metric(self, name: str) -> Gauge:
        return self.depth.labels(name)

    def new_adds_metric(self, name: str) -> Counter:
        return self.adds.labels(name)

    def new_latency_metric(self, name: str) -> Histogram:
        return self.latency.labels(name)

    def new_work_duration_metric(self, name: str) -> Histogram:
        return self.work.labels(name)

    def new_unfinished_work_seconds_metric(self, name: str) -> Gauge:
        return self.unfinished.labels(name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> Gauge:
        return self.longest.labels(name)

    def new_retries_metric(self, name: str) -> Counter:
        return self.retries.labels(name)


def best_rate(adds: int, repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """Best adds per CPU second over `repeat` runs (garbage collection paused while timing).

    CPU time of this process, not wall time, because the machine is shared: other processes
    stretch wall time but hardly the CPU time a run needs.
    """
    best = 0.0
    gets = 0
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            gets = run()
            elapsed = time.process_time() - started
        finally:
            gc.enable()
        best = max(best, adds / elapsed)
    return best, gets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=200_000, help="adds per run")
    parser.add_argument("--chunk", type=int, default=1000, help="adds per burst")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept")
    parser.add_argument("--workers", default="1,16", help="worker counts, comma-separated")
    parser.add_argument(
        "--go", metavar="BINARY", help="compare with client-go's queue: the binary bench/go/build.sh builds"
    )
    parser.add_argument(
        "--tree",
        action="append",
        metavar="LABEL=DIR",
        help="with --go: a kubeloop source tree to measure (repeatable; default: this checkout); "
        "DIR@python or DIR@native sets KUBELOOP_WORKQUEUE for its runs (the C core is used when "
        "built in DIR otherwise)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="with --tree: instructions per add under valgrind's callgrind instead of CPU time",
    )
    parser.add_argument("--single", nargs=2, metavar=("PATTERN", "METRICS"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    adds = options.adds - options.adds % options.chunk
    if options.single:
        single_run(adds, options.chunk, *options.single)
        return
    if options.instructions:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        compare_instructions(options.tree or [f"kubeloop={here}"], options.chunk)
        return
    if options.go:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        compare_with_go(options.go, options.tree or [f"kubeloop={here}"], adds, options.chunk, options.repeat)
        return

    print(f"python {platform.python_version()} on {platform.machine()}, {adds} adds, bursts of {options.chunk}")
    print(f"{'pattern':<16}{'variant':<34}{'adds/s':>12}{'gets':>9}{'of ceiling':>12}")
    for pattern, duplicates in (("distinct", False), ("90% duplicates", True)):
        bursts = make_bursts(adds, options.chunk, duplicates)
        ceiling, gets = best_rate(adds, options.repeat, partial(bare_loop, bursts))
        print(f"{pattern:<16}{'bare loop (ceiling)':<34}{ceiling:>12,.0f}{gets:>9}{1:>12.2f}")
        floor, gets = best_rate(adds, options.repeat, partial(run_minimal, bursts))
        print(f"{pattern:<16}{'API floor (minimal queue)':<34}{floor:>12,.0f}{gets:>9}{floor / ceiling:>12.2f}")
        variants: list[tuple[str, Callable[[], MetricsProvider | None]]] = [
            ("metrics off", lambda: None),
            ("metrics on", lambda: PrometheusMetricsProvider(CollectorRegistry())),
            ("metrics on, prometheus_client", lambda: NativePrometheusProvider(CollectorRegistry())),
        ]
        for workers in (int(count) for count in options.workers.split(",")):
            for label, make_provider in variants:
                rate, gets = best_rate(adds, options.repeat, partial(run_queue, bursts, workers, make_provider))
                variant = f"{workers:>2} worker{'s' if workers > 1 else ' '}, {label}"
                print(f"{pattern:<16}{variant:<34}{rate:>12,.0f}{gets:>9}{rate / ceiling:>12.2f}")


def go_rate(binary: str, adds: int, chunk: int, duplicates: bool, metrics: bool) -> tuple[float, int]:
    """One run of client-go's queue in the Go benchmark: (adds per CPU second, gets)."""
    command = [binary, f"-adds={adds}", f"-chunk={chunk}", "-repeat=1"]
    command += [f"-pattern={'duplicates' if duplicates else 'distinct'}", f"-metrics={'true' if metrics else 'false'}"]
    rate, gets = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    return float(rate), int(gets)


def tree_rate(tree: str, adds: int, chunk: int, duplicates: bool, metrics: str) -> tuple[float, int]:
    """One run of kubeloop's queue from the source tree `tree`, in a fresh interpreter.

    `metrics` is "on", "off", or "floor" for the API floor (`MinimalQueue`).
    """
    command = [sys.executable, __file__, f"--adds={adds}", f"--chunk={chunk}"]
    command += ["--single", "duplicates" if duplicates else "distinct", metrics]
    tree, _, implementation = tree.partition("@")
    environment = {**os.environ, "PYTHONPATH": tree}
    if implementation:
        environment["KUBELOOP_WORKQUEUE"] = implementation
    output = subprocess.run(command, check=True, capture_output=True, text=True, env=environment).stdout
    rate, gets = output.split()
    return float(rate), int(gets)


def single_run(adds: int, chunk: int, pattern: str, metrics: str) -> None:
    """`--single`: one timed run, 1 worker; prints adds per CPU second and gets."""
    bursts = make_bursts(adds, chunk, pattern == "duplicates")
    if metrics == "floor":
        rate, gets = best_rate(adds, 1, partial(run_minimal, bursts))
        print(f"{rate:.0f} {gets}")
        return
    make_provider: Callable[[], MetricsProvider | None] = (
        (lambda: PrometheusMetricsProvider(CollectorRegistry())) if metrics == "on" else (lambda: None)
    )
    run_queue(bursts, 1, make_provider)  # warm-up: imports, first allocations
    rate, gets = best_rate(adds, 1, partial(run_queue, bursts, 1, make_provider))
    print(f"{rate:.0f} {gets}")


def compare_with_go(binary: str, trees: list[str], adds: int, chunk: int, repeat: int) -> None:
    """kubeloop's queue (1 worker task) from each tree beside client-go's (1 worker goroutine).

    Every contestant runs in a fresh process per round (the Go binary times its own run with
    getrusage; the Python side with `time.process_time`, after a warm-up run), contestants
    alternating within each round; the best of `repeat` rounds is kept for each, so all see
    the same machine load.
    """
    labels = [tree.split("=", 1)[0] for tree in trees]
    paths = [tree.split("=", 1)[-1] for tree in trees]
    print(f"python {platform.python_version()} against {binary}, {adds} adds, bursts of {chunk}, 1 worker")
    print("adds per CPU second, best of", repeat, "alternating rounds; ratio = kubeloop / client-go")
    header = f"{'pattern':<16}{'metrics':<9}{'client-go':>12}"
    for label in [*labels, "API floor"]:
        header += f"{label:>14}{'ratio':>7}"
    print(header)
    for pattern, duplicates in (("distinct", False), ("90% duplicates", True)):
        for metrics in (False, True):
            # The API floor (interpreted, from the first tree) has no metrics variant.
            runs = [(path, "on" if metrics else "off") for path in paths]
            if not metrics:
                runs.append((paths[0].partition("@")[0], "floor"))
            best = [0.0] * (len(runs) + 1)
            for _ in range(repeat):
                go, go_gets = go_rate(binary, adds, chunk, duplicates, metrics)
                best[0] = max(best[0], go)
                for index, (path, mode) in enumerate(runs, start=1):
                    rate, gets = tree_rate(path, adds, chunk, duplicates, mode)
                    if gets != go_gets:
                        raise SystemExit(f"gets differ: {path} ({mode}) {gets}, client-go {go_gets}")
                    best[index] = max(best[index], rate)
            line = f"{pattern:<16}{'on' if metrics else 'off':<9}{best[0]:>12,.0f}"
            for rate in best[1:]:
                line += f"{rate:>14,.0f}{rate / best[0]:>7.2f}"
            print(line, flush=True)


def tree_instructions(tree: str, adds: int, chunk: int, duplicates: bool, metrics: str) -> int:
    """Instructions of one `--single` run (a warm-up and a timed run) from `tree` under callgrind."""
    tree, _, implementation = tree.partition("@")
    environment = {**os.environ, "PYTHONPATH": tree}
    if implementation:
        environment["KUBELOOP_WORKQUEUE"] = implementation
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    command += [f"--adds={adds}", f"--chunk={chunk}", "--single", "duplicates" if duplicates else "distinct", metrics]
    log = subprocess.run(command, check=True, capture_output=True, text=True, env=environment).stderr
    return int(log.rsplit("refs:", 1)[1].split()[0].replace(",", ""))


def compare_instructions(trees: list[str], chunk: int) -> None:
    """Instructions per add (each add and the get/done it causes) of each tree, 1 worker.

    Two runs of different sizes per figure, differenced, so interpreter start-up and imports
    cancel out; `--single` makes two passes (warm-up and timed), hence the factor 2. Not
    disturbed by the machine's load, unlike CPU time; blind to cache misses and branch
    mispredictions, like every instruction count.
    """
    small, large = 20_000, 100_000
    labels = [tree.split("=", 1)[0] for tree in trees]
    print(f"instructions per add under callgrind, ({large} - {small}) adds, bursts of {chunk}, 1 worker")
    print(f"{'pattern':<16}{'metrics':<9}" + "".join(f"{label:>14}" for label in labels))
    for pattern, duplicates in (("distinct", False), ("90% duplicates", True)):
        for metrics in ("off", "on"):
            line = f"{pattern:<16}{metrics:<9}"
            for tree in trees:
                path = tree.split("=", 1)[-1]
                counts = [tree_instructions(path, adds, chunk, duplicates, metrics) for adds in (small, large)]
                line += f"{(counts[1] - counts[0]) / (2 * (large - small)):>14,.0f}"
            print(line, flush=True)


def run_queue(bursts: list[list[int]], workers: int, make_provider: Callable[[], MetricsProvider | None]) -> int:
    """One timed run: a fresh queue (named, so with metrics, when there is a provider)."""
    provider = make_provider()
    queue: WorkQueue[int] = WorkQueue(None if provider is None else "bench", metrics_provider=provider)
    return asyncio.run(queue_run(bursts, workers, queue))


if __name__ == "__main__":
    main()
