"""Ctrl-C ends ``kubeloop watch`` even when what it does after the interrupt never finishes.

``kubeloop.cli.watch._bounded_after_interrupt`` runs the command's coroutine under
``asyncio.run``: the first SIGINT cancels it as ``asyncio.run`` does, and the process ends with
130 once ``INTERRUPT_GRACE_SECONDS`` have passed should the clean-up still be running. Each case
runs in a child interpreter of its own (the watchdog ends the whole process), with the grace
period shortened; the children report through their exit code and stdout.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import asyncio, sys
    from kubeloop.cli import watch

    watch.INTERRUPT_GRACE_SECONDS = 0.5

    async def main() -> int:
        print("ready", flush=True)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            print("cancelled", flush=True)
            if sys.argv[1] == "hang":
                # A clean-up that never ends (a TLS close to a server that stopped answering).
                await asyncio.shield(asyncio.sleep(3600))
            return 7
        return 0

    try:
        code = asyncio.run(watch._bounded_after_interrupt(main()))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(2)
    print(f"returned {code}", flush=True)
    sys.exit(code)
""")


def _interrupt(mode: str) -> tuple[int, list[str]]:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, mode], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGINT)
    try:
        out, _ = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("the process was still running a minute after Ctrl-C")
    return child.returncode, out.split()


def test_a_clean_up_that_never_ends_is_cut_short_with_130() -> None:
    assert _interrupt("hang") == (130, ["cancelled"])


def test_a_clean_up_that_ends_keeps_its_own_outcome() -> None:
    # The coroutine saw the cancellation and returned: asyncio.run hands back its result.
    code, lines = _interrupt("quick")
    assert (code, lines) == (7, ["cancelled", "returned", "7"])
