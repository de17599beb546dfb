"""Cron schedules as CronJobs accept them: five fields or a ``@`` descriptor.

The parse errors are those of the library kube-apiserver validates ``spec.schedule`` with
(robfig/cron v3 ``ParseStandard``), so a rejected schedule reads as it does upstream.
:func:`schedule_errors` returns them (empty when the schedule parses).
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# (name, minimum, maximum, names) per field, in schedule order.
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 6, _DAYS),
)
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_DURATION = re.compile(r"^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$")


class CronError(ValueError):
    """A schedule the cron parser refuses; the message is the parser's."""


def _atoi(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    number = int(text)
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _int_or_name(text: str, names: dict[str, int]) -> int:
    if names and text.lower() in names:
        return names[text.lower()]
    return _atoi(text)


def _check_range(expr: str, minimum: int, maximum: int, names: dict[str, int]) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = minimum, maximum
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 2:
        if _atoi(range_and_step[1]) == 0:
            raise CronError(f"step of range should be a positive number: {expr}")
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    if start < minimum:
        raise CronError(f"beginning of range ({start}) below minimum ({minimum}): {expr}")
    if end > maximum:
        raise CronError(f"end of range ({end}) above maximum ({maximum}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")


def parse_schedule(schedule: str) -> None:
    """Raise :class:`CronError` unless ``schedule`` is a standard cron schedule."""
    if not schedule:
        raise CronError("empty spec string")
    text = schedule
    if text.startswith(("TZ=", "CRON_TZ=")):
        head, _, text = text.partition(" ")
        text = text.strip()
        zone = head.split("=", 1)[1]
        if not valid_zone(zone):
            raise CronError(f"provided bad location {zone}: unknown time zone {zone}")
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return
        if text.startswith("@every "):
            duration = text[len("@every "):]
            if not _DURATION.match(duration):
                raise CronError(f"failed to parse duration {text}: time: invalid duration {_go_quote(duration)}")
            return
        raise CronError(f"unrecognized descriptor: {text}")
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for field_text, (minimum, maximum, names) in zip(fields, _FIELDS, strict=True):
        for expr in field_text.split(","):
            _check_range(expr, minimum, maximum, names)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def valid_zone(zone: str) -> bool:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def schedule_errors(schedule: str) -> list[str]:
    try:
        parse_schedule(schedule)
    except CronError as error:
        return [str(error)]
    return []
