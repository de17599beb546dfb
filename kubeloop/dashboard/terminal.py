"""The rollout picture in a terminal, drawn with rich from the same views as the web page.

Per workload: a title line with the verdict, kubectl's status message, progress bars for the
updated / ready / available pods (each full at its target: the replicas to update, the desired
replicas; the surge and availability bounds are spelled out below them), one row of pod tiles
per revision, a line per failing pod with its reason and restarts, and the latest warning
event, if any. Tiles take the
revision's colour (the update revision blue, older ones other colours) and a glyph per state:

======  =================
glyph   state
======  =================
``■``   available
``▣``   ready, not yet available
``◧``   running, not ready
``□``   pending
``✗``   failing
``·``   terminating
======  =================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from kubeloop.dashboard.podstates import PodState

GLYPHS: Mapping[str, str] = {
    PodState.AVAILABLE.value: "■",
    PodState.READY.value: "▣",
    PodState.RUNNING.value: "◧",
    PodState.PENDING.value: "□",
    PodState.FAILING.value: "✗",
    PodState.TERMINATING.value: "·",
}
UPDATE_STYLE = "bold blue"
OLD_STYLES = ("yellow", "magenta", "cyan", "green", "red")
UNKNOWN_STYLE = "dim"
PHASE_STYLES = {"complete": "bold green", "progressing": "bold yellow", "waiting": "bold yellow",
                "failed": "bold red", "paused": "bold white"}
BAR_WIDTH = 30


def revision_styles(view: Mapping[str, Any]) -> dict[str, str]:
    """Revision id -> rich style: blue for the update revision, a rotating colour for older ones."""
    styles = {}
    old = 0
    for revision in view["revisions"]:
        if revision["isUpdate"]:
            styles[revision["id"]] = UPDATE_STYLE
        else:
            styles[revision["id"]] = OLD_STYLES[old % len(OLD_STYLES)]
            old += 1
    return styles


def _bar(label: str, value: int, of: int, style: str) -> Text:
    """A bar full when ``value`` reaches its target ``of`` (a surge beyond it stays full)."""
    filled = round(BAR_WIDTH * min(value, of) / of) if of > 0 else (BAR_WIDTH if value >= 0 else 0)
    line = Text(f"  {label:<10}")
    line.append("█" * filled, style=style)
    line.append("░" * (BAR_WIDTH - filled), style="dim")
    line.append(f" {value}/{of}")
    return line


def render_workload(view: Mapping[str, Any]) -> RenderableType:
    """One workload as a group of text lines (see the module docstring)."""
    progress = view["progress"]
    phase = "paused" if progress["paused"] else view["rollout"]["phase"]
    title = Text()
    title.append(f"{view['kind']} ", style="dim")
    title.append(f"{view['namespace']}/{view['name']}", style="bold")
    title.append(f"  [{phase}]", style=PHASE_STYLES.get(phase, ""))
    title.append(f"  {view['strategy']}", style="dim")
    lines: list[RenderableType] = [title, Text(f"  {view['rollout']['message']}")]
    lines.append(_bar("updated", progress["updated"], progress["expectedUpdated"], "blue"))
    lines.append(_bar("ready", progress["ready"], progress["desired"], "green"))
    lines.append(_bar("available", progress["available"], progress["desired"], "bold green"))
    lines.append(Text(f"  desired {progress['desired']}, at most {progress['maxPods']} pods "
                      f"(maxSurge {progress['maxSurge']}), at least {progress['minAvailable']} available "
                      f"(maxUnavailable {progress['maxUnavailable']})", style="dim"))
    styles = revision_styles(view)
    lines.extend(_tile_rows(view, styles))
    for pod in view["pods"]:
        if pod["state"] == PodState.FAILING.value:
            restarts = int(pod.get("restarts") or 0)
            lines.append(Text(f"  ✗ {pod['name']}  {pod.get('reason') or 'failing'}, {restarts} "
                              f"restart{'' if restarts == 1 else 's'}", style="red"))
    warnings = [e for e in view["events"] if e["type"] == "Warning"]
    if warnings:
        latest = warnings[0]
        lines.append(Text(f"  ! {latest['reason']} {latest['object']}: {latest['message']}", style="red"))
    return Group(*lines)


def _tile_rows(view: Mapping[str, Any], styles: Mapping[str, str]) -> Iterable[Text]:
    pods_by_revision: dict[str, list[Mapping[str, Any]]] = {r["id"]: [] for r in view["revisions"]}
    for pod in view["pods"]:
        pods_by_revision.setdefault(pod["revision"], []).append(pod)
    revisions = {r["id"]: r for r in view["revisions"]}
    for revision_id, pods in pods_by_revision.items():
        revision = revisions.get(revision_id)
        if not pods and not (revision and revision["isUpdate"]):
            continue
        style = styles.get(revision_id, UNKNOWN_STYLE)
        label = f"rev {revision['revision']}" if revision else "rev ?"
        row = Text("  ")
        row.append(f"{label:<7}", style=style)
        row.append(f"{'update' if revision and revision['isUpdate'] else '':<7}", style="dim")
        for pod in pods:
            row.append(GLYPHS.get(pod["state"], "?") + " ", style="red" if pod["state"] == "failing" else style)
        image = revision["image"] if revision else revision_id
        row.append(f" {image}", style="dim")
        yield row


def render_views(views: Sequence[Mapping[str, Any]], header: str = "") -> RenderableType:
    """Every view, one after the other, under an optional header line."""
    parts: list[RenderableType] = []
    if header:
        parts.append(Text(header, style="dim"))
    for view in views:
        parts.append(render_workload(view))
        parts.append(Text(""))
    if not views:
        parts.append(Text("no workloads", style="dim"))
    legend = Text("  ")
    for state, glyph in GLYPHS.items():
        legend.append(f"{glyph} {state}  ", style="dim")
    parts.append(legend)
    return Group(*parts)


def status_lines(views: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per workload, as ``kubectl rollout status`` prints progress when the output is
    not a terminal: kubectl's message, prefixed with the workload when several are followed."""
    if len(views) == 1:
        return [str(views[0]["rollout"]["message"])]
    return [f"{view['kind'].lower()}/{view['name']}: {view['rollout']['message']}" for view in views]


