"""``retry_on_conflict`` / ``retry_on_error``: client-go's util/retry over wait.ExponentialBackoff
(k8s.io/client-go/util/retry/util.go, k8s.io/apimachinery/pkg/util/wait/backoff.go)."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop.client import Conflict, NotFound
from kubeloop.runtime.retry import DEFAULT_BACKOFF, DEFAULT_RETRY, Backoff, retry_on_conflict, retry_on_error


def conflict() -> Conflict:
    return Conflict(code=409, reason="Conflict", message="the object has been modified")


def not_found() -> NotFound:
    return NotFound(code=404, reason="NotFound", message="gone")


class Script:
    """An attempt failing with the scripted errors in turn, then answering ``"done"``."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def run(backoff: Backoff, script: Script, rand: float = 0.0) -> tuple[str | type[Exception], list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(round(seconds, 9))

    async def go() -> str | type[Exception]:
        try:
            return await retry_on_conflict(backoff, script, sleep=sleep, rand=lambda: rand)
        except Exception as exc:
            return type(exc)

    return asyncio.run(go()), slept


@pytest.mark.parametrize(
    ("backoff", "errors", "rand", "outcome", "calls", "slept"),
    [
        # DefaultRetry: five attempts 10 ms apart (plus up to 10% jitter).
        (DEFAULT_RETRY, 0, 0.0, "done", 1, []),
        (DEFAULT_RETRY, 1, 0.0, "done", 2, [0.01]),
        (DEFAULT_RETRY, 4, 0.0, "done", 5, [0.01] * 4),
        (DEFAULT_RETRY, 5, 0.0, Conflict, 5, [0.01] * 4),
        (DEFAULT_RETRY, 9, 0.0, Conflict, 5, [0.01] * 4),
        (DEFAULT_RETRY, 2, 1.0, "done", 3, [0.011, 0.011]),
        # DefaultBackoff: four attempts, the wait growing five-fold.
        (DEFAULT_BACKOFF, 9, 0.0, Conflict, 4, [0.01, 0.05, 0.25]),
        (DEFAULT_BACKOFF, 9, 0.5, Conflict, 4, [0.0105, 0.0525, 0.2625]),
        # The ReplicaSet's status write: one retry, at once.
        (Backoff(steps=2, duration=0), 1, 0.0, "done", 2, []),
        (Backoff(steps=2, duration=0), 2, 0.0, Conflict, 2, []),
        (Backoff(steps=1, duration=1), 1, 0.0, Conflict, 1, []),
        # Reaching the cap ends the steps after that sleep (upstream's delay()).
        (Backoff(steps=5, duration=1, factor=3, cap=5), 9, 0.0, Conflict, 2, [1, 3]),
        (Backoff(steps=5, duration=1, factor=3, cap=5), 1, 0.0, "done", 2, [1]),
    ],
)
def test_retry_on_conflict(backoff: Backoff, errors: int, rand: float, outcome: object, calls: int,
                           slept: list[float]) -> None:
    script = Script(*(conflict() for _ in range(errors)))
    assert run(backoff, script, rand) == (outcome, slept)
    assert script.calls == calls


def test_other_errors_are_not_retried() -> None:
    script = Script(conflict(), not_found())
    assert run(DEFAULT_RETRY, script) == (NotFound, [0.01])
    assert script.calls == 2


def test_on_error_retries_what_it_is_told_to() -> None:
    script = Script(not_found(), not_found())

    async def go() -> str:
        return await retry_on_error(DEFAULT_RETRY, lambda exc: isinstance(exc, NotFound), script,
                                    sleep=lambda _: asyncio.sleep(0))

    assert asyncio.run(go()) == "done"
    assert script.calls == 3


def test_a_backoff_without_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one step"):
        asyncio.run(retry_on_conflict(Backoff(steps=0, duration=1), Script()))
