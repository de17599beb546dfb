"""The simulated container log: options, container choice, the story per state, rendering."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server import podlogs

NOW = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)


def pod(*statuses: dict[str, Any], containers: tuple[str, ...] = ("app",),
        init: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": "p", "uid": "u"},
            "spec": {"nodeName": "n", "containers": [{"name": c, "image": "nginx"} for c in containers],
                     **({"initContainers": [{"name": c, "image": "busybox"} for c in init]} if init else {})},
            "status": {"containerStatuses": list(statuses)}}


RUNNING = {"name": "app", "image": "nginx:1.26", "restartCount": 2,
           "state": {"running": {"startedAt": "2026-11-27T11:59:00Z"}},
           "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-11-27T11:58:00Z",
                                        "finishedAt": "2026-11-27T11:58:30Z"}}}


@pytest.mark.parametrize(("query", "message"), [
    ({"tailLines": "-1"},
     'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
    ({"limitBytes": "0"}, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0'),
    ({"sinceSeconds": "0"}, 'PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0'),
    ({"sinceSeconds": "5", "sinceTime": "2026-11-27T11:00:00Z"},
     'PodLogOptions "p" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'),
])
def test_invalid_options_are_422_on_pod_log_options(query: dict[str, str], message: str) -> None:
    with pytest.raises(ApiError) as raised:
        podlogs.log_options("p", query)
    assert (raised.value.code, raised.value.reason, raised.value.message) == (422, "Invalid", message)


def test_unparsable_options_are_400() -> None:
    with pytest.raises(ApiError) as raised:
        podlogs.log_options("p", {"tailLines": "x"})
    assert raised.value.code == 400 and "strconv.ParseInt" in raised.value.message


@pytest.mark.parametrize(("containers", "init", "requested", "expected"), [
    (("app",), (), "", "app"),
    (("app", "side"), (), "side", "side"),
    (("app",), ("setup",), "setup", "setup"),
    (("app", "side"), ("setup",), "", "a container name must be specified for pod p, choose one of: [setup app side]"),
    (("app",), (), "nope", "container nope is not valid for pod p"),
])
def test_container_choice_as_log_location(containers: tuple[str, ...], init: tuple[str, ...], requested: str,
                                          expected: str) -> None:
    subject = pod(containers=containers, init=init)
    if " " not in expected:
        assert podlogs.container_name(subject, requested) == expected
        return
    with pytest.raises(ApiError) as raised:
        podlogs.container_name(subject, requested)
    assert (raised.value.code, raised.value.message) == (400, expected)


def test_running_container_tells_its_start_and_the_previous_one_its_exit() -> None:
    current = podlogs.container_log(pod(RUNNING), "app", previous=False)
    assert [line.text for line in current.lines] == [
        'kubeloop: container "app" started (image "nginx:1.26", restart 2)']
    assert not current.ended
    previous = podlogs.container_log(pod(RUNNING), "app", previous=True)
    assert [line.text for line in previous.lines] == [
        'kubeloop: container "app" started (image "nginx:1.26", restart 1)',
        'kubeloop: container "app" exited with code 1 (Error)']
    assert previous.ended


def test_terminated_container_ends_with_its_exit_code() -> None:
    done = {"name": "app", "image": "nginx", "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-11-27T11:00:00Z",
                                     "finishedAt": "2026-11-27T11:00:05Z"}}}
    log = podlogs.container_log(pod(done), "app", previous=False)
    assert [line.text for line in log.lines][-1] == 'kubeloop: container "app" exited with code 0 (Completed)'
    assert log.ended


@pytest.mark.parametrize(("status", "previous", "message"), [
    ({"state": {"waiting": {"reason": "ImagePullBackOff"}}}, False,
     'container "app" in pod "p" is waiting to start: trying and failing to pull image'),
    ({"state": {"waiting": {"reason": "ErrImagePull"}}}, False,
     'container "app" in pod "p" is waiting to start: image can\'t be pulled'),
    ({"state": {"waiting": {"reason": "ContainerCreating"}}}, False,
     'container "app" in pod "p" is waiting to start: ContainerCreating'),
    ({}, False, 'container "app" in pod "p" is waiting to start - no logs yet'),
    ({"state": {"running": {"startedAt": "2026-11-27T11:00:00Z"}}}, True,
     'previous terminated container "app" in pod "p" not found'),
])
def test_the_kubelets_refusals(status: dict[str, Any], previous: bool, message: str) -> None:
    with pytest.raises(ApiError) as raised:
        podlogs.container_log(pod({"name": "app", **status}), "app", previous=previous)
    assert (raised.value.code, raised.value.reason, raised.value.message) == (400, "BadRequest", message)


LINES = [podlogs.LogLine(datetime(2026, 11, 27, 11, 0, i, 250000, tzinfo=UTC), f"line {i}") for i in range(4)]


@pytest.mark.parametrize(("options", "expected"), [
    (podlogs.LogOptions(), b"line 0\nline 1\nline 2\nline 3\n"),
    (podlogs.LogOptions(tail_lines=2), b"line 2\nline 3\n"),
    (podlogs.LogOptions(tail_lines=0), b""),
    (podlogs.LogOptions(limit_bytes=9), b"line 0\nli"),
    (podlogs.LogOptions(timestamps=True, tail_lines=1), b"2026-11-27T11:00:03.250000000Z line 3\n"),
    (podlogs.LogOptions(since_time=datetime(2026, 11, 27, 11, 0, 2, tzinfo=UTC)), b"line 2\nline 3\n"),
    (podlogs.LogOptions(since_seconds=3600 - 2), b"line 2\nline 3\n"),
])
def test_render_applies_the_options(options: podlogs.LogOptions, expected: bytes) -> None:
    assert podlogs.render(LINES, options, datetime(2026, 11, 27, 12, 0, 0, 250000, tzinfo=UTC)) == expected


def test_unreadable_stored_times_are_left_out_not_fatal() -> None:
    broken = {"name": "app", "image": "x", "state": {"running": {"startedAt": "not a time"}}}
    assert podlogs.container_log(pod(broken), "app", previous=False).lines == []