def rollout_exit_code(views: Sequence[Mapping[str, Any]]) -> int | None:
    """``kubeloop watch``'s verdict: ``None`` while any rollout is still going, else 0 if all
    completed and 1 if any exceeded its progress deadline."""
    phases = [view["rollout"]["phase"] for view in views]
    if any(phase not in ("complete", "failed") for phase in phases):
        return None
    return 1 if "failed" in phases else 0


def pods_match_status(view: Mapping[str, Any]) -> bool:
    """Whether the pod tiles tell the same story as the workload's status counters.

    Pods and the workload arrive on separate watches, so the status may announce a finished
    rollout a moment before the last pod update arrives; ``kubeloop watch`` waits (briefly) for
    both to agree before drawing its final frame.
    """
    progress = view["progress"]
    update = {r["id"] for r in view["revisions"] if r["isUpdate"]}
    live = [pod for pod in view["pods"] if pod["state"] != PodState.TERMINATING.value]
    updated = sum(pod["revision"] in update for pod in live)
    available = sum(pod["state"] == PodState.AVAILABLE.value for pod in live)
    return bool(updated == progress["updated"] and available == progress["available"])


KIND_ALIASES: Mapping[str, str] = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "deployment.apps": "Deployment",
    "deployments.apps": "Deployment",
    "cloneset": "CloneSet",
    "clonesets": "CloneSet",
    "clone": "CloneSet",
    "cloneset.apps.kruise.io": "CloneSet",
    "clonesets.apps.kruise.io": "CloneSet",
}


def parse_target(text: str) -> tuple[str, str]:
    """``KIND/NAME`` -> ``(Kind, name)``; :class:`ValueError` naming the problem otherwise."""
    kind_text, slash, name = text.partition("/")
    if not slash or not name or "/" in name:
        raise ValueError(f"expected KIND/NAME (e.g. deployment/web), got {text!r}")
    kind = KIND_ALIASES.get(kind_text.lower())
    if kind is None:
        raise ValueError(f"unsupported kind {kind_text!r}: use deployment (deploy) or cloneset")
    return kind, name
