from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from kubeloop.dashboard.terminal import (
    parse_target,
    pods_match_status,
    render_views,
    revision_styles,
    rollout_exit_code,
    status_lines,
)
from tests.unit.dashboard.builders import NOW
from tests.unit.dashboard.test_dashboard_model import mid_rollout


def text_of(views: list[dict[str, Any]]) -> str:
    console = Console(record=True, width=120, color_system=None, force_terminal=False)
    console.print(render_views(views, "header line"))
    return console.export_text()


def test_render_mid_rollout() -> None:
    model, _ = mid_rollout()
    views = model.views(NOW)
    lines = text_of(views).splitlines()
    assert lines[0] == "header line"
    assert lines[1].startswith("Deployment default/web  [progressing]  RollingUpdate")
    assert "2 out of 4 new replicas have been updated" in lines[2]
    updated = next(line for line in lines if line.strip().startswith("updated"))
    assert updated.endswith(" 2/4")
    assert "at most 5 pods (maxSurge 1), at least 3 available (maxUnavailable 1)" in "\n".join(lines)
    rows = [line for line in lines if line.strip().startswith("rev ")]
    # rev 2: one available, one running; rev 1: three available, one terminating.
    assert rows[0].split() == ["rev", "2", "update", "■", "◧", "app:2"]
    assert rows[1].split() == ["rev", "1", "■", "■", "■", "·", "app:1"]
    assert "■ available" in lines[-1]


def test_render_without_workloads() -> None:
    assert "no workloads" in text_of([])


def test_update_revision_is_blue_and_old_ones_differ() -> None:
    model, _ = mid_rollout()
    [view] = model.views(NOW)
    styles = revision_styles(view)
    assert styles["web-bbb"] == "bold blue" and styles["web-aaa"] != styles["web-bbb"]


def phases(*values: str) -> list[dict[str, Any]]:
    return [{"rollout": {"phase": value}} for value in values]


@pytest.mark.parametrize(("views", "code"), [
    (phases("complete"), 0),
    (phases("complete", "complete"), 0),
    (phases("failed"), 1),
    (phases("complete", "failed"), 1),
    (phases("complete", "progressing"), None),
    (phases("waiting", "failed"), None),
    (phases(), 0),
])
def test_rollout_exit_code(views: list[dict[str, Any]], code: int | None) -> None:
    assert rollout_exit_code(views) == code


@pytest.mark.parametrize(("text", "expected"), [
    ("deployment/web", ("Deployment", "web")),
    ("deploy/web", ("Deployment", "web")),
    ("Deployments.apps/web", ("Deployment", "web")),
    ("cloneset/cs", ("CloneSet", "cs")),
    ("clonesets.apps.kruise.io/cs", ("CloneSet", "cs")),
])
def test_parse_target(text: str, expected: tuple[str, str]) -> None:
    assert parse_target(text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("web", "expected KIND/NAME"),
    ("deployment/", "expected KIND/NAME"),
    ("deployment/a/b", "expected KIND/NAME"),
    ("statefulset/web", "unsupported kind"),
])
def test_parse_target_rejects(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_target(text)


def test_pods_match_status() -> None:
    model, _ = mid_rollout()
    [view] = model.views(NOW)
    # Status: 2 updated, 4 available; tiles: 2 on the new revision, 1 + 3 available.
    assert pods_match_status(view)
    lagging = {**view, "progress": {**view["progress"], "available": 5}}
    assert not pods_match_status(lagging)
    ahead = {**view, "progress": {**view["progress"], "updated": 1}}
    assert not pods_match_status(ahead)


def test_bars_are_full_at_their_target_not_at_the_surge_bound() -> None:
    model, _ = mid_rollout()
    lines = text_of(model.views(NOW)).splitlines()
    updated = next(line for line in lines if line.strip().startswith("updated"))
    available = next(line for line in lines if line.strip().startswith("available"))
    # 2 of 4 updated: half the bar, whatever the surge bound (5 pods); 4 of 4 available: full.
    assert updated.count("█") == 15
    assert available.endswith(" 4/4") and available.count("█") == 30


def test_failing_pods_show_their_reason_and_restarts() -> None:
    model, _ = mid_rollout()
    [view] = model.views(NOW)
    pod = view["pods"][0]
    failing = {**view, "pods": [{**pod, "state": "failing", "reason": "CrashLoopBackOff", "restarts": 3},
                                *view["pods"][1:]]}
    assert f"✗ {pod['name']}  CrashLoopBackOff, 3 restarts" in text_of([failing])


def test_status_lines_as_kubectl_rollout_status() -> None:
    model, _ = mid_rollout()
    [view] = model.views(NOW)
    assert status_lines([view]) == [view["rollout"]["message"]]
    assert status_lines([view, view]) == [f"deployment/web: {view['rollout']['message']}"] * 2
