"""The page as served: ``static/index.html`` with the current snapshot embedded.

A page that fetched its first picture after loading would show "no workloads" (or nothing)
for a moment next to a live cluster, and a screenshot taken at load would keep that lie. So
``GET /`` answers the HTML with the snapshot message inlined as a JSON data block
(``<script type="application/json" id="initial-state">``): the script draws it before it
opens the event stream, and the stream's own snapshot then replaces it.

:func:`embed_snapshot` is pure: the template and the encoded message in, the page out. JSON
inside ``<script>`` ends at the first ``</script``, and an HTML parser also reacts to
``<!--``: every ``<`` (and ``>``, ``&`` for good measure) is written as a JSON ``\\u`` escape,
which the JSON parser reads back unchanged.
"""

from __future__ import annotations

PLACEHOLDER = "<!--initial-state-->"
"""Where ``index.html`` wants the data block."""

_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
            # Legal in JSON, but line terminators in older JavaScript: keep them out of the page source.
            0x2028: "\\u2028", 0x2029: "\\u2029"}


def script_safe_json(encoded: bytes) -> str:
    """``encoded`` (UTF-8 JSON) as text that can sit inside a ``<script>`` element unchanged in meaning."""
    return encoded.decode("utf-8").translate(_ESCAPES)


def embed_snapshot(template: str, snapshot: bytes) -> str:
    """``template`` with its :data:`PLACEHOLDER` replaced by a JSON data block holding ``snapshot``."""
    if PLACEHOLDER not in template:
        raise ValueError(f"the page template has no {PLACEHOLDER} placeholder")
    block = f'<script type="application/json" id="initial-state">{script_safe_json(snapshot)}</script>'
    return template.replace(PLACEHOLDER, block, 1)
