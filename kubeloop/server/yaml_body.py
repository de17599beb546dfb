"""YAML request bodies read into the JSON form, with the bounds kube-apiserver's YAML decoder has.

kube-apiserver reads YAML with ``sigs.k8s.io/yaml`` (goyaml v2 underneath, then JSON), and that
decoder refuses what would let a small body grow into a huge object. :func:`load_yaml` keeps the
same promises on top of PyYAML's pure-Python loader:

- nesting deeper than :data:`kubeloop.server.nesting.MAX_COMPOSED_DEPTH` is refused while
  composing, so a body of 600 ``[`` never reaches Python's recursion limit (goyaml: ``exceeded
  max depth``); the caller then holds the document to the server's exact bound;
- aliases may not multiply the document: once expanded, more than 100 nodes reached through
  aliases, in a document of more than 1,000, may make up at most the share goyaml's
  ``allowedAliasRatio`` (``yaml.v2`` ``decode.go``) allows, else the body is refused with its
  text, ``document contains excessive aliasing``. goyaml checks the ratio as it decodes; here it
  is checked once on the totals, before anything is expanded. An alias inside its own anchor
  (an infinite document) is refused the same way;
- ``!!binary`` is the decoded bytes as a string (goyaml decodes it into a Go string, and JSON
  replaces invalid UTF-8 with U+FFFD), plain timestamps stay strings (goyaml only makes a time
  of them for a ``time.Time`` field), ``!!set`` is a map of nulls, and keys that are not strings
  are written as JSON writes them (``1`` -> ``"1"``).

Errors are :class:`YamlBodyError`, whose text the caller wraps in its 400.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from kubeloop.server.nesting import MAX_COMPOSED_DEPTH, MAX_DEPTH

_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000
"""goyaml's ``alias_ratio_range_low`` / ``_high``: the allowed share falls from 0.99 to 0.10."""


class YamlBodyError(ValueError):
    """A body the YAML decoder refuses; ``str()`` is the text for the 400."""


def allowed_alias_ratio(decoded: int) -> float:
    """The share of alias-reached nodes goyaml allows in a document of ``decoded`` nodes."""
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def excessive_aliasing(decoded: int, aliased: int) -> bool:
    """goyaml's test, on a document that expands to ``decoded`` nodes, ``aliased`` through aliases."""
    return aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with a bounded composition depth."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        if self._depth > MAX_COMPOSED_DEPTH:
            raise YamlBodyError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


# Plain timestamps stay strings: drop the implicit resolver PyYAML adds for them.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_set(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, None]:
    return {key: None for key in loader.construct_mapping(node)}


_Loader.add_constructor("tag:yaml.org,2002:set", _construct_set)


def _expansion(root: Node) -> tuple[int, int]:
    """(nodes, nodes reached through an alias) of the document once every alias is expanded.

    Aliases are the same node objects as their anchors; walking in document order, the first
    visit of a node is its anchor (YAML defines an anchor before any alias to it) and every
    later one an alias. Sizes are memoised per node, so a bomb is measured without expanding it.
    """
    sizes: dict[int, tuple[int, int]] = {}
    pending: set[int] = set()

    def visit(node: Node) -> tuple[int, int]:
        key = id(node)
        pending.add(key)
        total, aliased = 1, 0
        children: list[Node]
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        for child in children:
            child_key = id(child)
            if child_key in pending:
                raise YamlBodyError("yaml: document contains excessive aliasing")
            known = sizes.get(child_key)
            if known is None:
                size, under = visit(child)
                total, aliased = total + size, aliased + under
            else:
                total, aliased = total + known[0], aliased + known[0]
        pending.discard(key)
        sizes[key] = (total, aliased)
        return total, aliased

    return visit(root)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return re.sub(r"\+00:00$", "Z", value.isoformat())
    if isinstance(value, datetime.date):
        return value.isoformat() + "T00:00:00Z"
    raise TypeError(f"json: unsupported type: {type(value).__name__}")


def load_yaml(raw: bytes) -> Any:
    """The JSON value of a one-document YAML body (``None`` for an empty one)."""
    loader = _Loader(raw)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        decoded, aliased = _expansion(root)
        if excessive_aliasing(decoded, aliased):
            raise YamlBodyError("yaml: document contains excessive aliasing")
        document = loader.construct_document(root)
    except yaml.YAMLError as error:
        raise YamlBodyError(str(error)) from None
    finally:
        loader.dispose()
    try:
        # YAML-only values (bytes, explicit timestamps, non-string keys) become JSON ones.
        return orjson.loads(orjson.dumps(document, default=_json_default, option=orjson.OPT_NON_STR_KEYS))
    except orjson.JSONEncodeError as error:
        raise YamlBodyError(str(error)) from None
