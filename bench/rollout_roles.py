"""The simulated kubelet, or the ReplicaSet and Deployment (and CloneSet) controllers, in a process of their own.

    .venv/bin/python bench/rollout_roles.py kubelet --kubeconfig K --nodes N --stats FILE
    .venv/bin/python bench/rollout_roles.py controllers --kubeconfig K --stats FILE [--controllers a,b]

Used by ``bench/rollout.py --workload deployment --split``, which runs the API server in its
own process beside these two, as a real cluster spreads them over processes. The kubelet has
every delay at 0; client-side throttling is off in both unless ``--qps`` is given. The process writes its stats (API
requests by method, its CPU seconds, a sequence number) to FILE as JSON once it is ready and
again on each SIGUSR1; SIGTERM or SIGINT stops it. With ``ROLLOUT_ROLE_PROFILE_DIR`` set in
the environment, the process writes a cProfile of its run to ``<dir>/<role>.prof`` as it stops,
and the profile so far to ``<dir>/<role>.<sequence>.prof`` at each stats report: the driver
reports before and after each timed phase, so in a ``versus`` run the difference between
sequences 6 and 7 is the CloneSet's scale-up, 8 and 9 its roll (2-3 and 4-5 the Deployment's);
``bench/profile_diff.py`` prints such a difference.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubeloop.client import ApiClient, CountingRequestMetrics, load_kubeconfig  # noqa: E402
from kubeloop.controllers import add_controllers  # noqa: E402
from kubeloop.kubelet import BehaviourDefaults, Kubelet, KubeletConfig  # noqa: E402
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc  # noqa: E402
from kubeloop.runtime.manager import Manager, ManagerOptions  # noqa: E402
from kubeloop.testing.cluster import quick_kubelet_config  # noqa: E402

ROLES = ("kubelet", "controllers")
PROFILE_DIR_ENV = "ROLLOUT_ROLE_PROFILE_DIR"

_profiling: list[tuple[Any, str]] = []
"""``(profiler, directory)`` with ``ROLLOUT_ROLE_PROFILE_DIR``: dumped at each stats report."""


def request_counts(metrics: CountingRequestMetrics) -> dict[str, int]:
    """Requests made so far, by HTTP method (all status codes)."""
    counts: dict[str, int] = {}
    for (method, _code), value in metrics.counts.items():
        counts[method] = counts.get(method, 0) + int(value)
    return counts


def bench_kubelet_config(nodes: int) -> KubeletConfig:
    """The benchmark's kubelet: ``nodes`` nodes, pods start, turn ready and go at once.

    The nodes renew their Leases every 10 s, as ``kubeloop kubelet`` does (and upstream's kubelet:
    a quarter of the 40 s lease), not every second as the tests' quick kubelet: at 20,000 pods
    (201 nodes) the tests' interval asked for up to 201 Lease writes a second (a third of the
    floor's write rate) whatever the pods did, a cost that grows with nodes x phase time, i.e.
    with the square of the pods (docs/decisions.md, "20,000 pods")."""
    return dataclasses.replace(quick_kubelet_config(nodes=nodes),
                               defaults=BehaviourDefaults(start_delay=0.0, ready_delay=0.0, termination_delay=0.0),
                               heartbeat_interval=KubeletConfig().heartbeat_interval)


class GcTimer:
    """Seconds the process spent in the cyclic garbage collector (from ``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


def write_stats(path: Path, metrics: CountingRequestMetrics, sequence: int, gc_timer: GcTimer) -> None:
    """Replace ``path`` with the process's stats (atomically: readers never see half a file)."""
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"sequence": sequence, "cpu": time.process_time(), "gc": gc_timer.seconds,
                                   "requests": request_counts(metrics)}))
    os.replace(partial, path)


DEFAULT_CONTROLLERS = ("replicaset", "deployment")


