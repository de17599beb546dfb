"""Rollout benchmarks: how long a workload takes to move to a new template, and what it writes.

    .venv/bin/python bench/rollout.py [--pods 2000] [--only cloneset-inplace,cloneset-recreate]
    .venv/bin/python bench/rollout.py --workload deployment [--pods 5000] [--split]
    .venv/bin/python bench/rollout.py --workload deployment --pods 2000 --compare-identities 3
    .venv/bin/python bench/rollout.py --workload deployment --pods 1000 --qps 50 --burst 100 [--split]
    .venv/bin/python bench/rollout.py --workload versus --pods 5000 [--split]

CloneSet scenarios (issue 8): one process runs the embedded API server (in memory), the
simulated kubelet (pods start and turn ready at once, container restarts and deletions take
50 ms) and the CloneSet controller, each with its own client; client-side throttling is off so
the numbers show the work, not the token bucket. A CloneSet of N pods (default 2,000,
``maxUnavailable`` 20%) is created and waited for until all are available; then its image
changes and the clock runs until the rollout is complete (every pod on the new revision and
available, ``currentRevision == updateRevision``, the new generation observed). Reported per
strategy: time to finish, and the API requests of the controller and of the kubelet during
the rollout, writes (POST, PUT, PATCH, DELETE) and reads separately.

Deployment scenario (issue 7, ``--workload deployment``, default 5,000 pods): the same
set-up with the ReplicaSet and Deployment controllers and a kubelet whose delays are all 0. A
Deployment is created at 0 replicas, scaled to N (timed until complete: N updated, available
pods), then rolled to a new image (timed until complete again, the old ReplicaSet at 0 and its
pods gone). Beside it, the floor: a fresh server alone accepting N pod creations from one
client in a tight sequential loop (and, for reference, with 64 requests in flight). With
``--split`` the kubelet and the controllers run in processes of their own
(``bench/rollout_roles.py``), the API server in this one, as a real cluster spreads them; CPU
seconds are then reported per process and summed. ``--qps``/``--burst`` give the kubelet's and
the controllers' clients a token bucket (as ``--kube-api-qps``/``--kube-api-burst`` do); without
them their throttling is off.

Side by side (issue 20, ``--workload versus``, default 5,000 pods): ONE server, kubelet (all
delays 0, as the Deployment scenario's) and controller set (ReplicaSet, Deployment, CloneSet).
First the Deployment (25%/25%) is scaled 0 -> N and rolled to a new image, as above; then it is
scaled back to 0 and its pods drained (not timed); then a CloneSet (``InPlaceIfPossible``,
``maxUnavailable`` 25%) is created at 0, scaled 0 -> N (timed until N pods are updated and
available) and rolled in place to the new image (timed until every pod is updated and available
and ``currentRevision == updateRevision``). Reported: each phase's time, CPU by process and
writes, and the ratios CloneSet / Deployment. ``ROLLOUT_ROLE_PROFILE_DIR`` with ``--split``
profiles the controllers' process (both workloads in one profile: compare call counts).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubeloop.api import kruise  # noqa: E402
from kubeloop.client import DEPLOYMENTS, PODS, ApiClient, CountingRequestMetrics, load_kubeconfig  # noqa: E402
from kubeloop.controllers import add_controllers  # noqa: E402
from kubeloop.controllers.cloneset.control import CLONESETS  # noqa: E402
from kubeloop.controllers.cloneset.controller import CloneSetControllerOptions, add_cloneset_controller  # noqa: E402
from kubeloop.kubelet import Kubelet  # noqa: E402
from kubeloop.runtime.gcpolicy import use_cache_friendly_gc  # noqa: E402
from kubeloop.runtime.manager import Manager, ManagerOptions  # noqa: E402
from kubeloop.server.app import KubeServer, ServerConfig  # noqa: E402
from kubeloop.testing.cluster import quick_kubelet_config  # noqa: E402
from kubeloop.testing.identities import provision  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from procmem import memory_of  # noqa: E402
from rollout_roles import RoleProcess, bench_kubelet_config, request_counts  # noqa: E402

Obj = dict[str, Any]
WRITES = ("POST", "PUT", "PATCH", "DELETE")
PODS_PER_NODE = 100
SURGE = 1.25
"""Pods of a rolling update at its peak, per pod asked for: the Deployment's 25% ``maxSurge``."""
MAX_NODES = 250
"""The simulated kubelet's limit (one /24 of node addresses)."""


