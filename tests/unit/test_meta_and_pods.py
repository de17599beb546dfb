from datetime import UTC, datetime

import pytest

from kubeloop.api.meta import (
    controller_of,
    format_micro_time,
    format_time,
    object_key,
    parse_time,
    split_key,
)
from kubeloop.api.pods import is_pod_active, is_pod_available, is_pod_ready


def test_keys_round_trip() -> None:
    assert object_key({"metadata": {"namespace": "ns", "name": "a"}}) == "ns/a"
    assert object_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("node-1") == ("", "node-1")
    with pytest.raises(ValueError):
        split_key("a/b/c")


def test_controller_of_picks_the_controller_reference() -> None:
    refs = [{"uid": "1", "name": "x"}, {"uid": "2", "name": "y", "controller": True}]
    assert controller_of({"metadata": {"ownerReferences": refs}}) == refs[1]
    assert controller_of({"metadata": {}}) is None


def test_times() -> None:
    moment = datetime(2021, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert format_time(moment) == "2021-01-02T03:04:05Z"
    assert format_micro_time(moment) == "2021-01-02T03:04:05.123456Z"
    assert parse_time("2021-01-02T03:04:05.123456789Z") == moment
    assert parse_time("2021-01-02T05:04:05+02:00") == moment.replace(microsecond=0)
    assert parse_time("") is None


def _pod(ready: str, since: str, phase: str = "Running") -> dict[str, object]:
    return {
        "metadata": {"name": "p"},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]},
    }


def test_availability_needs_min_ready_seconds_strictly_elapsed() -> None:
    now = datetime(2021, 1, 1, 0, 0, 10, tzinfo=UTC)
    pod = _pod("True", "2021-01-01T00:00:00Z")
    assert is_pod_ready(pod)
    assert is_pod_available(pod, 0, now)
    assert is_pod_available(pod, 9, now)
    assert not is_pod_available(pod, 10, now)
    assert not is_pod_available(_pod("False", "2021-01-01T00:00:00Z"), 0, now)


def test_active() -> None:
    assert is_pod_active(_pod("True", ""))
    assert not is_pod_active(_pod("True", "", phase="Failed"))
    deleting = _pod("True", "")
    deleting["metadata"] = {"name": "p", "deletionTimestamp": "2021-01-01T00:00:00Z"}
    assert not is_pod_active(deleting)