async def run_role(role: str, kubeconfig: Path, nodes: int, stats: Path, limits: tuple[float, int] = (0.0, 1),
                   controllers: tuple[str, ...] = DEFAULT_CONTROLLERS) -> None:
    metrics = CountingRequestMetrics()
    client = ApiClient(dataclasses.replace(load_kubeconfig(str(kubeconfig)), qps=limits[0], burst=limits[1]),
                       metrics=metrics)
    manager = Manager(client, ManagerOptions(name=f"bench-{role}"))
    kubelet: Kubelet | None = None
    if role == "kubelet":
        kubelet = Kubelet(client, bench_kubelet_config(nodes))
        await kubelet.setup(manager)
    else:
        await add_controllers(manager, list(controllers))
    stop = asyncio.Event()
    sequence = 0
    gc_timer = GcTimer()

    def snapshot() -> None:
        nonlocal sequence
        sequence += 1
        for profiler, directory in _profiling:
            profiler.dump_stats(str(Path(directory) / f"{role}.{sequence}.prof"))  # this disables it
            profiler.enable()
        write_stats(stats, metrics, sequence, gc_timer)

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, snapshot)
    await manager.start()
    try:
        if kubelet is not None:
            await kubelet.registered.wait()
        snapshot()
        await stop.wait()
    finally:
        await manager.stop()
        for informer in manager.factory.informers():
            await informer.stop()
        await client.aclose()


class RoleProcess:
    """A :mod:`rollout_roles` child process, as the benchmark driver sees it."""

    def __init__(self, role: str, kubeconfig: Path, nodes: int, workdir: Path,
                 limits: tuple[float, int] = (0.0, 1), controllers: tuple[str, ...] = DEFAULT_CONTROLLERS) -> None:
        self.role = role
        self.stats_path = workdir / f"{role}-stats.json"
        self._argv = [sys.executable, str(Path(__file__).resolve()), role, "--kubeconfig", str(kubeconfig),
                      "--nodes", str(nodes), "--stats", str(self.stats_path), "--qps", str(limits[0]),
                      "--burst", str(limits[1]),
                      "--controllers", ",".join(controllers)]
        self._process: asyncio.subprocess.Process | None = None
        self._sequence = 0

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    async def start(self, timeout: float = 60.0) -> None:
        """Start the process and wait until it reports ready (its first stats)."""
        self._process = await asyncio.create_subprocess_exec(*self._argv)
        await self._wait_for(1, timeout)

    async def _wait_for(self, sequence: int, timeout: float) -> dict[str, Any]:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        while True:
            if self._process.returncode is not None:
                raise RuntimeError(f"{self.role} process exited with {self._process.returncode}")
            try:
                stats: dict[str, Any] = json.loads(self.stats_path.read_text())
            except (FileNotFoundError, ValueError):
                stats = {"sequence": 0}
            if stats["sequence"] >= sequence:
                self._sequence = stats["sequence"]
                return stats
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.role} process did not report in {timeout}s")
            await asyncio.sleep(0.01)

    async def stats(self) -> tuple[dict[str, int], float, float]:
        """Requests by method, CPU seconds and seconds in the garbage collector so far, fresh
        from the process."""
        assert self._process is not None
        self._process.send_signal(signal.SIGUSR1)
        stats = await self._wait_for(self._sequence + 1, 30.0)
        return dict(stats["requests"]), float(stats["cpu"]), float(stats["gc"])

    async def stop(self) -> None:
        if self._process is None or self._process.returncode is not None:
            return
        self._process.terminate()
        try:
            await asyncio.wait_for(self._process.wait(), 30.0)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=ROLES)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--stats", type=Path, required=True)
    parser.add_argument("--qps", type=float, default=0.0, help="client requests/s (0: no limit)")
    parser.add_argument("--burst", type=int, default=1)
    parser.add_argument("--controllers", default=",".join(DEFAULT_CONTROLLERS),
                        help="controllers role: comma-separated controller names")
    args = parser.parse_args()
    limits = (args.qps, args.burst)
    controllers = tuple(name for name in args.controllers.split(",") if name)
    use_cache_friendly_gc()  # as the kubeloop kubelet and controllers commands do
    profile_dir = os.environ.get(PROFILE_DIR_ENV)
    if not profile_dir:
        asyncio.run(run_role(args.role, args.kubeconfig, args.nodes, args.stats, limits, controllers))
        return
    import cProfile

    profiler = cProfile.Profile()
    _profiling.append((profiler, profile_dir))
    profiler.enable()
    try:
        asyncio.run(run_role(args.role, args.kubeconfig, args.nodes, args.stats, limits, controllers))
    finally:
        profiler.disable()
        profiler.dump_stats(str(Path(profile_dir) / f"{args.role}.prof"))


if __name__ == "__main__":
    main()
