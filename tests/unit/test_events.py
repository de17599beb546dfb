from datetime import UTC, datetime
from typing import Any

from kubeloop.runtime.events import EventRecorder

Obj = dict[str, Any]
POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "web-1", "namespace": "ns", "uid": "u1"}}


class NotFound(Exception):
    code = 404


class FakeSink:
    def __init__(self) -> None:
        self.events: dict[str, Obj] = {}
        self.calls: list[tuple[str, str, Obj]] = []
        self.rv = 0
        self.lose_next_patch = False

    async def create(self, namespace: str, event: Obj) -> Obj:
        self.calls.append(("create", namespace, event))
        self.rv += 1
        stored = {**event, "metadata": {**event["metadata"], "resourceVersion": str(self.rv)}}
        self.events[event["metadata"]["name"]] = stored
        return stored

    async def patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        self.calls.append(("patch", namespace, patch))
        if self.lose_next_patch:
            self.lose_next_patch = False
            raise NotFound()
        self.rv += 1
        stored = {**self.events[name], **patch}
        stored["metadata"] = {**stored["metadata"], "resourceVersion": str(self.rv)}
        self.events[name] = stored
        return stored


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds

    def call_at(self, deadline: float, callback: Any) -> Any:
        raise AssertionError("unused")


def recorder(sink: FakeSink, clock: Clock | None = None) -> EventRecorder:
    fixed = datetime(2030, 1, 1, tzinfo=UTC)
    return EventRecorder(sink, "replicaset-controller", host="node", clock=clock or Clock(), wall=lambda: fixed)


async def drain(rec: EventRecorder) -> None:
    await rec.start()
    await rec.stop()


async def test_first_event_is_created_with_upstream_fields() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    rec.event(POD, "Normal", "Scheduled", "assigned")
    await drain(rec)
    kind, namespace, event = sink.calls[0]
    assert (kind, namespace) == ("create", "ns")
    ref = {"kind": "Pod", "namespace": "ns", "name": "web-1", "uid": "u1", "apiVersion": "v1"}
    assert event["involvedObject"] == ref
    assert event["metadata"]["name"].startswith("web-1.")
    assert event["count"] == 1 and event["type"] == "Normal" and event["reason"] == "Scheduled"
    assert event["source"] == {"component": "replicaset-controller", "host": "node"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2030-01-01T00:00:00Z"


async def test_repeats_patch_the_count() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    for _ in range(3):
        rec.event(POD, "Normal", "Pulled", "image pulled")
    await drain(rec)
    assert [c[0] for c in sink.calls] == ["create", "patch", "patch"]
    assert sink.calls[2][2]["count"] == 3
    assert len(sink.events) == 1 and next(iter(sink.events.values()))["count"] == 3


async def test_patch_of_a_vanished_event_creates_it_again() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    rec.event(POD, "Normal", "Pulled", "image pulled")
    rec.event(POD, "Normal", "Pulled", "image pulled")
    sink.lose_next_patch = True
    await drain(rec)
    assert [c[0] for c in sink.calls] == ["create", "patch", "create"]
    assert "resourceVersion" not in sink.calls[2][2]["metadata"]
    assert sink.calls[2][2]["count"] == 2


async def test_similar_events_are_aggregated_from_the_tenth_message() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    for i in range(12):
        rec.event(POD, "Warning", "FailedCreate", f"error {i}")
    await drain(rec)
    messages = [c[2].get("message") for c in sink.calls]
    assert messages[:9] == [f"error {i}" for i in range(9)]
    assert messages[9] == "(combined from similar events): error 9"
    # Later similar events update the combined one.
    assert [c[0] for c in sink.calls[9:]] == ["create", "patch", "patch"]


async def test_spam_filter_allows_a_burst_of_25() -> None:
    sink = FakeSink()
    clock = Clock()
    rec = recorder(sink, clock)
    for i in range(30):
        rec.event(POD, "Normal", f"Reason{i}", "x")
    await drain(rec)
    assert len(sink.calls) == 25 and rec.dropped == 5
    clock.t += 300
    rec.event(POD, "Normal", "Later", "x")
    await drain(rec)
    assert len(sink.calls) == 26


async def test_bad_type_is_dropped() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    rec.event(POD, "Info", "X", "y")
    await drain(rec)
    assert sink.calls == []


async def test_objects_without_kind_take_it_from_the_caller() -> None:
    sink = FakeSink()
    rec = recorder(sink)
    rec.event({"metadata": {"name": "web", "namespace": "ns", "uid": "d"}}, "Normal", "Scaled", "m",
              kind="Deployment", api_version="apps/v1")
    await drain(rec)
    assert sink.calls[0][2]["involvedObject"]["kind"] == "Deployment"


async def test_a_managers_recorders_name_no_host_as_kube_controller_managers() -> None:
    from kubeloop.client import ApiClient, ClientConfig
    from kubeloop.runtime.manager import Manager

    async with ApiClient(ClientConfig(server="https://127.0.0.1:1")) as client:
        manager_recorder = Manager(client).recorder("deployment-controller")
    assert manager_recorder.host == ""
    sink = FakeSink()
    rec = EventRecorder(sink, "deployment-controller", clock=Clock(), wall=lambda: datetime(2030, 1, 1, tzinfo=UTC))
    rec.event(POD, "Normal", "ScalingReplicaSet", "Scaled up")
    await drain(rec)
    event = sink.calls[0][2]
    assert event["source"] == {"component": "deployment-controller"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("deployment-controller", "")
