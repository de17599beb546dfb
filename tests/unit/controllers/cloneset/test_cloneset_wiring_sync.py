"""The CloneSet reconcile's own helpers and its handling of objects it cannot act on."""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubeloop.api import kruise
from kubeloop.api.meta import format_time
from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, Request
from kubeloop.controllers.cloneset.control import CloneSetControl
from kubeloop.controllers.cloneset.options import DEFAULT_BEHAVIOUR, DEFAULT_GATES
from kubeloop.controllers.cloneset.steps import Requeue, run_concurrently
from kubeloop.controllers.cloneset.sync import (
    AVAILABILITY_SLACK,
    OWNER_UID_INDEX,
    CloneSetInformers,
    CloneSetSync,
    InvalidCloneSetError,
    availability_recheck,
    owner_uids,
    parse_selector,
)
from kubeloop.runtime.controller import Result
from kubeloop.runtime.events import EventRecorder
from kubeloop.runtime.expectations import CREATE, ResourceVersionExpectations, ScaleExpectations
from kubeloop.runtime.handlers import Request as ReconcileRequest
from kubeloop.runtime.informers import ListPage, SharedIndexInformer

Obj = dict[str, Any]
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


class NoListWatch:
    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        return ListPage([], "1", None)

    async def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        nothing: list[tuple[str, Obj]] = []
        for event in nothing:
            yield event


class NoSink:
    """Events never reach a sink here: :class:`CapturingRecorder` keeps them."""

    async def create(self, namespace: str, event: Obj) -> Obj:
        raise AssertionError("not used")

    async def patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        raise AssertionError("not used")


class CapturingRecorder(EventRecorder):
    """Keeps events in a list instead of writing them."""

    def __init__(self) -> None:
        super().__init__(sink=NoSink(), component="test")
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str, *, kind: str = "",
              api_version: str = "") -> None:
        self.events.append((type_, reason, message))


def refuse(request: Request) -> MockResponse:
    raise AssertionError(f"unexpected API call {request.method} {request.path}")


def make_sync(*clonesets: Obj) -> tuple[CloneSetSync, CapturingRecorder, ScaleExpectations, MockTransport]:
    informers = CloneSetInformers(
        clonesets=SharedIndexInformer(NoListWatch()),
        pods=SharedIndexInformer(NoListWatch(), indexers={OWNER_UID_INDEX: owner_uids}),
        pvcs=SharedIndexInformer(NoListWatch(), indexers={OWNER_UID_INDEX: owner_uids}),
        revisions=SharedIndexInformer(NoListWatch()),
    )
    for cs in clonesets:
        informers.clonesets.indexer.upsert(cs)
    transport = MockTransport(refuse)
    client = ApiClient(ClientConfig("https://k8s.example:6443", qps=0), transport=transport)
    recorder = CapturingRecorder()
    scale = ScaleExpectations()
    versions = ResourceVersionExpectations()
    control = CloneSetControl(client, recorder, scale, versions, DEFAULT_GATES)
    sync = CloneSetSync(client, informers, recorder, control, scale, versions, gates=DEFAULT_GATES,
                        behaviour=DEFAULT_BEHAVIOUR, wall=lambda: NOW, rng=random.Random(1))
    return sync, recorder, scale, transport


def cloneset(**spec: Any) -> Obj:
    body: Obj = {"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
                 "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid", "generation": 1},
                 "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                          "template": {"metadata": {"labels": {"app": "web"}},
                                       "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    body["spec"].update(spec)
    return body


