"""Polling until something holds: the one waiting helper of kubeloop's tests and test kit.

:func:`eventually` (in a coroutine) and :func:`eventually_blocking` (in a thread) call a check
every ``interval`` seconds until it returns something truthy, and return that value. After
``timeout`` seconds they raise :class:`PollTimeout`, which names what was awaited and the last
value the check returned, so a failing test says where it stopped. The check of
:func:`eventually` may be a plain function or a coroutine function; a check that hangs is
cancelled at the deadline. Exceptions of the types in ``retry_on`` count as "not yet" (a
server still starting); any other exception propagates at once.

:class:`PollTimeout` is both an ``AssertionError`` (a failed expectation, as pytest reports
it) and a ``TimeoutError`` (what :class:`~kubeloop.testing.cluster.EmbeddedCluster`'s waits
have always raised), so callers catching either keep working.

The interval only bounds how soon a change is seen; no caller asserts on elapsed time. This
plays the part of gomega's ``Eventually`` and apimachinery's ``wait.PollUntilContextTimeout``
(``pkg/util/wait/poll.go``) in upstream's tests.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

DEFAULT_TIMEOUT = 20.0
DEFAULT_INTERVAL = 0.05


class PollTimeout(TimeoutError, AssertionError):
    """A polled condition did not hold in time."""


def _timeout_message(what: str, timeout: float, last: object) -> str:
    return f"timed out after {timeout}s waiting for {what}; last value {last!r}"


@overload
async def eventually(check: Callable[[], Awaitable[T]], *, timeout: float = ..., interval: float = ...,
                     what: str = ..., retry_on: tuple[type[BaseException], ...] = ...) -> T: ...


@overload
async def eventually(check: Callable[[], T], *, timeout: float = ..., interval: float = ...,
                     what: str = ..., retry_on: tuple[type[BaseException], ...] = ...) -> T: ...


async def eventually(check: Callable[[], Any], *, timeout: float = DEFAULT_TIMEOUT,
                     interval: float = DEFAULT_INTERVAL, what: str = "",
                     retry_on: tuple[type[BaseException], ...] = ()) -> Any:
    """Await ``check()`` (sync or async) until it is truthy and return it; :class:`PollTimeout`
    after ``timeout`` seconds."""
    last: object = None
    try:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    result = check()
                    if inspect.isawaitable(result):
                        result = await result
                except retry_on as exc:
                    last = exc
                else:
                    if result:
                        return result
                    last = result
                await asyncio.sleep(interval)
    except TimeoutError:
        raise PollTimeout(_timeout_message(what or _name_of(check), timeout, last)) from None


def eventually_blocking(check: Callable[[], T], *, timeout: float = DEFAULT_TIMEOUT,
                        interval: float = DEFAULT_INTERVAL, what: str = "",
                        retry_on: tuple[type[BaseException], ...] = ()) -> T:
    """Call ``check()`` until it is truthy and return it, sleeping the thread in between;
    :class:`PollTimeout` once ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            result = check()
        except retry_on as exc:
            last = exc
        else:
            if result:
                return result
            last = result
        if time.monotonic() >= deadline:
            raise PollTimeout(_timeout_message(what or _name_of(check), timeout, last))
        time.sleep(interval)


def _name_of(check: Callable[[], object]) -> str:
    return getattr(check, "__name__", None) or repr(check)
