"""The page template with its embedded snapshot (kubeloop.dashboard.page)."""

from __future__ import annotations

import html.parser
import json

import orjson
import pytest

from kubeloop.dashboard.page import PLACEHOLDER, embed_snapshot, script_safe_json


class Blocks(html.parser.HTMLParser):
    """The text of every ``<script>`` element, as a browser's tokenizer splits them."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._attrs = dict(attrs)
            self.scripts.append((self._attrs, ""))

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._attrs = None


TEMPLATE = f"<html><body><main></main>{PLACEHOLDER}<script src='/static/x.js'></script></body></html>"

HOSTILE = [
    "</script><script>alert(1)</script>",
    "<!-- <script>",
    "a & b > c",
    "line\u2028separator\u2029",
    "ünïcode ✓",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_embedded_snapshot_reads_back_exactly(text: str) -> None:
    snapshot = {"type": "snapshot", "time": 1.5, "workloads": [{"key": "Deployment/default/w", "message": text}]}
    page = embed_snapshot(TEMPLATE, orjson.dumps(snapshot))
    parser = Blocks()
    parser.feed(page)
    # Still exactly two scripts: the data block did not end early nor open another element.
    assert [attrs.get("id") for attrs, _ in parser.scripts] == ["initial-state", None]
    attrs, text_of_block = parser.scripts[0]
    assert attrs["type"] == "application/json"
    assert json.loads(text_of_block) == snapshot
    assert PLACEHOLDER not in page


def test_no_markup_characters_survive() -> None:
    assert script_safe_json(b'{"a":"<&>"}') == '{"a":"\\u003c\\u0026\\u003e"}'


def test_a_template_without_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        embed_snapshot("<html></html>", b"{}")
