"""Which event loop kubeloop's long-running processes run on, and the helper that runs one.

Contract:

- :func:`run` is ``asyncio.run`` on the chosen loop: ``kubeloop server``, ``controllers``,
  ``kubelet`` and ``up`` start with it, and so should a user's own Manager program
  (``eventloop.run(main())``, docs/write-your-own-controller.md). It logs the loop it runs on
  (logger ``kubeloop.runtime.eventloop``, INFO) before the coroutine starts.
- The choice comes from ``$KUBELOOP_EVENT_LOOP``: ``auto`` (or unset, empty) picks uvloop when
  it imports and asyncio's own loop otherwise (no wheel for the platform, a broken install);
  ``uvloop`` insists on it (a startup error when it cannot be imported); ``asyncio`` opts out.
  Any other value is a startup error, not a silent default.
- :func:`resolve` is the pure core of the choice (the setting and whether uvloop imported, in;
  the loop's name and why, out); :func:`loop_factory` adds the import.

Why uvloop: it is the loop a Python operator author expects to be used when it is installed
(``kopf run`` picks it the same way, kopf/_kits/loops.py ``proper_loop``), and its TLS and
transports are compiled where asyncio's ``sslproto`` is pure Python -- the largest share of a
controller's CPU in issue #20's B1 profile. Figures: docs/decisions.md, "uvloop".

The test suite's own loops (pytest-asyncio) are not made here: only processes started
through :func:`run` are affected.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

ENV = "KUBELOOP_EVENT_LOOP"
SETTINGS = ("auto", "uvloop", "asyncio")

log = logging.getLogger(__name__)
T = TypeVar("T")


class EventLoopSettingError(ValueError):
    """``$KUBELOOP_EVENT_LOOP`` names no loop, or one that cannot be had."""


@dataclass(frozen=True)
class Choice:
    """The loop a process runs on and why (the startup log line)."""

    loop: str
    """``uvloop`` or ``asyncio``."""
    reason: str


def resolve(setting: str | None, uvloop_error: str | None) -> Choice:
    """The loop for ``setting`` (``$KUBELOOP_EVENT_LOOP``) when importing uvloop failed with
    ``uvloop_error`` (None: it imported). Raises EventLoopSettingError for an unknown setting
    or for ``uvloop`` when it cannot be had."""
    wanted = (setting or "auto").strip().lower() or "auto"
    if wanted not in SETTINGS:
        raise EventLoopSettingError(f"{ENV}={setting!r}: expected one of {', '.join(SETTINGS)}")
    if wanted == "asyncio":
        return Choice("asyncio", f"{ENV}=asyncio")
    if uvloop_error is None:
        return Choice("uvloop", f"{ENV}={wanted}")
    if wanted == "uvloop":
        raise EventLoopSettingError(f"{ENV}=uvloop but uvloop cannot be imported: {uvloop_error}")
    return Choice("asyncio", f"uvloop unavailable ({uvloop_error})")


def _import_uvloop() -> tuple[Any, str | None]:
    try:
        import uvloop
    except Exception as error:  # ImportError, or a broken binary wheel (OSError, ...)
        return None, f"{type(error).__name__}: {error}"
    return uvloop, None


def loop_factory(setting: str | None = None) -> tuple[Callable[[], asyncio.AbstractEventLoop], Choice]:
    """The factory of the chosen loop (``setting`` defaults to ``$KUBELOOP_EVENT_LOOP``)."""
    if setting is None:
        setting = os.environ.get(ENV)
    if (setting or "").strip().lower() == "asyncio":  # an opt-out never pays uvloop's import
        return asyncio.new_event_loop, resolve(setting, "not imported")
    module, error = _import_uvloop()
    choice = resolve(setting, error)
    if choice.loop == "uvloop":
        new_loop: Callable[[], asyncio.AbstractEventLoop] = module.new_event_loop
        return new_loop, Choice("uvloop", f"{choice.reason}, uvloop {module.__version__}")
    return asyncio.new_event_loop, choice


def run(main: Coroutine[Any, Any, T], *, setting: str | None = None) -> T:
    """Run ``main`` to completion on the chosen loop, as ``asyncio.run`` does (it closes the
    loop after cancelling what is left). A bad setting closes ``main`` (never started) and
    raises EventLoopSettingError."""
    try:
        factory, choice = loop_factory(setting)
    except EventLoopSettingError:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        log.info("event loop: %s (%s)", choice.loop, choice.reason)
        return runner.run(main)


def running_loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop of the calling coroutine (for status and tests)."""
    return "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"
