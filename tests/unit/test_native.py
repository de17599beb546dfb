"""The choice between an optional C extension and its Python twin (kubeloop.native)."""

from __future__ import annotations

import sys
import types

import pytest

from kubeloop.native import NativeChoice

ENV = "KUBELOOP_TEST_NATIVE"


@pytest.mark.parametrize(("chosen", "built", "serves"), [
    ("auto", True, True), ("auto", False, False), ("python", True, False), ("python", False, False),
    ("native", True, True)])
def test_resolve(chosen: str, built: bool, serves: bool) -> None:
    assert NativeChoice("kubeloop.no_such_extension", 1, ENV).resolve(chosen, built) is serves


def test_native_without_the_extension_names_the_variable_and_the_module() -> None:
    with pytest.raises(RuntimeError, match=f"^{ENV}=native but kubeloop.no_such_extension is not built"):
        NativeChoice("kubeloop.no_such_extension", 1, ENV).resolve("native", False)


@pytest.mark.parametrize(("value", "mode"), [(None, "auto"), ("", "auto"), (" Native ", "native"),
                                              ("python", "python")])
def test_mode_reads_the_environment_at_each_call(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                                  mode: str) -> None:
    choice = NativeChoice("kubeloop.no_such_extension", 1, ENV)
    monkeypatch.setenv(ENV, "python")
    assert choice.mode() == "python"
    if value is None:
        monkeypatch.delenv(ENV)
    else:
        monkeypatch.setenv(ENV, value)
    assert choice.mode() == mode


def test_an_unknown_mode_is_refused_with_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "fast")
    with pytest.raises(ValueError, match=f"^{ENV}='fast': expected one of auto, native, python$"):
        NativeChoice("kubeloop.no_such_extension", 1, ENV).mode()


@pytest.mark.parametrize(("abi", "loaded"), [(3, True), (2, False), (None, False)])
def test_an_extension_of_another_abi_is_not_used(monkeypatch: pytest.MonkeyPatch, abi: int | None,
                                                 loaded: bool) -> None:
    module = types.ModuleType("kubeloop_test_fake_extension")
    if abi is not None:
        module.ABI = abi  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.delenv(ENV, raising=False)
    choice = NativeChoice(module.__name__, 3, ENV)
    assert choice.available() is loaded
    assert (choice.extension is module) is loaded
    assert choice.enabled() is loaded
