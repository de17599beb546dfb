"""The manager against the embedded API server: controllers, probes, leader election."""

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from kubeloop.client import CONFIG_MAPS, LEASES, ApiClient, load_kubeconfig
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.leaderelection import LeaderElectionConfig
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.server.app import KubeServer
from kubeloop.testing.clock import FakeClock
from kubeloop.testing.polling import eventually

StartServer = Callable[..., Awaitable[KubeServer]]


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}



def annotator(client: ApiClient, who: str, seen: list[str]) -> Callable[[Request], Awaitable[None]]:
    async def reconcile(request: Request) -> None:
        seen.append(request.key)
        await client.patch(CONFIG_MAPS, request.name, {"metadata": {"annotations": {"reconciled-by": who}}},
                           namespace=request.namespace)

    return reconcile


async def test_manager_runs_controllers_and_serves_probes(client: ApiClient) -> None:
    for i in range(5):
        await client.create(CONFIG_MAPS, cm(f"c{i}"), namespace="default")
    mgr = Manager(client, ManagerOptions(name="test", health_port=0))
    seen: list[str] = []
    await mgr.controller("annotate").for_(CONFIG_MAPS).with_options(max_concurrent_reconciles=4).complete(
        annotator(client, "a", seen)
    )
    await mgr.start()
    await eventually(lambda: mgr.ready(), timeout=15, interval=0.02)
    async with aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{mgr.health.port}"
        async with http.get(f"{base}/readyz?verbose") as resp:
            assert resp.status == 200
            assert "[+]informers ok" in await resp.text()
        async with http.get(f"{base}/healthz") as resp:
            assert resp.status == 200 and await resp.text() == "ok"
        await eventually(lambda: len(set(seen)) >= 5, timeout=15, interval=0.02)
        async with http.get(f"{base}/metrics") as resp:
            text = await resp.text()
    assert 'controller_runtime_reconcile_total{controller="annotate",result="success"}' in text
    assert 'workqueue_adds_total{controller="annotate",name="annotate"}' in text
    assert 'controller_runtime_max_concurrent_reconciles{controller="annotate"} 4.0' in text
    items = (await client.list(CONFIG_MAPS, namespace="default"))["items"]
    assert {i["metadata"]["annotations"]["reconciled-by"] for i in items if i["metadata"]["name"].startswith("c")} == {
        "a"
    }
    await mgr.stop()


async def tick(clock: FakeClock, seconds: float) -> None:
    """Advance the managers' shared fake clock, then wait until every loop it woke (lease renewals
    and retries, which talk to the real server) has gone back to sleep."""
    asleep = clock.waiter_count()
    clock.step(seconds)
    await eventually(lambda: clock.waiter_count() >= asleep, timeout=10, interval=0.01,
                     what="the woken loops to sleep again")


async def test_leader_election_hands_over_when_the_leader_dies(server: KubeServer, fake_clock: FakeClock) -> None:
    timing = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.3}
    config = load_kubeconfig(str(server.kubeconfig_path))
    async with ApiClient(config) as c1, ApiClient(config) as c2:
        await c1.create(CONFIG_MAPS, cm("x"), namespace="default")
        seen1: list[str] = []
        seen2: list[str] = []
        m1 = Manager(c1, ManagerOptions(name="le", leader_election=True, identity="one",
                                        leader_election_config=LeaderElectionConfig(release_on_cancel=False, **timing)),
                     clock=fake_clock)
        m2 = Manager(c2, ManagerOptions(name="le", leader_election=True, identity="two",
                                        leader_election_config=LeaderElectionConfig(**timing)), clock=fake_clock)
        await m1.controller("annotate").for_(CONFIG_MAPS).complete(annotator(c1, "one", seen1))
        await m2.controller("annotate").for_(CONFIG_MAPS).complete(annotator(c2, "two", seen2))
        await m1.start()
        await eventually(lambda: seen1, timeout=15, interval=0.02)
        await m2.start()
        for _ in range(10):  # 4 s, twice the lease duration: without renewals two would have taken over
            await tick(fake_clock, 0.4)
        assert seen2 == []  # two waits while one renews
        lease = await c1.get(LEASES, "le-leader", namespace="kube-system")
        assert lease["spec"]["holderIdentity"] == "one"
        # "Kill" one: its elector stops renewing without releasing the lease.
        assert m1.elector is not None
        for task in m1._tasks:
            task.cancel()
        for controller in m1.controllers:
            await controller.stop()

        async def handed_over() -> bool:
            await tick(fake_clock, 0.4)
            return bool(seen2)

        await eventually(handed_over, timeout=30, interval=0)
        lease = await c2.get(LEASES, "le-leader", namespace="kube-system")
        assert lease["spec"]["holderIdentity"] == "two"
        assert lease["spec"]["leaseTransitions"] == 1
        await m2.stop()
        lease = await c2.get(LEASES, "le-leader", namespace="kube-system")
        assert lease["spec"]["holderIdentity"] == ""  # released on shutdown
        await m1.stop()