def bench_nodes(pods: int) -> int:
    """Nodes for a workload of ``pods``: 100 pods a node (of 110 allowed) at its peak, surge
    included. With room for ``pods`` only, a Deployment's roll left the surge's pods pending
    (at 20,000 pods, 2,890 of them), and the kubelet spent its time retrying to place them
    (docs/decisions.md, "20,000 pods")."""
    return min(MAX_NODES, math.ceil(pods * SURGE / PODS_PER_NODE) + 1)
ROLE_LIMITS: dict[str, float] = {"qps": 0.0, "burst": 1}
"""The client limits of the kubelet and the controllers (``--qps``, ``--burst``); qps 0: none."""


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    methods = set(after) | set(before)
    return {m: after.get(m, 0) - before.get(m, 0) for m in methods if after.get(m, 0) != before.get(m, 0)}


def _writes(counts: dict[str, int]) -> int:
    return sum(v for m, v in counts.items() if m in WRITES)


def cloneset_manifest(pods: int, strategy: str) -> Obj:
    labels = {"app": "bench"}
    return {
        "apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {
            "replicas": pods,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}],
                                  "terminationGracePeriodSeconds": 1}},
            "updateStrategy": {"type": strategy, "maxUnavailable": "20%"},
        },
    }


async def _client(server: KubeServer, metrics: CountingRequestMetrics) -> ApiClient:
    config = dataclasses.replace(load_kubeconfig(str(server.kubeconfig_path)), qps=0.0)
    return ApiClient(config, metrics=metrics)


def _limited(config: Any) -> Any:
    """``config`` with the roles' client limits (:data:`ROLE_LIMITS`)."""
    return dataclasses.replace(config, qps=ROLE_LIMITS["qps"], burst=int(ROLE_LIMITS["burst"]))


async def _wait(check: Callable[[Obj], bool], client: ApiClient, timeout: float) -> Obj:
    deadline = time.monotonic() + timeout
    while True:
        cs: Obj = await client.get(CLONESETS, "bench", namespace="default")
        if check(cs):
            return cs
        if time.monotonic() > deadline:
            raise TimeoutError(f"cloneset not done after {timeout}s: {cs.get('status')}")
        await asyncio.sleep(0.1)


def _all_available(pods: int, generation: int) -> Callable[[Obj], bool]:
    def check(cs: Obj) -> bool:
        status = cs.get("status") or {}
        return (status.get("observedGeneration") == generation and status.get("updatedAvailableReplicas") == pods
                and status.get("availableReplicas") == pods and status.get("replicas") == pods
                and status.get("currentRevision") == status.get("updateRevision"))
    return check


