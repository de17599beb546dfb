"""The event loop of kubeloop's processes: the choice ($KUBELOOP_EVENT_LOOP) and the runner."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest
import uvloop

from kubeloop.runtime import eventloop
from kubeloop.runtime.eventloop import Choice, EventLoopSettingError, resolve

BROKEN = "ImportError: no module named uvloop"


@pytest.mark.parametrize(("setting", "uvloop_error", "loop"), [
    (None, None, "uvloop"),
    ("", None, "uvloop"),
    ("auto", None, "uvloop"),
    (" Auto ", None, "uvloop"),
    ("uvloop", None, "uvloop"),
    ("asyncio", None, "asyncio"),
    ("ASYNCIO", None, "asyncio"),
    (None, BROKEN, "asyncio"),
    ("auto", BROKEN, "asyncio"),
    ("asyncio", BROKEN, "asyncio"),
])
def test_the_setting_and_uvloops_presence_pick_the_loop(setting: str | None, uvloop_error: str | None,
                                                        loop: str) -> None:
    assert resolve(setting, uvloop_error).loop == loop


def test_a_fallback_says_why() -> None:
    assert resolve(None, BROKEN) == Choice("asyncio", f"uvloop unavailable ({BROKEN})")


@pytest.mark.parametrize(("setting", "uvloop_error", "message"), [
    ("uvloop", BROKEN, "KUBELOOP_EVENT_LOOP=uvloop but uvloop cannot be imported: " + BROKEN),
    ("tokio", None, "KUBELOOP_EVENT_LOOP='tokio': expected one of auto, uvloop, asyncio"),
])
def test_impossible_settings_are_errors(setting: str, uvloop_error: str | None, message: str) -> None:
    with pytest.raises(EventLoopSettingError) as raised:
        resolve(setting, uvloop_error)
    assert str(raised.value) == message


async def _loop_type() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize(("env", "expected", "name"), [
    (None, uvloop.Loop, "uvloop"),
    ("auto", uvloop.Loop, "uvloop"),
    ("asyncio", asyncio.SelectorEventLoop, "asyncio"),
])
def test_run_uses_the_chosen_loop_and_logs_it(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                              env: str | None, expected: type, name: str) -> None:
    if env is None:
        monkeypatch.delenv(eventloop.ENV, raising=False)
    else:
        monkeypatch.setenv(eventloop.ENV, env)
    with caplog.at_level(logging.INFO, logger="kubeloop.runtime.eventloop"):
        assert eventloop.run(_loop_type()) is expected
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [f"event loop: {name}"]


def test_without_uvloop_auto_falls_back_to_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(eventloop.ENV, "auto")
    monkeypatch.setattr(eventloop, "_import_uvloop", lambda: (None, BROKEN))
    assert eventloop.run(_loop_type()) is asyncio.SelectorEventLoop


def test_running_loop_name_reads_the_loop_it_runs_on() -> None:
    async def name() -> str:
        return eventloop.running_loop_name()

    assert eventloop.run(name(), setting="uvloop") == "uvloop"
    assert eventloop.run(name(), setting="asyncio") == "asyncio"


def test_a_bad_setting_never_starts_the_coroutine(monkeypatch: pytest.MonkeyPatch) -> None:
    started = []

    async def main() -> None:
        started.append(True)

    monkeypatch.setenv(eventloop.ENV, "tokio")
    coroutine = main()
    with pytest.raises(EventLoopSettingError):
        eventloop.run(coroutine)
    # Closed, not left for the collector to warn about ("coroutine ... was never awaited").
    assert coroutine.cr_frame is None
    gc.collect()
    assert started == []
