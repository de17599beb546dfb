"""The one polling helper of the tests: what it returns, what it retries, how it fails."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop.testing.polling import PollTimeout, eventually, eventually_blocking


class Countdown:
    """A check that is falsy ``n`` times, then returns ``value``; optionally raising instead."""

    def __init__(self, n: int, value: object = "done", error: BaseException | None = None) -> None:
        self.n = n
        self.value = value
        self.error = error
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        if self.calls > self.n:
            return self.value
        if self.error is not None:
            raise self.error
        return 0


async def test_eventually_returns_the_first_truthy_value_of_a_plain_check() -> None:
    check = Countdown(3, value={"ready": 1})
    assert await eventually(check, interval=0) == {"ready": 1}
    assert check.calls == 4


async def test_eventually_awaits_a_coroutine_check() -> None:
    check = Countdown(2, value=7)

    async def async_check() -> object:
        return check()

    assert await eventually(async_check, interval=0) == 7
    assert check.calls == 3


async def test_eventually_fails_naming_what_it_waited_for_and_the_last_value() -> None:
    with pytest.raises(PollTimeout, match=r"waiting for the answer; last value \[\]") as info:
        await eventually(lambda: [], timeout=0.05, interval=0.01, what="the answer")
    # Both what pytest reports as a failed expectation and what the cluster's waits always raised.
    assert isinstance(info.value, AssertionError)
    assert isinstance(info.value, TimeoutError)


async def test_eventually_cancels_a_check_that_hangs_at_the_deadline() -> None:
    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(PollTimeout, match="hangs"):
        await eventually(hangs, timeout=0.05)


async def test_eventually_retries_the_named_exceptions_and_raises_others() -> None:
    check = Countdown(2, error=ConnectionError("starting"))
    assert await eventually(check, interval=0, retry_on=(ConnectionError,)) == "done"
    with pytest.raises(ConnectionError):
        await eventually(Countdown(2, error=ConnectionError("starting")), interval=0)


async def test_eventually_reports_a_retried_exception_as_the_last_value() -> None:
    with pytest.raises(PollTimeout, match="last value ConnectionError"):
        await eventually(Countdown(10**9, error=ConnectionError("down")), timeout=0.05, interval=0.01,
                         retry_on=(ConnectionError,))


def test_eventually_blocking_returns_retries_and_fails_alike() -> None:
    check = Countdown(3, value="placed")
    assert eventually_blocking(check, interval=0) == "placed"
    assert check.calls == 4
    flaky = Countdown(1, error=OSError("refused"))
    assert eventually_blocking(flaky, interval=0, retry_on=(OSError,)) == "done"
    with pytest.raises(OSError, match="refused"):
        eventually_blocking(Countdown(1, error=OSError("refused")), interval=0)
    with pytest.raises(PollTimeout, match="waiting for nothing; last value None"):
        eventually_blocking(lambda: None, timeout=0.05, interval=0.01, what="nothing")