async def cloneset_rollout(pods: int, strategy: str, timeout: float) -> dict[str, Any]:
    """Create a CloneSet of ``pods``, wait until available, change its image; measure the rollout."""
    with tempfile.TemporaryDirectory() as tmp:
        server = KubeServer(ServerConfig(data_dir=Path(tmp) / "data", port=0, memory=True))
        await server.start()
        controller_metrics, kubelet_metrics, user_metrics = (CountingRequestMetrics() for _ in range(3))
        controller_client = await _client(server, controller_metrics)
        kubelet_client = await _client(server, kubelet_metrics)
        user = await _client(server, user_metrics)
        kubelet_manager = Manager(kubelet_client, ManagerOptions(name="bench-kubelet"))
        controller_manager = Manager(controller_client, ManagerOptions(name="bench-controllers"))
        try:
            kubelet = Kubelet(kubelet_client, quick_kubelet_config(nodes=pods // PODS_PER_NODE + 1))
            await kubelet.setup(kubelet_manager)
            await add_cloneset_controller(controller_manager, CloneSetControllerOptions())
            await kubelet_manager.start()
            await controller_manager.start()

            started = time.monotonic()
            await user.create(CLONESETS, cloneset_manifest(pods, strategy), namespace="default")
            await _wait(_all_available(pods, 1), user, timeout)
            created_in = time.monotonic() - started

            controller_before, kubelet_before = request_counts(controller_metrics), request_counts(kubelet_metrics)
            cs = await user.get(CLONESETS, "bench", namespace="default")
            cs["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
            started = time.monotonic()
            await user.update(CLONESETS, cs, namespace="default")
            await _wait(_all_available(pods, 2), user, timeout)
            rolled_in = time.monotonic() - started
            controller = _delta(request_counts(controller_metrics), controller_before)
            kubelet_requests = _delta(request_counts(kubelet_metrics), kubelet_before)
        finally:
            await controller_manager.stop()
            await kubelet_manager.stop()
            for manager in (controller_manager, kubelet_manager):
                for informer in manager.factory.informers():
                    await informer.stop()
            for client in (controller_client, kubelet_client, user):
                await client.aclose()
            await server.stop()
    return {"strategy": strategy, "pods": pods, "create_seconds": created_in, "rollout_seconds": rolled_in,
            "controller": controller, "kubelet": kubelet_requests}


def report_cloneset(result: dict[str, Any]) -> None:
    controller, kubelet = result["controller"], result["kubelet"]
    print(f"CloneSet {result['strategy']:<18} pods={result['pods']}: created+available in "
          f"{result['create_seconds']:.1f}s; rollout {result['rollout_seconds']:.1f}s; "
          f"controller writes {_writes(controller)} {dict(sorted(controller.items()))}; "
          f"kubelet writes {_writes(kubelet)} {dict(sorted(kubelet.items()))}")


CLONESET_SCENARIOS = {
    "cloneset-inplace": kruise.IN_PLACE_IF_POSSIBLE,
    "cloneset-recreate": kruise.RECREATE,
}


async def run_cloneset_scenarios(names: list[str], pods: int, timeout: float) -> None:
    for name in names:
        report_cloneset(await cloneset_rollout(pods, CLONESET_SCENARIOS[name], timeout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=None,
                        help="pods per scenario (default: 2000 for cloneset, 5000 for deployment)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--only", default=",".join(CLONESET_SCENARIOS),
                        help="comma-separated scenarios: " + ", ".join(CLONESET_SCENARIOS))
    parser.add_argument("--workload", choices=("cloneset", "deployment", "versus"), default="cloneset",
                        help="cloneset: the --only scenarios; deployment: scale 0 -> N and roll, beside the floor; "
                             "versus: Deployment then CloneSet (in place), scale 0 -> N and roll, side by side")
    parser.add_argument("--profile", metavar="FILE", default=None,
                        help="deployment workload: write a cProfile of the whole run to FILE")
    parser.add_argument("--split", action="store_true",
                        help="deployment and versus workloads: run the kubelet and the controllers in processes "
                             "of their own")
    parser.add_argument("--compare-identities", type=int, metavar="ROUNDS", default=0,
                        help="deployment workload: alternate the administrator's credentials and the components' "
                             "own service accounts (RBAC on every request), ROUNDS times each")
    parser.add_argument("--qps", type=float, default=0.0,
                        help="deployment workload: requests/s of the kubelet's and the controllers' clients "
                             "(0: no limit, the default)")
    parser.add_argument("--burst", type=int, default=1, help="deployment workload: their token bucket's size")
    args = parser.parse_args()
    ROLE_LIMITS.update(qps=args.qps, burst=args.burst)
    use_cache_friendly_gc()  # as the kubeloop up and server commands do
    if args.workload == "deployment" and args.compare_identities:
        asyncio.run(compare_identities(args.pods or DEPLOYMENT_PODS, args.timeout, args.compare_identities))
        return
    if args.workload == "versus":
        asyncio.run(run_versus(args.pods or DEPLOYMENT_PODS, args.timeout, args.split))
        return
    if args.workload == "deployment":
        run_deployment_workload(args.pods or DEPLOYMENT_PODS, args.timeout, args.profile, args.split)
        return
    args.pods = args.pods or 2000
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in CLONESET_SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(unknown)}")
    asyncio.run(run_cloneset_scenarios(names, args.pods, args.timeout))


# -- Deployment: scale 0 -> N, then roll, beside the API server's floor ----------------------

DEPLOYMENT_PODS = 5000
FLOOR_CONCURRENCY = 64


def deployment_manifest(replicas: int, image: str) -> Obj:
    labels = {"app": "bench"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bench", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": image}],
                                           "terminationGracePeriodSeconds": 0}}}}