def ready_pod(since: datetime, state: str = kruise.STATE_NORMAL) -> Obj:
    return {"metadata": {"name": "p", "labels": {kruise.LIFECYCLE_STATE_LABEL: state}},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": format_time(since)}]}}


@pytest.mark.parametrize("selector", [None, {}, {"matchLabels": {"a": "b c"}}, {"matchLabels": ["x"]}])
def test_selector_missing_empty_or_invalid_is_rejected(selector: Any) -> None:
    with pytest.raises(InvalidCloneSetError):
        parse_selector(cloneset(selector=selector))


def test_selector_string_is_canonical() -> None:
    assert str(parse_selector(cloneset(selector={"matchLabels": {"b": "2", "a": "1"}}))) == "a=1,b=2"


def test_owner_uids_lists_every_reference() -> None:
    obj = {"metadata": {"ownerReferences": [{"uid": "a"}, {"uid": "b", "controller": True}, {"name": "x"}]}}
    assert owner_uids(obj) == ["a", "b"]
    assert owner_uids({"metadata": {}}) == []


def test_requeue_keeps_earliest_positive_delay() -> None:
    requeue = Requeue()
    for value in (None, 0.0, 12.0, -3.0, 4.5, 9.0):
        requeue.push(value)
    assert requeue.after == 4.5


def test_availability_recheck_waits_for_min_ready_seconds() -> None:
    pods = [ready_pod(NOW - timedelta(seconds=3)), ready_pod(NOW - timedelta(seconds=8))]
    assert availability_recheck(pods, 10, NOW) == pytest.approx(2 + AVAILABILITY_SLACK)
    assert availability_recheck(pods, 0, NOW) is None
    assert availability_recheck([ready_pod(NOW - timedelta(seconds=30))], 10, NOW) is None
    # A pod not yet Normal becomes available through a label change, which is an event.
    assert availability_recheck([ready_pod(NOW, kruise.STATE_PREPARING_NORMAL)], 10, NOW) is None


async def test_missing_cloneset_drops_expectations() -> None:
    sync, _, scale, _ = make_sync()
    scale.expect("ns/web", CREATE, "web-abcde")
    assert await sync.reconcile(ReconcileRequest("ns", "web")) is None
    assert scale.satisfied("ns/web")[0]


async def test_invalid_selector_warns_and_retries_without_api_calls() -> None:
    sync, recorder, _, transport = make_sync(cloneset(selector={"matchLabels": {"app": "not valid!"}}))
    assert await sync.reconcile(ReconcileRequest("ns", "web")) == Result(requeue=True)
    assert [(t, r) for t, r, _ in recorder.events] == [("Warning", "InvalidCloneSet")]
    assert transport.requests == []


async def test_malformed_template_warns_and_retries() -> None:
    sync, recorder, _, transport = make_sync(cloneset(template="not an object"))
    assert await sync.reconcile(ReconcileRequest("ns", "web")) == Result(requeue=True)
    assert [(t, r) for t, r, _ in recorder.events] == [("Warning", "ReconcileError")]
    assert transport.requests == []


async def test_pending_expectations_wait_then_expire() -> None:
    sync, _, scale, _ = make_sync(cloneset(template="not an object"))
    scale.expect("ns/web", CREATE, "web-abcde")
    result = await sync.reconcile(ReconcileRequest("ns", "web"))
    assert result is not None and result.requeue_after is not None and result.requeue_after > 0
    sync.expectations_timeout = 0.0
    # Expired: the reconcile goes on (and meets the malformed template).
    assert await sync.reconcile(ReconcileRequest("ns", "web")) == Result(requeue=True)
    assert scale.satisfied("ns/web")[0]


async def test_run_concurrently_bounds_in_flight_calls_and_keeps_order() -> None:
    in_flight = 0
    peak = 0

    async def work(value: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0)
        in_flight -= 1
        return value * 2

    calls = [functools.partial(work, i) for i in range(10)]
    assert await run_concurrently(calls, 3) == [i * 2 for i in range(10)]
    assert peak == 3


async def test_run_concurrently_finishes_every_call_then_raises_the_first_failure() -> None:
    done: list[int] = []

    async def work(value: int) -> int:
        await asyncio.sleep(0)
        if value in (2, 4):
            raise ValueError(f"bad {value}")
        done.append(value)
        return value

    with pytest.raises(ValueError, match="bad 2"):
        await run_concurrently([functools.partial(work, i) for i in range(6)], 2)
    assert sorted(done) == [0, 1, 3, 5]
