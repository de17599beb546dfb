"""The rate-limiting queue: upstream's case restated, and its wiring to the delaying queue."""

from __future__ import annotations

from kubeloop.runtime.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue
from kubeloop.testing.clock import FakeClock

MS = 0.001


class _RecordingQueue(RateLimitingQueue[str]):
    """Records the delays `add_rate_limited` asks for instead of parking the items."""

    def __init__(self) -> None:
        super().__init__(ItemExponentialFailureRateLimiter(1 * MS, 1))
        self.requested: list[tuple[str, float]] = []

    def add_after(self, item: str, seconds: float) -> None:
        self.requested.append((item, seconds))


def test_rate_limited_adds_ask_for_the_limiters_delay_per_item() -> None:
    queue = _RecordingQueue()
    queue.add_rate_limited("one")
    queue.add_rate_limited("one")
    assert queue.num_requeues("one") == 2
    queue.add_rate_limited("two")
    queue.add_rate_limited("two")
    queue.forget("one")
    assert queue.num_requeues("one") == 0
    queue.add_rate_limited("one")
    assert queue.requested == [
        ("one", 1 * MS),
        ("one", 2 * MS),
        ("two", 1 * MS),
        ("two", 2 * MS),
        ("one", 1 * MS),
    ]


async def test_rate_limited_item_arrives_after_its_back_off(fake_clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.1, 10), clock=fake_clock
    )
    queue.add_rate_limited("key")
    fake_clock.step(0.099)
    assert len(queue) == 0
    fake_clock.step(0.001)
    assert len(queue) == 1
    assert await queue.get() == ("key", False)
    queue.add_rate_limited("key")  # the second failure waits 0.2 s
    queue.done("key")
    fake_clock.step(0.199)
    assert len(queue) == 0
    fake_clock.step(0.001)
    assert len(queue) == 1


def test_forget_does_not_remove_a_waiting_item(fake_clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(1, 10), clock=fake_clock)
    queue.add_rate_limited("key")
    queue.forget("key")
    fake_clock.step(1)
    assert len(queue) == 1


def test_the_limiter_counts_a_failure_even_after_shutdown(fake_clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(1, 10), clock=fake_clock)
    queue.shutdown()
    queue.add_rate_limited("key")
    assert queue.num_requeues("key") == 1
    fake_clock.step(5)
    assert len(queue) == 0