def bench_pod(index: int) -> Obj:
    """A pod like the ones the ReplicaSet controller writes (labels, owner-less, one container)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"floor-{index}", "labels": {"app": "bench", "pod-template-hash": "5d4c8f9b7"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}], "terminationGracePeriodSeconds": 0}}


def _deployment_done(pods: int, generation: int) -> Callable[[Obj], bool]:
    def check(d: Obj) -> bool:
        status = d.get("status") or {}
        # Zero counters are left out of the status (omitempty), as kube-controller-manager writes it.
        return (status.get("observedGeneration", 0) >= generation and status.get("replicas", 0) == pods
                and status.get("updatedReplicas", 0) == pods and status.get("availableReplicas", 0) == pods)
    return check


async def _wait_deployment(client: ApiClient, check: Callable[[Obj], bool], timeout: float) -> Obj:
    deadline = time.monotonic() + timeout
    while True:
        d: Obj = await client.get(DEPLOYMENTS, "bench", namespace="default")
        if check(d):
            return d
        if time.monotonic() > deadline:
            raise TimeoutError(f"deployment not done after {timeout}s: {d.get('status')}")
        await asyncio.sleep(0.05)


async def _old_pods_gone(client: ApiClient, pods: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        listed = await client.list(PODS, namespace="default", label_selector="app=bench")
        if len(listed["items"]) == pods:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(listed['items'])} pods left after {timeout}s")
        await asyncio.sleep(0.05)


class _InProcessRoles:
    """The kubelet and the controllers in this process (as ``kubeloop up`` runs them)."""

    def __init__(self, server: KubeServer, pods: int, identities: bool = False,
                 controllers: tuple[str, ...] = ("replicaset", "deployment")) -> None:
        self.server, self.pods, self.identities, self.controllers = server, pods, identities, controllers
        self.metrics = (CountingRequestMetrics(), CountingRequestMetrics())

    async def start(self) -> None:
        controller_metrics, kubelet_metrics = self.metrics
        admin = await _client(self.server, CountingRequestMetrics())
        controllers_config, kubelet_config = admin.config, admin.config
        if self.identities:
            # As `kubeloop up`: service-account tokens bound to the declared rules, so every
            # request of the controllers and the kubelet is authenticated and authorized by RBAC.
            controllers_config, provisioned = await provision(admin, ["replicaset", "deployment"], kubelet=True)
            assert provisioned is not None
            kubelet_config = provisioned
        await admin.aclose()
        self.clients = (ApiClient(_limited(controllers_config), metrics=controller_metrics),
                        ApiClient(_limited(kubelet_config), metrics=kubelet_metrics))
        self.managers = (Manager(self.clients[0], ManagerOptions(name="bench-controllers")),
                         Manager(self.clients[1], ManagerOptions(name="bench-kubelet")))
        kubelet = Kubelet(self.clients[1], bench_kubelet_config(bench_nodes(self.pods)))
        await kubelet.setup(self.managers[1])
        await add_controllers(self.managers[0], list(self.controllers))
        await self.managers[1].start()
        await self.managers[0].start()

    async def sample(self) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
        """Requests so far (controllers, kubelet) and CPU seconds so far, by process."""
        return request_counts(self.metrics[0]), request_counts(self.metrics[1]), {"all": time.process_time()}

    async def memory(self) -> dict[str, dict[str, int]]:
        """Resident bytes now and at the peak, by process (here: this one only)."""
        return {"all": memory_of()}

    async def stop(self) -> None:
        for manager in self.managers:
            await manager.stop()
            for informer in manager.factory.informers():
                await informer.stop()
        for client in self.clients:
            await client.aclose()


class _SplitRoles:
    """The kubelet and the controllers each in a process of their own (``bench/rollout_roles.py``)."""

    def __init__(self, server: KubeServer, pods: int, workdir: Path,
                 controllers: tuple[str, ...] = ("replicaset", "deployment")) -> None:
        kubeconfig = Path(server.kubeconfig_path)
        limits = (ROLE_LIMITS["qps"], int(ROLE_LIMITS["burst"]))
        self.controllers = RoleProcess("controllers", kubeconfig, 1, workdir, limits, controllers)
        self.kubelet = RoleProcess("kubelet", kubeconfig, bench_nodes(pods), workdir, limits)

    async def start(self) -> None:
        await self.kubelet.start()
        await self.controllers.start()

    async def sample(self) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
        (controller, controller_cpu, controller_gc), (kubelet, kubelet_cpu, kubelet_gc) = await asyncio.gather(
            self.controllers.stats(), self.kubelet.stats())
        return controller, kubelet, {"server": time.process_time(), "controllers": controller_cpu,
                                     "kubelet": kubelet_cpu, "gc:controllers": controller_gc,
                                     "gc:kubelet": kubelet_gc}

    async def memory(self) -> dict[str, dict[str, int]]:
        """Resident bytes now and at the peak, by process (the server's is this driver's)."""
        return {"server": memory_of(), "controllers": memory_of(self.controllers.pid),
                "kubelet": memory_of(self.kubelet.pid)}

    async def stop(self) -> None:
        await asyncio.gather(self.controllers.stop(), self.kubelet.stop())


async def deployment_scale_and_roll(pods: int, timeout: float, split: bool = False,
                                    identities: bool = False) -> dict[str, Any]:
    """Create a Deployment at 0, scale it to ``pods``, then change its image; time both.

    ``split``: the kubelet and the controllers run in processes of their own, the API server
    (and this driver) in this one; CPU seconds are then the sum over the three processes.
    ``identities``: in-process, the kubelet and the controllers talk as service accounts bound
    to their declared rules (as ``kubeloop up`` runs them), not as the administrator.
    """
    with tempfile.TemporaryDirectory() as tmp:
        server = KubeServer(ServerConfig(data_dir=Path(tmp) / "data", port=0, memory=True))
        await server.start()
        user = await _client(server, CountingRequestMetrics())
        roles: _InProcessRoles | _SplitRoles = _SplitRoles(server, pods, Path(tmp)) if split \
            else _InProcessRoles(server, pods, identities)
        try:
            await roles.start()
            await user.create(DEPLOYMENTS, deployment_manifest(0, "nginx:1.25"), namespace="default")
            await _wait_deployment(user, _deployment_done(0, 1), timeout)
            controller_before, kubelet_before, cpu_started = await roles.sample()
            started = time.monotonic()
            await user.patch(DEPLOYMENTS, "bench", {"spec": {"replicas": pods}}, namespace="default")
            await _wait_deployment(user, _deployment_done(pods, 2), timeout)
            scaled_in = time.monotonic() - started
            controller_after, kubelet_after, cpu_after = await roles.sample()
            scale_cpu = {name: cpu_after[name] - cpu_started[name] for name in cpu_after}
            scale_requests = (_delta(controller_after, controller_before), _delta(kubelet_after, kubelet_before))

            controller_before, kubelet_before, cpu_started = await roles.sample()
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}
            started = time.monotonic()
            await user.patch(DEPLOYMENTS, "bench", patch, patch_type="strategic", namespace="default")
            await _wait_deployment(user, _deployment_done(pods, 3), timeout)
            rolled_in = time.monotonic() - started
            controller_after, kubelet_after, cpu_after = await roles.sample()
            roll_cpu = {name: cpu_after[name] - cpu_started[name] for name in cpu_after}
            await _old_pods_gone(user, pods, timeout)
            drained_in = time.monotonic() - started
            roll_requests = (_delta(controller_after, controller_before), _delta(kubelet_after, kubelet_before))
        finally:
            await roles.stop()
            await user.aclose()
            await server.stop()
    return {"pods": pods, "split": split, "identities": identities, "scale_seconds": scaled_in,
            "rollout_seconds": rolled_in, "drained_seconds": drained_in, "scale_cpu": scale_cpu, "roll_cpu": roll_cpu,
            "scale_requests": scale_requests, "roll_requests": roll_requests}


async def api_write_floor(pods: int, concurrency: int) -> tuple[float, float]:
    """Seconds (wall, then CPU of this process) a fresh in-memory server takes to accept
    ``pods`` pod creations from one client (``concurrency`` 1: a tight sequential loop)."""
    with tempfile.TemporaryDirectory() as tmp:
        server = KubeServer(ServerConfig(data_dir=Path(tmp) / "data", port=0, memory=True))
        await server.start()
        client = await _client(server, CountingRequestMetrics())
        try:
            indexes = iter(range(pods))

            async def writer() -> None:
                for index in indexes:
                    await client.create(PODS, bench_pod(index), namespace="default")

            started, cpu_started = time.monotonic(), time.process_time()
            await asyncio.gather(*(writer() for _ in range(concurrency)))
            return time.monotonic() - started, time.process_time() - cpu_started
        finally:
            await client.aclose()
            await server.stop()


Timing = tuple[float, float]
"""Wall-clock seconds, CPU seconds of the process."""


def report_deployment(result: dict[str, Any], floor: Timing, floor_concurrent: Timing) -> None:
    """Wall-clock times, and CPU seconds of the process (the fairer figure on a shared machine)."""
    pods = result["pods"]
    print(f"API floor: {pods} pod creations in {floor[0]:.1f}s ({floor[1]:.1f}s CPU) sequentially "
          f"({pods / floor[0]:.0f}/s), {floor_concurrent[0]:.1f}s ({floor_concurrent[1]:.1f}s CPU) "
          f"with {FLOOR_CONCURRENCY} in flight")
    for phase, seconds, cpu_by_process, (controller, kubelet) in (
            (f"scale 0 -> {pods}", result["scale_seconds"], result["scale_cpu"], result["scale_requests"]),
            ("roll to a new image", result["rollout_seconds"], result["roll_cpu"], result["roll_requests"])):
        cpu = sum(value for name, value in cpu_by_process.items() if not name.startswith("gc:"))
        by_process = "" if len(cpu_by_process) < 2 else \
            " [" + ", ".join(f"{name} {value:.1f}s" for name, value in cpu_by_process.items()) + "]"
        writes = _writes(controller) + _writes(kubelet)
        at_floor_rate = writes * floor[0] / pods
        print(f"Deployment {phase}: complete in {seconds:.1f}s = {seconds / floor[0]:.2f}x the floor "
              f"({cpu:.1f}s CPU{by_process} = {cpu / floor[1]:.2f}x); "
              f"controller writes {_writes(controller)} {dict(sorted(controller.items()))}; "
              f"kubelet writes {_writes(kubelet)} {dict(sorted(kubelet.items()))}; "
              f"{writes} writes at the floor's rate would take {at_floor_rate:.1f}s "
              f"(time / that = {seconds / at_floor_rate:.2f}x)")
    print(f"Deployment rollout: old pods all gone after {result['drained_seconds']:.1f}s")
    layout = "kubelet and controllers in processes of their own (CPU: all three processes)" if result["split"] \
        else "one process"
    limits = "off" if ROLE_LIMITS["qps"] <= 0 else f"qps {ROLE_LIMITS['qps']:g}, burst {int(ROLE_LIMITS['burst'])}"
    print(f"Layout: {layout}; kubelet and controller client limits: {limits}")


async def run_deployment_scenarios(pods: int, timeout: float, split: bool) -> None:
    floor = await api_write_floor(pods, 1)
    floor_concurrent = await api_write_floor(pods, FLOOR_CONCURRENCY)
    report_deployment(await deployment_scale_and_roll(pods, timeout, split), floor, floor_concurrent)


async def compare_identities(pods: int, timeout: float, rounds: int) -> None:
    """The in-process Deployment scenario as the administrator and with the components' own
    service-account identities (RBAC on every request), alternating, ``rounds`` times each."""
    rows: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(rounds):
        for identities in (False, True):
            rows[identities].append(await deployment_scale_and_roll(pods, timeout, identities=identities))

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[len(ordered) // 2]

    print(f"Deployment of {pods} pods, one process, {rounds} alternating rounds each (median):")
    for identities, label in ((False, "administrator (system:masters)"), (True, "own service accounts + RBAC")):
        runs = rows[identities]
        print(f"  {label:32} scale {median([r['scale_seconds'] for r in runs]):6.1f}s "
              f"{median([r['scale_cpu']['all'] for r in runs]):6.1f}s CPU; "
              f"roll {median([r['rollout_seconds'] for r in runs]):6.1f}s "
              f"{median([r['roll_cpu']['all'] for r in runs]):6.1f}s CPU")
    for phase in ("scale_cpu", "roll_cpu"):
        ratio = median([r[phase]["all"] for r in rows[True]]) / median([r[phase]["all"] for r in rows[False]])
        print(f"  CPU with identities / without, {phase.split('_')[0]}: {ratio:.3f}")


def run_deployment_workload(pods: int, timeout: float, profile: str | None, split: bool = False) -> None:
    if profile is None:
        asyncio.run(run_deployment_scenarios(pods, timeout, split))
        return
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        asyncio.run(run_deployment_scenarios(pods, timeout, split))
    finally:
        profiler.disable()
        profiler.dump_stats(profile)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


# -- Deployment versus CloneSet, side by side in one run ---------------------------------------

VERSUS_CONTROLLERS = ("replicaset", "deployment", "cloneset")
VERSUS_CLONESET_LABELS = {"app": "bench-cs"}


def versus_cloneset_manifest(replicas: int, image: str) -> Obj:
    """The CloneSet of the side-by-side run: in place, ``maxUnavailable`` 25% as the Deployment's."""
    return {"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
            "metadata": {"name": "bench", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(VERSUS_CLONESET_LABELS)},
                     "template": {"metadata": {"labels": dict(VERSUS_CLONESET_LABELS)},
                                  "spec": {"containers": [{"name": "app", "image": image}],
                                           "terminationGracePeriodSeconds": 0}},
                     "updateStrategy": {"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": "25%"}}}


