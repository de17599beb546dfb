"""Human-readable ages, as every ``kubectl get`` column shows them ("5m", "3h12m", "2d").

:func:`human_duration` is apimachinery's ``duration.HumanDuration``: exact seconds below two
minutes, then minutes with seconds below ten minutes, whole minutes below three hours, hours
with minutes below eight hours, whole hours below two days, days with hours below eight days,
whole days below two years, years with days below eight years, whole years after that. Up to a
second in the future still reads "0s" (clock skew between machines); further is "<invalid>".
"""

from __future__ import annotations

import math
from datetime import datetime

from kubeloop.api.meta import parse_time

UNKNOWN = "<unknown>"
"""The age of a missing or zero timestamp."""


def human_duration(seconds: float) -> str:
    """``seconds`` as upstream prints a duration."""
    whole = math.trunc(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


def parse_timestamp(value: object) -> datetime | None:
    """An RFC 3339 timestamp from an object, ``None`` when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def age(timestamp: object, now: datetime) -> str:
    """Time since ``timestamp`` (an RFC 3339 string) at ``now``, ``<unknown>`` when there is none
    (upstream's ``translateTimestampSince`` of a zero time)."""
    moment = parse_timestamp(timestamp)
    if moment is None:
        return UNKNOWN
    return human_duration((now - moment).total_seconds())
