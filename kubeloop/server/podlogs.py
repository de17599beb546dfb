"""A simulated container's log: its story, told from the pod's status.

kubeloop's kubelet runs no processes, so there is no output to read. What it does know is each
container's lifecycle, and it records all of it in the pod's status: when the current instance
started, how the previous one ended (exit code, reason), the restarts, a pull that keeps
failing. ``kubectl logs`` (``GET pods/NAME/log``) answers with that story, one line per event,
as kwok serves a configured log, so the everyday debugging loop (logs, ``--previous``, ``-f``,
``--timestamps``, ``--tail``) works against the embedded cluster.

Everything around the text is upstream's:

* options as ``PodLogOptions`` and their validation (``ValidatePodLogOptions``, 422 Invalid
  on kind ``PodLogOptions``);
* the container choice of ``pkg/registry/core/pod/strategy.go`` ``LogLocation`` (the only
  container by default; with several, 400 ``a container name must be specified for pod P,
  choose one of: [a b]``; an unknown name, 400 ``container C is not valid for pod P``); a pod
  not yet bound to a node has an empty log;
* the kubelet's refusals (``pkg/kubelet/kubelet_pods.go`` ``validateContainerLogStatus``),
  which kube-apiserver passes on as 400 BadRequest with the kubelet's text (``container "c"
  in pod "p" is waiting to start: trying and failing to pull image``, ``previous terminated
  container "c" in pod "p" not found``);
* the kubelet's line format for ``timestamps=true``: RFC 3339 with nine fractional digits
  (``pkg/kubelet/kuberuntime/logs``), then a space; ``tailLines``, ``limitBytes``,
  ``sinceSeconds`` and ``sinceTime`` applied to the lines, in that order of meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kubeloop.api.meta import parse_time
from kubeloop.api.status import ApiError, FieldError, bad_request_error, forbidden, invalid, invalid_error
from kubeloop.server.requests import optional_bool, optional_int

Obj = Mapping[str, Any]

_IMAGE_PULL_REASONS = {"ErrImagePull": "image can't be pulled",
                       "ImagePullBackOff": "trying and failing to pull image"}


@dataclass(frozen=True)
class LogOptions:
    """``PodLogOptions`` as read from the query."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: datetime | None = None


@dataclass(frozen=True)
class LogLine:
    at: datetime
    text: str