Phase = dict[str, Any]
"""``seconds``, ``cpu`` (by process), ``requests`` (controllers, kubelet) of one timed phase, and
``memory`` (by process: resident bytes at its end, ``rss``, and the peak so far, ``peak``)."""


async def _timed(roles: _InProcessRoles | _SplitRoles, act: Callable[[], Any], done: Callable[[], Any]) -> Phase:
    controller_before, kubelet_before, cpu_started = await roles.sample()
    started = time.monotonic()
    await act()
    await done()
    seconds = time.monotonic() - started
    controller_after, kubelet_after, cpu_after = await roles.sample()
    return {"seconds": seconds, "cpu": {name: cpu_after[name] - cpu_started[name] for name in cpu_after},
            "requests": (_delta(controller_after, controller_before), _delta(kubelet_after, kubelet_before)),
            "memory": await roles.memory()}


VERSUS_WORKLOADS = ("deployment", "cloneset")


async def versus(pods: int, timeout: float, split: bool,
                 workloads: tuple[str, ...] = VERSUS_WORKLOADS) -> dict[str, Phase]:
    """The Deployment's scale-up and roll, then the CloneSet's, on one server, kubelet and
    controller set; see the module docstring. ``workloads`` picks one of them or both (the
    sweep of ``bench/rollout_sweep.py`` runs the Deployment alone where the CloneSet would not
    fit its time)."""
    with tempfile.TemporaryDirectory() as tmp:
        server = KubeServer(ServerConfig(data_dir=Path(tmp) / "data", port=0, memory=True))
        await server.start()
        user = await _client(server, CountingRequestMetrics())
        roles: _InProcessRoles | _SplitRoles = _SplitRoles(server, pods, Path(tmp), VERSUS_CONTROLLERS) if split \
            else _InProcessRoles(server, pods, controllers=VERSUS_CONTROLLERS)
        phases: dict[str, Phase] = {}
        try:
            await roles.start()
            if "deployment" in workloads:
                await _versus_deployment(user, roles, pods, timeout, phases, drain="cloneset" in workloads)
            if "cloneset" in workloads:
                await _versus_cloneset(user, roles, pods, timeout, phases)
        finally:
            await roles.stop()
            await user.aclose()
            await server.stop()
    return phases


