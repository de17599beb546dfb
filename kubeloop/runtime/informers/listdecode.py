"""Decode a list response one item at a time, so a long list never exists as dicts all at once.

A reflector's first list asks for resourceVersion "0", which kube-apiserver (and kubeloop's
server) answer from the watch cache in one piece, ignoring ``limit`` (apiserver's
``delegator.ShouldDelegateList``, storage/cacher/delegator/interface.go: a limit only sends the
list to etcd when the resourceVersion is set and not "0"). Decoding that body whole makes every
item a dict at once -- about five times the body -- before the informer can make it compact, and
the process keeps that peak as RSS. :func:`decode_list` instead parses the envelope (kind,
metadata) first and hands out the items lazily: each one is decoded from its own span of the
body when asked for, so the caller can transform it and drop the raw dicts before the next.

Finding an item's span without a full parse: items of one list are written by one encoder, so
each starts with the same first key (``{"metadata":`` from kube-apiserver, ``{"apiVersion":``
from kubeloop). A candidate end is every ``},{"<that key>":`` after the item's start; the item is
the shortest candidate span that decodes as a JSON object. That is exact, not a guess: the span
starts at a real item start, and a prefix of it that is itself a complete JSON value must end
where that value ends, i.e. at the item's own closing brace. A candidate inside a string or a
nested object never decodes (unbalanced), so it only costs a failed parse. Anything unexpected
(whitespace between tokens, ``items`` not last, no items, a span that never decodes) falls back
to decoding the whole body with orjson, so the result always equals ``orjson.loads(body)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

Obj = dict[str, Any]

_ITEMS = b'"items":['
_FIRST_KEY = re.compile(rb'\{"([A-Za-z0-9_$.-]{1,64})":')


class ListBody:
    """A decoded list envelope (``items`` left out) and a one-pass iterator over its items."""

    def __init__(self, envelope: Obj, items: Iterator[Obj]) -> None:
        self.envelope = envelope
        self._items = items

    def __iter__(self) -> Iterator[Obj]:
        return self._items


def decode_list(body: bytes) -> ListBody:
    """Split ``body`` (a JSON list object) into its envelope and lazily decoded items.

    Raises :class:`orjson.JSONDecodeError` if the body is not JSON, and :class:`ValueError` if
    it is not an object.
    """
    end = len(body)
    while end and body[end - 1] in b" \t\r\n":
        end -= 1
    start = body.find(_ITEMS)
    if start >= 0 and body[end - 2:end] == b"]}":
        first = start + len(_ITEMS)
        match = _FIRST_KEY.match(body, first)
        if match is not None:
            try:
                envelope = orjson.loads(body[:first] + b"]}")
            except orjson.JSONDecodeError:
                envelope = None
            if isinstance(envelope, dict) and envelope.get("items") == []:
                del envelope["items"]
                separator = b'},{"' + match.group(1) + b'":'
                return ListBody(envelope, _split(body, first, end - 2, separator))
    return _whole(body)


def _whole(body: bytes) -> ListBody:
    decoded = orjson.loads(body)
    if not isinstance(decoded, dict):
        raise ValueError("a list response must be a JSON object")
    items = decoded.pop("items", None) or []
    return ListBody(decoded, iter(items))


def _split(body: bytes, first: int, end_of_items: int, separator: bytes) -> Iterator[Obj]:
    """Items from ``first`` (an item's "{") up to ``end_of_items`` (the "]" closing items)."""
    view = memoryview(body)
    position = first
    done = 0
    while True:
        search = position
        item: Any = None
        while True:
            candidate = body.find(separator, search, end_of_items)
            stop = candidate + 1 if candidate >= 0 else end_of_items
            try:
                item = orjson.loads(view[position:stop])
            except orjson.JSONDecodeError:
                if candidate < 0:
                    break  # the last span does not decode either: not the shape we expect
                search = candidate + 1
                continue
            break
        if not isinstance(item, dict):
            # Fall back: decode everything and carry on after the items already handed out.
            view.release()
            rest = orjson.loads(body).get("items") or []
            yield from rest[done:]
            return
        yield item
        done += 1
        if candidate < 0:
            view.release()
            return
        position = candidate + 2  # past "},"
