"""The process supervisor with real child processes (short-lived ``kubeloop`` commands)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kubeloop.cluster.restarts import RestartPolicy
from kubeloop.cluster.supervisor import ChildExited, ChildSpec, Supervisor

QUICK = RestartPolicy(initial=0.01, maximum=0.01, limit=2, reset_after=3600.0)


async def test_a_start_failure_is_the_commands_own_error_line() -> None:
    output = io.StringIO()
    supervisor = Supervisor(QUICK, output)
    child = supervisor.add(ChildSpec("controllers", lambda: ["controllers", "--controllers", "nope"],
                                     "controllers running"))
    await supervisor.start(child)
    try:
        with pytest.raises(ChildExited) as failure:
            await child.wait_ready()
    finally:
        await supervisor.stop([[child]], grace=5.0)
    assert failure.value.returncode == 2  # click's usage error
    assert failure.value.error is not None and "unknown controller 'nope'" in failure.value.error
    assert str(failure.value).startswith("the controllers process exited with code 2: ")
    # The error line is kept back (reported once, with the exit), the rest is forwarded with a prefix.
    assert "Error: " not in output.getvalue()
    assert "[controllers] " in output.getvalue()


async def test_a_child_that_keeps_exiting_is_restarted_then_given_up() -> None:
    output = io.StringIO()
    supervisor = Supervisor(QUICK, output)
    child = supervisor.add(ChildSpec("versioner", lambda: ["version"], "never printed"))
    await supervisor.start(child)
    try:
        reason = await supervisor.failed()
    finally:
        await supervisor.stop([[child]], grace=5.0)
    lines = [line for line in output.getvalue().splitlines() if line.startswith("kubeloop: ")]
    assert [line.split(" (pid")[0] for line in lines] == [
        "kubeloop: started the versioner process",
        "kubeloop: the versioner process",
        "kubeloop: restarted the versioner process",
        "kubeloop: the versioner process",
        "kubeloop: restarted the versioner process",
        "kubeloop: the versioner process",
    ]
    assert "exited with code 0; restarting it in 0.01s (restart 1 of at most 2 in a row)" in lines[1]
    assert reason.endswith("exited with code 0; it was restarted 2 times in a row, giving up")
    assert lines[-1] == f"kubeloop: {reason}"
    assert output.getvalue().count("[versioner] kubeloop ") == 3  # each run printed its version line


async def test_stop_terminates_and_nothing_is_restarted_after(tmp_path: Path) -> None:
    output = io.StringIO()
    supervisor = Supervisor(QUICK, output)
    child = supervisor.add(ChildSpec("server", lambda: ["server", "--data-dir", str(tmp_path), "--port", "0",
                                                        "--memory"], "listening on"))
    await supervisor.start(child)
    await child.wait_ready()
    pid = child.pid
    await supervisor.stop([[child]], grace=10.0)
    assert child.process is not None and child.process.returncode == 0  # stopped by SIGTERM, cleanly
    assert child.pid == pid
    assert "restarted" not in output.getvalue()
    assert "[server] kubeloop server stopped" in output.getvalue()