IMAGE_PATCH = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}


async def _versus_deployment(user: ApiClient, roles: _InProcessRoles | _SplitRoles, pods: int, timeout: float,
                             phases: dict[str, Phase], drain: bool) -> None:
    """The Deployment's timed scale-up and roll; with ``drain``, then scaled to 0 and drained
    (not timed) to make room on the nodes for the CloneSet, which runs on the same kubelet."""
    await user.create(DEPLOYMENTS, deployment_manifest(0, "nginx:1.25"), namespace="default")
    await _wait_deployment(user, _deployment_done(0, 1), timeout)
    phases["deployment scale"] = await _timed(
        roles, lambda: user.patch(DEPLOYMENTS, "bench", {"spec": {"replicas": pods}}, namespace="default"),
        lambda: _wait_deployment(user, _deployment_done(pods, 2), timeout))
    phases["deployment roll"] = await _timed(
        roles, lambda: user.patch(DEPLOYMENTS, "bench", IMAGE_PATCH, patch_type="strategic", namespace="default"),
        lambda: _wait_deployment(user, _deployment_done(pods, 3), timeout))
    if drain:
        await user.patch(DEPLOYMENTS, "bench", {"spec": {"replicas": 0}}, namespace="default")
        await _old_pods_gone(user, 0, timeout)


