import asyncio
import logging
from collections import Counter

import pytest
from prometheus_client import CollectorRegistry

from kubeloop.runtime.controller import Controller, Result, TerminalError
from kubeloop.runtime.handlers import Request, requests_for_owner
from kubeloop.runtime.informers.informer import SharedIndexInformer
from kubeloop.runtime.predicates import generation_changed
from kubeloop.runtime.workqueue import ItemExponentialFailureRateLimiter
from kubeloop.testing.clock import FakeClock
from kubeloop.testing.polling import eventually

from .fakes import FakeCollection, InstantClock


def informer_for(api: FakeCollection) -> SharedIndexInformer:
    return SharedIndexInformer(api, name="objs", clock=InstantClock(), detect_mutations=True)



def metric(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_concurrent_workers_never_share_a_key() -> None:
    api = FakeCollection()
    for i in range(20):
        api.put(f"o{i}")
    informer = informer_for(api)
    active: set[str] = set()
    overlaps: list[str] = []
    counts: Counter[str] = Counter()

    async def reconcile(request: Request) -> None:
        if request.key in active:
            overlaps.append(request.key)
        active.add(request.key)
        counts[request.key] += 1
        await asyncio.sleep(0.002)
        active.discard(request.key)

    registry = CollectorRegistry()
    controller = Controller("test", reconcile, max_concurrent_reconciles=8, registry=registry)
    controller.watch(informer)
    await controller.start()
    for round_ in range(5):
        for i in range(20):
            api.put(f"o{i}", spec={"round": round_})
        await asyncio.sleep(0.001)
    await eventually(lambda: all(counts[f"ns/o{i}"] >= 2 for i in range(20)) and not active, timeout=5, interval=0.001)
    await asyncio.sleep(0.05)
    await controller.stop()
    await informer.stop()
    assert overlaps == []
    # Updates coalesce: far fewer reconciles than events (20 objects x 6 versions).
    assert sum(counts.values()) < 120
    assert metric(registry, "controller_runtime_max_concurrent_reconciles", controller="test") == 8
    assert metric(registry, "controller_runtime_reconcile_total", controller="test", result="success") == sum(
        counts.values()
    )


async def test_errors_retry_with_backoff_and_success_forgets() -> None:
    api = FakeCollection()
    api.put("a")
    informer = informer_for(api)
    attempts = 0

    async def reconcile(request: Request) -> None:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise RuntimeError("transient")

    registry = CollectorRegistry()
    controller = Controller(
        "retry", reconcile, rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01), registry=registry
    )
    controller.watch(informer)
    await controller.start()
    await eventually(lambda: attempts == 3, timeout=5, interval=0.001)
    await asyncio.sleep(0.01)
    assert controller.queue.num_requeues(Request("ns", "a")) == 0
    assert metric(registry, "controller_runtime_reconcile_errors_total", controller="retry") == 2
    await controller.stop()
    await informer.stop()


async def test_terminal_errors_are_not_retried_and_requeue_after_is_honoured(fake_clock: FakeClock) -> None:
    api = FakeCollection()
    api.put("bad")
    api.put("later")
    informer = informer_for(api)
    calls: Counter[str] = Counter()

    async def reconcile(request: Request) -> Result | None:
        calls[request.name] += 1
        if request.name == "bad":
            raise TerminalError("cannot fix")
        if calls["later"] == 1:
            return Result(requeue_after=0.02)
        return None

    registry = CollectorRegistry()
    controller = Controller("terminal", reconcile, clock=fake_clock, registry=registry)
    controller.watch(informer)
    await controller.start()
    # Settled: both reconciled once, and only "later" waits to come back.
    await eventually(lambda: calls["bad"] == 1 and calls["later"] == 1 and controller.queue.waiting_count() == 1,
                     timeout=5, interval=0.001)
    # Delayed items are timers of the fake clock: a step runs the due ones synchronously, so the
    # queue tells at once whether anything came back.
    fake_clock.step(0.01)
    assert len(controller.queue) == 0  # "later" asked for 0.02 s
    fake_clock.step(0.01)
    await eventually(lambda: calls["later"] == 2, timeout=5, interval=0.001)
    fake_clock.step(2000)  # past the longest back-off (1000 s) a retry of "bad" could wait
    assert len(controller.queue) == 0
    assert controller.queue.waiting_count() == 0
    assert calls["bad"] == 1
    assert metric(registry, "controller_runtime_terminal_reconcile_errors_total", controller="terminal") == 1
    assert metric(registry, "controller_runtime_reconcile_total", controller="terminal", result="requeue_after") == 1
    await controller.stop()
    await informer.stop()


