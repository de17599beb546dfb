"""Rate limiters: upstream's tables restated, plus the token bucket's arithmetic and edges."""

from __future__ import annotations

import math

import pytest

from kubeloop.runtime.workqueue import (
    INFINITE_DELAY,
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from kubeloop.testing.clock import FakeClock

MS = 0.001


def test_exponential_doubles_per_item_and_forget_resets() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1 * MS, 1)
    assert [limiter.when("one") for _ in range(5)] == [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [1 * MS, 2 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1 * MS


@pytest.mark.parametrize(
    ("base", "cap", "earlier_calls", "expected"),
    [
        (1 * MS, 1000, 5, 32 * MS),
        (1 * MS, 1000, 1000, 1000),  # 2**1000 ms is far past any duration: the cap, no overflow
        (60, 1000 * 3600, 2, 240),
        (60, 1000 * 3600, 1000, 1000 * 3600),
        (1 * MS, 1000, 1100, 1000),  # past float range (2.0**1024 overflows): still the cap
    ],
)
def test_exponential_never_overflows(base: float, cap: float, earlier_calls: int, expected: float) -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(base, cap)
    for _ in range(earlier_calls):
        limiter.when("one")
    assert limiter.when("one") == expected


def test_exponential_just_below_the_largest_duration_is_not_capped() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1e-9, math.inf)
    for _ in range(62):
        limiter.when("one")
    assert limiter.when("one") == 2**62 / 1e9
    assert limiter.when("one") == math.inf, "2**63 ns is past the largest Go duration"


def test_fast_slow_switches_after_the_fast_attempts() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(5 * MS, 10, 3)
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 10, 10]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_max_of_returns_the_longest_delay_and_feeds_every_limiter() -> None:
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(5 * MS, 3, 3)
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1 * MS, 1)
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 3, 3]
    assert limiter.num_requeues("one") == 5
    assert exponential.num_requeues("one") == 5, "every limiter records every failure"
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert exponential.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


class _StepLimiter:
    """Returns 5 ms for its first `fast_calls` calls overall, then 1000 s; counts per item."""

    def __init__(self, fast_calls: int) -> None:
        self.fast_calls = fast_calls
        self.calls = 0
        self.requeues: dict[int, int] = {}

    def when(self, item: int) -> float:
        self.calls += 1
        self.requeues[item] = self.requeues.get(item, 0) + 1
        return 5 * MS if self.calls <= self.fast_calls else 1000

    def forget(self, item: int) -> None:
        self.requeues.pop(item, None)

    def num_requeues(self, item: int) -> int:
        return self.requeues.get(item, 0)


def test_with_max_wait_caps_the_delay_and_forwards_the_rest() -> None:
    inner = _StepLimiter(100)
    limiter = WithMaxWaitRateLimiter(inner, 500)
    assert [limiter.when(item) for item in range(100)] == [5 * MS] * 100
    assert [limiter.when(item) for item in range(100, 200)] == [500] * 100
    assert limiter.num_requeues(7) == 1
    limiter.forget(7)
    assert limiter.num_requeues(7) == 0


def test_bucket_grants_the_burst_then_spaces_calls_by_one_over_qps(fake_clock: FakeClock) -> None:
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10, 100, clock=fake_clock)
    assert [limiter.when("x") for _ in range(100)] == [0.0] * 100
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0.1, 0.2, 0.3])
    assert limiter.num_requeues("x") == 0
    limiter.forget("x")


def test_bucket_refills_with_time_up_to_the_burst(fake_clock: FakeClock) -> None:
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10, 2, clock=fake_clock)
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0, 0, 0.1])
    fake_clock.step(0.1)  # pays the debt: the bucket is at 0
    assert limiter.when("x") == pytest.approx(0.1)
    fake_clock.step(60)  # refills to the burst, not beyond
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0, 0, 0.1])


@pytest.mark.parametrize(
    ("qps", "burst", "expected"),
    [
        (math.inf, 0, [0.0, 0.0, 0.0]),  # an infinite rate never waits, whatever the burst
        (10, 0, [INFINITE_DELAY] * 3),  # no token can ever be granted
        (0, 2, [0.0, 0.0, INFINITE_DELAY]),  # the initial burst, then never
    ],
)
def test_bucket_edges(fake_clock: FakeClock, qps: float, burst: int, expected: list[float]) -> None:
    limiter: BucketRateLimiter[str] = BucketRateLimiter(qps, burst, clock=fake_clock)
    assert [limiter.when("x") for _ in range(3)] == expected


def test_bucket_refused_reservation_takes_no_token(fake_clock: FakeClock) -> None:
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10, 0, clock=fake_clock)
    limiter.when("x")
    assert limiter._tokens == 0


def test_bucket_tolerates_a_clock_going_backwards(fake_clock: FakeClock) -> None:
    fake_clock.set_time(100)
    limiter: BucketRateLimiter[str] = BucketRateLimiter(1, 1, clock=fake_clock)
    assert limiter.when("x") == 0
    fake_clock.set_time(50)
    assert limiter.when("x") == pytest.approx(1.0), "going back refills nothing"


def test_default_controller_limiter_is_exponential_maxed_with_the_bucket(fake_clock: FakeClock) -> None:
    limiter: MaxOfRateLimiter[object] = default_controller_rate_limiter(clock=fake_clock)
    assert [limiter.when("one") for _ in range(3)] == [5 * MS, 10 * MS, 20 * MS]
    for item in range(97):
        limiter.when(item)
    # 100 tokens are spent; the bucket now dominates a fresh item's 5 ms.
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("one") == 3


def test_default_item_based_limiter_is_exponential_from_one_millisecond() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = default_item_based_rate_limiter()
    assert (limiter.base_delay, limiter.max_delay) == (1 * MS, 1000)
