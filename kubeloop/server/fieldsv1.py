"""FieldsV1 documents and the field sets they spell, with a memo of both directions.

A ``metadata.managedFields`` entry holds its manager's field set as a FieldsV1 document: nested
``{}`` maps keyed by path elements (``f:<field>``, ``k:<json key>``, ``v:<json value>``,
``i:<n>``), ``"."`` marking a member that also has members below it. Upstream's field manager
decodes every entry of the old object and encodes every entry of the new one on each update
(``managedfields.DecodeManagedFields`` / ``EncodeObjectManagedFields`` in
k8s.io/apimachinery/pkg/util/managedfields/internal); done naively here that was a third of a
pod PUT's cost (``docs/decisions.md``, "Pod PUTs: where the time went").

The documents of one workload's objects are the same few (every pod of a ReplicaSet or CloneSet
sets the same fields), so both directions are memoised by content:

* :func:`fields_of` keys a document by its JSON bytes (``orjson``, in the document's own order,
  which the store and every client keep), and answers the set decoded once;
* :func:`document_of` keys a field set by the set itself, and answers a *fresh* document (the
  caller stores it; a shared one could be changed in place by whoever holds it), decoded from
  the bytes of the one encoded once. Each document it encodes is entered into the first memo
  too, so the next update of that object decodes nothing.

Both memos are bounded (:data:`MEMO_SIZE`, oldest out first). The results are exactly those of
:func:`decode_fields` and :func:`encode_fields`, which stay pure and are what the memos call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

Obj = dict[str, Any]
Path = tuple[str, ...]
FieldSet = frozenset[Path]

MEMO_SIZE = 512
"""Documents (and field sets) remembered in each direction: a few per workload's template."""

_DECODED: dict[bytes, FieldSet] = {}
_ENCODED: dict[FieldSet, bytes] = {}


def encode_fields(paths: Iterable[Path]) -> Obj:
    """The FieldsV1 document of ``paths``: nested ``{}`` maps, ``"."`` marking a member that
    also has members below it."""
    root: Obj = {}
    listed = set(paths)
    for path in sorted(listed):
        node = root
        for element in path:
            node = node.setdefault(element, {})
    for path in listed:
        node = root
        for element in path:
            node = node[element]
        if node and "." not in node:
            node["."] = {}
    return root


def decode_fields(document: Any) -> FieldSet:
    """The paths of a FieldsV1 document (anything malformed below a key is ignored)."""
    out: set[Path] = set()

    def visit(node: Mapping[str, Any], prefix: Path) -> None:
        for key, child in node.items():
            if key == ".":
                if prefix:
                    out.add(prefix)
                continue
            path = (*prefix, str(key))
            if isinstance(child, Mapping) and child:
                visit(child, path)
            else:
                out.add(path)

    if isinstance(document, Mapping):
        visit(document, ())
    return frozenset(out)


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= MEMO_SIZE:
        del memo[next(iter(memo))]
    memo[key] = value


def fields_of(document: Any) -> FieldSet:
    """:func:`decode_fields` of ``document``, decoded once per distinct document."""
    if not isinstance(document, dict):
        return decode_fields(document)
    try:
        key = orjson.dumps(document)
    except TypeError:
        # Not JSON (a key that is no string, an integer beyond 64 bits): decoded every time.
        return decode_fields(document)
    found = _DECODED.get(key)
    if found is None:
        found = decode_fields(document)
        _remember(_DECODED, key, found)
    return found


def document_of(fields: FieldSet) -> Obj:
    """:func:`encode_fields` of ``fields``: a new document, encoded once per distinct set."""
    text = _ENCODED.get(fields)
    if text is None:
        text = orjson.dumps(encode_fields(fields))
        _remember(_ENCODED, fields, text)
        if text not in _DECODED:
            _remember(_DECODED, text, fields)
    document: Obj = orjson.loads(text)
    return document
