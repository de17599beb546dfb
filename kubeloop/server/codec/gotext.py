"""Go's text forms of kube's time and duration types, as their JSON marshalling writes them.

``metav1.Time`` is RFC 3339 in UTC to the second (``Time.MarshalJSON``), ``metav1.MicroTime`` the
same with six fraction digits (``RFC3339Micro``), ``metav1.Duration`` Go's ``time.Duration``
text (``"1h0m0s"``, ``"1.5s"``, ``"300ms"``). Used by the protobuf codecs, whose messages carry
seconds, nanoseconds and nanosecond counts.
"""

from __future__ import annotations

import calendar
import datetime
import functools
import re

ZERO_SECONDS = -62135596800
"""Go's zero ``time.Time`` as Unix seconds (``IsZero``: JSON writes it as ``null``)."""

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_TIME_TEXT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                        r"(?:([Zz])|([+-])(\d{2}):(\d{2}))$")


@functools.lru_cache(maxsize=8192)
def parse_time(text: str) -> tuple[int, int]:
    """RFC 3339 text -> (Unix seconds, nanoseconds), as Go's ``time.Parse`` reads it.

    Cached: the objects of one list share most of their timestamps.
    """
    found = _TIME_TEXT.match(text)
    if found is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = found.groups()
    seconds = calendar.timegm((int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, 0))
    if sign:
        offset = int(off_h) * 3600 + int(off_m) * 60
        seconds += -offset if sign == "+" else offset
    nanos = int((fraction or "0")[:9].ljust(9, "0"))
    return seconds, nanos


@functools.lru_cache(maxsize=8192)
def format_time(seconds: int, nanos: int, micro: bool) -> str:
    """Go's ``Time.MarshalJSON`` (RFC 3339, seconds, UTC) or ``MicroTime``'s (6 fraction digits)."""
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    text = (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}")
    if micro:
        text += f".{nanos // 1000:06d}"
    return text + "Z"


_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
                   "h": 3600 * 10**9}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Go's ``time.ParseDuration``: ``"1h0m0s"`` -> nanoseconds."""
    body = text
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0
    total = 0
    position = 0
    for part in _DURATION_PART.finditer(body):
        if part.start() != position:
            break
        number, unit = part.groups()
        whole, _, fraction = number.partition(".")
        scale = _DURATION_UNITS[unit]
        total += int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
        position = part.end()
    if position != len(body) or not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String``: ``3600000000000`` -> ``"1h0m0s"``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    value = abs(nanos)
    if value < 10**9:
        for unit, scale in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if value >= scale:
                return sign + _fraction(value, scale) + unit
    seconds_text = _fraction(value % (60 * 10**9), 10**9) + "s"
    minutes = value // (60 * 10**9)
    if minutes == 0:
        return sign + seconds_text
    hours, minutes = divmod(minutes, 60)
    if hours == 0:
        return f"{sign}{minutes}m{seconds_text}"
    return f"{sign}{hours}h{minutes}m{seconds_text}"


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    if rest == 0:
        return str(whole)
    digits = len(str(scale)) - 1
    return f"{whole}.{rest:0{digits}d}".rstrip("0")
