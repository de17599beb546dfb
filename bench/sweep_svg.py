"""Line charts as a hand-written SVG: a grid of panels, x on a log scale, y linear from 0.

    render_panels(title, [(panel title, [Series(label, [(x, y), ...], dash), ...], reference y or None), ...])

For the benchmark sweeps (``bench/rollout_sweep.py``), whose x is a size (1,000 .. 20,000) and
whose y is a per-unit cost: a line that rises is a cost that grows faster than linearly. Written
by hand so that kubeloop and its bench need no plotting library (matplotlib is not installed in
the project's environment); the file is plain SVG 1.1, readable by any browser.
"""

from __future__ import annotations

import dataclasses
import math
from html import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
PANEL_W, PANEL_H = 540, 300
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 60, 200, 30, 40
COLUMNS = 2


@dataclasses.dataclass(frozen=True)
class Series:
    label: str
    points: list[tuple[float, float]]
    dash: str = ""
    """An SVG ``stroke-dasharray`` ("" for a solid line)."""


Panel = tuple[str, list[Series], float | None]
"""A panel's title, its lines, and a horizontal reference line (a goal), if any."""


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above ``value`` (1 for nothing to show)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10 * power


def _panel(x0: float, y0: float, title: str, lines: list[Series], reference: float | None) -> list[str]:
    xs = sorted({x for s in lines for x, _ in s.points if x > 0})
    top = nice_ceiling(max([y for s in lines for _, y in s.points] + [reference or 0.0]) * 1.05)
    plot_w, plot_h = PANEL_W - MARGIN_L - MARGIN_R, PANEL_H - MARGIN_T - MARGIN_B
    low, high = (math.log10(xs[0]), math.log10(xs[-1])) if xs else (0.0, 1.0)
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5

    def px(x: float) -> float:
        return x0 + MARGIN_L + (math.log10(x) - low) / (high - low) * plot_w

    def py(y: float) -> float:
        return y0 + MARGIN_T + plot_h - y / top * plot_h

    out = [f'<text x="{x0 + MARGIN_L}" y="{y0 + 18}" font-size="13" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{x0 + MARGIN_L}" y="{y0 + MARGIN_T}" width="{plot_w}" height="{plot_h}" '
           f'fill="none" stroke="#888"/>']
    for i in range(5):
        value = top * i / 4
        out.append(f'<line x1="{x0 + MARGIN_L}" x2="{x0 + MARGIN_L + plot_w}" y1="{py(value):.1f}" '
                   f'y2="{py(value):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 + MARGIN_L - 5}" y="{py(value) + 4:.1f}" font-size="11" '
                   f'text-anchor="end">{value:g}</text>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{y0 + MARGIN_T + plot_h + 16}" font-size="11" '
                   f'text-anchor="middle">{x:,.0f}</text>')
    if reference is not None:
        out.append(f'<line x1="{x0 + MARGIN_L}" x2="{x0 + MARGIN_L + plot_w}" y1="{py(reference):.1f}" '
                   f'y2="{py(reference):.1f}" stroke="#000" stroke-dasharray="2,4"/>')
    for index, series in enumerate(lines):
        colour = COLOURS[index % len(COLOURS)]
        points = [(px(x), py(y)) for x, y in sorted(series.points) if x > 0]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            dash = f' stroke-dasharray="{series.dash}"' if series.dash else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points]
        legend_y = y0 + MARGIN_T + 12 + 16 * index
        out.append(f'<line x1="{x0 + PANEL_W - MARGIN_R + 10}" x2="{x0 + PANEL_W - MARGIN_R + 30}" '
                   f'y1="{legend_y - 4}" y2="{legend_y - 4}" stroke="{colour}" stroke-width="2"'
                   + (f' stroke-dasharray="{series.dash}"' if series.dash else "") + "/>")
        out.append(f'<text x="{x0 + PANEL_W - MARGIN_R + 34}" y="{legend_y}" font-size="11">'
                   f'{escape(series.label)}</text>')
    return out


def render_panels(title: str, panels: list[Panel]) -> str:
    """The whole SVG document: ``title`` above ``panels`` laid out :data:`COLUMNS` to a row."""
    rows = max(1, math.ceil(len(panels) / COLUMNS))
    width, height = COLUMNS * PANEL_W, rows * PANEL_H + 30
    body = [f'<text x="10" y="20" font-size="15" font-weight="bold">{escape(title)}</text>']
    for index, (panel_title, lines, reference) in enumerate(panels):
        body += _panel((index % COLUMNS) * PANEL_W, 30 + (index // COLUMNS) * PANEL_H, panel_title, lines, reference)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(body) + "\n</svg>\n")
