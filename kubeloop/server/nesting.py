"""How deep a decoded document may nest, so that every object the server accepts can be served back.

kube-apiserver's JSON decoder refuses documents nested deeper than 10,000 levels (Go's
``encoding/json`` scanner, ``maxNestingDepth``; goyaml has the same bound for YAML). The embedded
server cannot go that far: its walkers (typed decoding, patches, apply's field sets, the protobuf
codec) recurse on Python's stack, and ``orjson`` refuses to encode more than 254 levels. An object
accepted at 252 levels would be stored and then make every LIST of its type answer 500, since a
list wraps each item two levels deeper.

So an object may nest at most :data:`MAX_DEPTH` containers (objects and arrays, the object
itself included), with ``metadata.managedFields`` measured apart (:func:`object_too_deep`): the
field sets mirror the object a few levels deeper, and an object read back, managed fields and all,
must be accepted when it is written again. The one bound holds for request bodies (a 400 before
the content is looked at) and for the results of patches (a 422 on ``patch``, as upstream words
a patched object that fails to decode), so nothing a client can store is refused when sent back.
:data:`MAX_STORED_DEPTH` is the store's own backstop on what it keeps, leaving room for the list,
watch-event and Table wrappers around an item.
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_DEPTH = 100
"""Containers a request body may nest (a Pod is about 10 deep, a deep CRD schema about 40)."""

MAX_STORED_DEPTH = 200
"""Containers a stored object may nest: its ``managedFields`` mirror the object a few levels
deeper, and list, watch and Table wrappers add up to four more; ``orjson`` stops at 254."""


MANAGED_FIELDS_DEPTH = 4
"""How much deeper than the object itself its ``managedFields`` may nest, measured as a document
of their own: the list and an entry are two levels, ``fieldsV1`` mirrors the object from its root
(one level), and a field set marks a leaf with ``{}`` (one more)."""

MAX_COMPOSED_DEPTH = MAX_DEPTH + MANAGED_FIELDS_DEPTH + 3
"""The deepest a YAML body may nest while it is composed (a guard for the composer's recursion):
``metadata.managedFields`` sits three levels below the object, and its own bound is
``MAX_DEPTH + MANAGED_FIELDS_DEPTH``. :func:`object_too_deep` then measures exactly."""


def object_too_deep(document: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether an object (or any body) nests deeper than the server accepts: more than ``limit``
    containers apart from ``metadata.managedFields``, or managed fields nesting more than
    ``limit + MANAGED_FIELDS_DEPTH`` on their own."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    managed = metadata.get("managedFields") if isinstance(metadata, dict) else None
    if not isinstance(managed, list):
        return depth_exceeds(document, limit)
    assert isinstance(metadata, dict)
    rest = {**document, "metadata": {key: value for key, value in metadata.items() if key != "managedFields"}}
    return depth_exceeds(rest, limit) or depth_exceeds(managed, limit + MANAGED_FIELDS_DEPTH)


def depth_exceeds(document: Any, limit: int) -> bool:
    """Whether ``document`` nests more than ``limit`` containers (a scalar nests 0, ``{}`` 1).

    Iterative, so a document of any depth is measured without touching the recursion limit.
    """
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


ORJSON_MAX_DEPTH = 254
"""The deepest document ``orjson.dumps`` encodes (it answers ``Recursion limit reached`` beyond)."""


def encodes_within(document: Any, limit: int) -> bool:
    """Whether ``document`` nests at most ``limit`` containers (``limit`` <= 254), at C speed.

    ``orjson`` stops at :data:`ORJSON_MAX_DEPTH`: wrapping the document in ``254 - limit``
    arrays makes it refuse exactly the documents deeper than ``limit``. About a tenth of the cost
    of :func:`depth_exceeds`, for the store's check on every write.
    """
    return encode_within(document, limit) is not None


def encode_within(document: Any, limit: int) -> bytes | None:
    """``document`` as compact JSON, or None when it nests deeper than ``limit`` containers
    (``limit`` <= 254) or cannot be encoded: :func:`encodes_within`'s check and the encoding in
    one ``orjson.dumps``, since the wrapped document's bytes are the document's between the
    wrapping brackets (compact JSON has no whitespace to strip).

    The wrapping arrays are built once and reused (:class:`_Wrapping`): building 54 to 154
    one-element lists per call cost more than encoding a pod.
    """
    wraps = ORJSON_MAX_DEPTH - limit
    if wraps <= 0:
        try:
            return orjson.dumps(document)
        except orjson.JSONEncodeError:
            return None
    pool = _WRAPPINGS.get(wraps)
    if pool is None:
        pool = _WRAPPINGS.setdefault(wraps, [])
    # list.pop and list.append are atomic: a thread encoding at the same time takes (or builds)
    # another wrapping, never this one while its innermost slot holds our document.
    wrapping = pool.pop() if pool else _Wrapping(wraps)
    inner = wrapping.inner
    inner[0] = document
    try:
        encoded = orjson.dumps(wrapping.outer)
    except orjson.JSONEncodeError:
        return None
    finally:
        inner[0] = None
        pool.append(wrapping)
    return encoded[wraps:-wraps]


class _Wrapping:
    """``wraps`` nested one-element arrays: ``outer`` holds ... holds ``inner``, whose one slot
    takes the document being measured (``None`` between uses)."""

    __slots__ = ("inner", "outer")

    def __init__(self, wraps: int) -> None:
        self.inner: list[Any] = [None]
        outer = self.inner
        for _ in range(wraps - 1):
            outer = [outer]
        self.outer = outer


_WRAPPINGS: dict[int, list[_Wrapping]] = {}
"""Idle wrappings by depth (one per depth unless threads encode at once)."""


def raw_json_within(raw: bytes, limit: int) -> bool:
    """Whether the JSON text ``raw`` surely nests at most ``limit`` containers: it opens no more
    than ``limit`` objects and arrays in all (brackets inside strings count too, so this can only
    overestimate). Counting two byte values costs a fraction of re-encoding the decoded body
    (:func:`encodes_within`), and nearly every body passes; a False answer is not a refusal."""
    return raw.count(b"{") + raw.count(b"[") <= limit