async def _versus_cloneset(user: ApiClient, roles: _InProcessRoles | _SplitRoles, pods: int, timeout: float,
                           phases: dict[str, Phase]) -> None:
    """The CloneSet's timed scale-up and in-place roll."""
    await user.create(CLONESETS, versus_cloneset_manifest(0, "nginx:1.25"), namespace="default")
    await _wait(lambda cs: (cs.get("status") or {}).get("observedGeneration") == 1, user, timeout)
    phases["cloneset scale"] = await _timed(
        roles, lambda: user.patch(CLONESETS, "bench", {"spec": {"replicas": pods}}, namespace="default"),
        lambda: _wait(_all_available(pods, 2), user, timeout))
    phases["cloneset roll"] = await _timed(
        roles, lambda: user.patch(CLONESETS, "bench", IMAGE_PATCH, namespace="default"),
        lambda: _wait(_all_available(pods, 3), user, timeout))


def report_versus(pods: int, split: bool, phases: dict[str, Phase]) -> None:
    for name, phase in phases.items():
        controller, kubelet = phase["requests"]
        cpu = sum(value for key, value in phase["cpu"].items() if not key.startswith("gc:"))
        by_process = ", ".join(f"{key} {value:.1f}s" for key, value in phase["cpu"].items())
        print(f"versus {name} {pods}: complete in {phase['seconds']:.1f}s ({cpu:.1f}s CPU [{by_process}]); "
              f"controller writes {_writes(controller)} {dict(sorted(controller.items()))}; "
              f"kubelet writes {_writes(kubelet)} {dict(sorted(kubelet.items()))}")
    for step in ("scale", "roll"):
        if f"cloneset {step}" not in phases or f"deployment {step}" not in phases:
            continue  # one workload only (bench/rollout_sweep.py)
        cloneset, deployment = phases[f"cloneset {step}"], phases[f"deployment {step}"]
        cpu_key = "controllers" if split else "all"
        print(f"versus ratio CloneSet/Deployment {step}: time {cloneset['seconds'] / deployment['seconds']:.2f}x, "
              f"{cpu_key} CPU {cloneset['cpu'][cpu_key] / max(deployment['cpu'][cpu_key], 1e-9):.2f}x")
    print(f"Layout: {'kubelet and controllers in processes of their own' if split else 'one process'}")


async def run_versus(pods: int, timeout: float, split: bool) -> None:
    report_versus(pods, split, await versus(pods, timeout, split))


if __name__ == "__main__":
    main()
