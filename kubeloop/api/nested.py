"""The one tolerant reader of nested mappings in JSON objects.

Objects arrive as plain JSON dicts; a field the code expects to be an object may be missing,
``null`` or, in a malformed or hand-written object, of another type. :func:`section` reads
through such fields without raising: whatever is not a mapping reads as an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def section(value: Any, *path: str) -> Mapping[str, Any]:
    """The mapping at ``value[path[0]][path[1]]...`` (``value`` itself without a path), or an
    empty mapping when ``value`` or any step on the way is missing or not a mapping."""
    current = value
    for key in path:
        if type(current) is not dict and not isinstance(current, Mapping):
            return {}
        current = current.get(key)
    # A plain dict is answered at once: decoded JSON is made of them, and the abstract-class
    # check costs several times more on hot paths.
    return current if type(current) is dict or isinstance(current, Mapping) else {}
