"""`kubeloop demo` tells the work queue's story and exits 0."""

from __future__ import annotations

from click.testing import CliRunner

from kubeloop.cli.main import cli


def test_demo_shows_collapsing_requeue_while_held_and_back_off() -> None:
    result = CliRunner().invoke(cli, ["demo", "--seconds", "2", "--workers", "2"])
    assert result.exit_code == 0, result.output
    output = result.output
    assert "-> collapsed: already waiting" in output
    assert "holds it: queued again when it is done" in output
    assert "default/flaky failed (attempt 1): add_rate_limited (requeues 1)" in output
    assert "shutting down with drain" in output
    assert output.count("queue shut down and empty: exiting") == 2
    assert 'workqueue_adds_total{name="demo"}' in output


def test_demo_rejects_a_bad_option_without_a_traceback() -> None:
    result = CliRunner().invoke(cli, ["demo", "--workers", "0"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "--workers" in result.output