def log_options(name: str, query: Mapping[str, str]) -> LogOptions:
    """The options of a log request; 400 for unparsable values, 422 for invalid ones."""
    since_text = query.get("sinceTime")
    since_time = None
    if since_text:
        try:
            since_time = parse_time(since_text)
            if since_time is not None and since_time.tzinfo is None:
                raise ValueError(since_text)
        except ValueError:
            raise bad_request_error(f'parsing time "{since_text}" as "2006-01-02T15:04:05Z07:00": cannot parse '
                                    f'"{since_text}" as "2006"') from None
    options = LogOptions(
        container=query.get("container", ""),
        follow=bool(optional_bool(query, "follow")),
        previous=bool(optional_bool(query, "previous")),
        timestamps=bool(optional_bool(query, "timestamps")),
        tail_lines=optional_int(query, "tailLines"),
        limit_bytes=optional_int(query, "limitBytes"),
        since_seconds=optional_int(query, "sinceSeconds"),
        since_time=since_time,
    )
    errors: list[FieldError] = []
    if options.tail_lines is not None and options.tail_lines < 0:
        errors.append(invalid("tailLines", options.tail_lines, "must be greater than or equal to 0"))
    if options.limit_bytes is not None and options.limit_bytes < 1:
        errors.append(invalid("limitBytes", options.limit_bytes, "must be greater than 0"))
    if options.since_seconds is not None and options.since_time is not None:
        errors.append(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif options.since_seconds is not None and options.since_seconds < 1:
        errors.append(invalid("sinceSeconds", options.since_seconds, "must be greater than 0"))
    if errors:
        raise invalid_error("PodLogOptions", "", name, errors)
    return options


def _names(spec: Obj, key: str) -> list[str]:
    entries = spec.get(key)
    return [str(c.get("name")) for c in entries if isinstance(c, Mapping)] if isinstance(entries, list) else []


def container_name(pod: Obj, requested: str) -> str:
    """The container whose log is asked for, as upstream's ``LogLocation`` chooses it."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    name = str((pod.get("metadata") or {}).get("name", ""))
    containers = _names(spec, "containers")
    every = _names(spec, "initContainers") + containers + _names(spec, "ephemeralContainers")
    if not requested:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise bad_request_error(f"a container name must be specified for pod {name}")
        raise bad_request_error(f"a container name must be specified for pod {name}, choose one of: "
                                f"[{' '.join(every)}]")
    if requested not in every:
        raise bad_request_error(f"container {requested} is not valid for pod {name}")
    return requested


def _container_status(pod: Obj, container: str) -> Obj:
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        entries = status.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, Mapping) and entry.get("name") == container:
                return entry
    return {}


def _section(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _time(value: Any) -> datetime | None:
    """A stored timestamp, or None when absent or unreadable (a log never fails on one)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = parse_time(value)
    except ValueError:
        return None
    return None if moment is None or moment.tzinfo is None else moment.astimezone(UTC)


def _instance_lines(container: str, image: str, restart: int, started: Obj, ended: Obj | None) -> list[LogLine]:
    lines: list[LogLine] = []
    start = _time(started.get("startedAt"))
    if start is not None:
        suffix = f", restart {restart}" if restart else ""
        lines.append(LogLine(start, f'kubeloop: container "{container}" started (image "{image}"{suffix})'))
    if ended is not None:
        finish = _time(ended.get("finishedAt"))
        if finish is not None:
            reason = ended.get("reason")
            because = f" ({reason})" if reason else ""
            lines.append(LogLine(finish, f'kubeloop: container "{container}" exited with code '
                                         f'{ended.get("exitCode", 0)}{because}'))
    return lines


@dataclass(frozen=True)
class ContainerLog:
    """One container instance's log lines, and whether that instance has ended."""

    lines: list[LogLine]
    ended: bool


def container_log(pod: Obj, container: str, previous: bool) -> ContainerLog:
    """The story of the current (or previous) instance of ``container``; the kubelet's 400
    texts when there is none."""
    pod_name = str((pod.get("metadata") or {}).get("name", ""))
    status = _container_status(pod, container)
    image = str(status.get("image") or "")
    restarts = status.get("restartCount")
    restart = restarts if isinstance(restarts, int) else 0
    state, last = _section(status, "state"), _section(status, "lastState")
    last_terminated = _section(last, "terminated")
    if previous:
        if not last_terminated:
            raise ApiError(400, "BadRequest", f'previous terminated container "{container}" in pod "{pod_name}" '
                                              "not found")
        return ContainerLog(_instance_lines(container, image, max(restart - 1, 0), last_terminated,
                                            last_terminated), True)
    if "running" in state:
        return ContainerLog(_instance_lines(container, image, restart, _section(state, "running"), None), False)
    if "terminated" in state:
        terminated = _section(state, "terminated")
        return ContainerLog(_instance_lines(container, image, restart, terminated, terminated), True)
    if last_terminated:
        return ContainerLog(_instance_lines(container, image, max(restart - 1, 0), last_terminated,
                                            last_terminated), True)
    waiting = _section(state, "waiting")
    if waiting:
        reason = str(waiting.get("reason") or "")
        detail = _IMAGE_PULL_REASONS.get(reason, reason)
        raise ApiError(400, "BadRequest", f'container "{container}" in pod "{pod_name}" is waiting to start: {detail}')
    raise ApiError(400, "BadRequest", f'container "{container}" in pod "{pod_name}" is waiting to start - no logs yet')


def _stamp(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond * 1000:09d}Z"


def render(lines: Sequence[LogLine], options: LogOptions, now: datetime) -> bytes:
    """The bytes of ``lines`` as the kubelet would send them under ``options``."""
    since = options.since_time
    if options.since_seconds is not None:
        since = now - timedelta(seconds=options.since_seconds)
    chosen = [line for line in lines if since is None or line.at >= since]
    if options.tail_lines is not None:
        chosen = chosen[len(chosen) - options.tail_lines:] if options.tail_lines else []
    text = "".join(f"{_stamp(line.at)} {line.text}\n" if options.timestamps else f"{line.text}\n" for line in chosen)
    data = text.encode()
    if options.limit_bytes is not None:
        data = data[:options.limit_bytes]
    return data