async def test_stop_drains_in_flight_reconciles() -> None:
    api = FakeCollection()
    api.put("a")
    informer = informer_for(api)
    release = asyncio.Event()
    finished: list[str] = []

    async def reconcile(request: Request) -> None:
        await release.wait()
        finished.append(request.key)

    controller = Controller("drain", reconcile, registry=CollectorRegistry())
    controller.watch(informer)
    await controller.start()
    await eventually(lambda: controller.reconciles == 1, timeout=5, interval=0.001)
    stopping = asyncio.create_task(controller.stop())
    await asyncio.sleep(0.01)
    assert not stopping.done()
    release.set()
    await stopping
    assert finished == ["ns/a"]
    await informer.stop()


async def test_owner_mapping_and_predicates() -> None:
    owners = FakeCollection()
    owners.put("web", metadata_generation=1)
    pods = FakeCollection()
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u", "controller": True}
    other = {"apiVersion": "v1", "kind": "ReplicaSet", "name": "core", "uid": "v", "controller": True}
    pods.objects["ns/p1"] = {"metadata": {"name": "p1", "namespace": "ns", "resourceVersion": "1",
                                          "ownerReferences": [ref]}}
    pods.objects["ns/p2"] = {"metadata": {"name": "p2", "namespace": "ns", "resourceVersion": "1",
                                          "ownerReferences": [other]}}
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    controller = Controller("owner", reconcile, registry=CollectorRegistry())
    pod_informer = informer_for(pods)
    controller.watch(pod_informer, requests_for_owner("apps", "ReplicaSet"))
    await controller.start()
    await eventually(lambda: len(seen) == 1, timeout=5, interval=0.001)
    assert seen == [Request("ns", "web")]
    await controller.stop()
    await pod_informer.stop()


def test_generation_predicate() -> None:
    old = {"metadata": {"generation": 1}}
    assert not generation_changed.on_update(old, {"metadata": {"generation": 1}, "status": {"x": 1}})
    assert generation_changed.on_update(old, {"metadata": {"generation": 2}})


def test_invalid_worker_count() -> None:
    async def reconcile(request: Request) -> None:
        return None

    with pytest.raises(ValueError):
        Controller("x", reconcile, max_concurrent_reconciles=0, registry=CollectorRegistry())


async def test_api_errors_log_one_line_and_bugs_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    from kubeloop.client import NotFound

    calls: dict[str, int] = {"gone": 0, "bug": 0}

    async def reconcile(request: Request) -> None:
        calls[request.name] += 1
        if request.name == "gone":
            raise NotFound(404, "NotFound", 'replicasets.apps "gone" not found')
        raise KeyError("a bug")

    controller = Controller("errors", reconcile, registry=CollectorRegistry())
    with caplog.at_level(logging.ERROR, logger="kubeloop.runtime.controller"):
        await controller.process(Request("default", "gone"))
        await controller.process(Request("default", "bug"))
    gone, bug = caplog.records
    assert "error syncing" in gone.getMessage()
    assert gone.exc_info is None and 'replicasets.apps "gone" not found' in gone.getMessage()
    assert bug.exc_info is not None
