import pytest

from kubeloop.client import TokenBucket
from kubeloop.client._ratelimit import new_rate_limiter


def test_burst_is_free_then_requests_are_spaced_by_one_over_qps() -> None:
    bucket = TokenBucket(qps=10, burst=3, now=0.0)
    delays = [bucket.reserve(0.0) for _ in range(6)]
    assert delays == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3])


def test_tokens_refill_over_time_up_to_burst() -> None:
    bucket = TokenBucket(qps=2, burst=2, now=0.0)
    assert bucket.reserve(0.0) == 0.0
    assert bucket.reserve(0.0) == 0.0
    assert bucket.reserve(0.0) == pytest.approx(0.5)
    # The reservation above is paid back at t=0.5; at t=10 the bucket is full again, not 19.
    assert bucket.tokens(10.0) == pytest.approx(2.0)
    assert [bucket.reserve(10.0) for _ in range(3)] == pytest.approx([0.0, 0.0, 0.5])


def test_partial_refill() -> None:
    bucket = TokenBucket(qps=4, burst=1, now=0.0)
    assert bucket.reserve(0.0) == 0.0
    assert bucket.reserve(0.125) == pytest.approx(0.125)


def test_time_going_backwards_never_adds_tokens() -> None:
    bucket = TokenBucket(qps=1, burst=1, now=5.0)
    assert bucket.reserve(5.0) == 0.0
    assert bucket.reserve(4.0) == pytest.approx(1.0)
    assert bucket.tokens(4.0) == pytest.approx(-1.0)


@pytest.mark.parametrize("qps", [0, -1])
def test_zero_or_negative_qps_disables_limiting(qps: float) -> None:
    assert new_rate_limiter(qps, 10, 0.0) is None
    with pytest.raises(ValueError):
        TokenBucket(qps, 10, 0.0)


def test_limiter_for_positive_qps() -> None:
    bucket = new_rate_limiter(5, 0, 0.0)
    assert bucket is not None
    assert bucket.burst == 1
    assert bucket.qps == 5.0
