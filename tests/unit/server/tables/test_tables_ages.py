"""Human-readable ages (apimachinery's HumanDuration) and the age of a timestamp."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubeloop.server.tables import age, human_duration

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR
YEAR = 365 * DAY


@pytest.mark.parametrize(("seconds", "expected"), [
    (-3, "<invalid>"),
    (-2, "<invalid>"),
    (-1.5, "0s"),
    (-1, "0s"),
    (0, "0s"),
    (0.9, "0s"),
    (1, "1s"),
    (59, "59s"),
    (60, "60s"),
    (119, "119s"),
    (2 * MINUTE, "2m"),
    (2 * MINUTE + 1, "2m1s"),
    (9 * MINUTE + 59, "9m59s"),
    (10 * MINUTE, "10m"),
    (10 * MINUTE + 59, "10m"),
    (3 * HOUR - 1, "179m"),
    (3 * HOUR, "3h"),
    (3 * HOUR + 12 * MINUTE, "3h12m"),
    (8 * HOUR - 1, "7h59m"),
    (8 * HOUR, "8h"),
    (48 * HOUR - 1, "47h"),
    (2 * DAY, "2d"),
    (2 * DAY + HOUR, "2d1h"),
    (8 * DAY - 1, "7d23h"),
    (8 * DAY, "8d"),
    (2 * YEAR - 1, "729d"),
    (2 * YEAR, "2y"),
    (2 * YEAR + DAY, "2y1d"),
    (8 * YEAR - 1, "7y364d"),
    (8 * YEAR, "8y"),
    (20 * YEAR + 100 * DAY, "20y"),
])
def test_human_duration(seconds: float, expected: str) -> None:
    assert human_duration(seconds) == expected


NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("timestamp", "expected"), [
    ("2024-05-01T11:55:00Z", "5m"),
    ("2024-05-01T08:48:00Z", "3h12m"),
    ("2024-04-29T12:00:00Z", "2d"),
    ("2024-05-01T11:59:59.500000Z", "0s"),
    ("2024-05-01T13:59:59+02:00", "1s"),
    (None, "<unknown>"),
    ("", "<unknown>"),
    ("yesterday", "<unknown>"),
    (17, "<unknown>"),
])
def test_age_of_a_timestamp(timestamp: object, expected: str) -> None:
    assert age(timestamp, NOW) == expected
