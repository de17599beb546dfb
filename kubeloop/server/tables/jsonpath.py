"""The JSONPath subset CRD printer columns use (``.status.replicas``,
``.spec.template.spec.containers[*].image``, ``.status.conditions[?(@.type=="Ready")].status``).

A path is a sequence of steps: a field (``.name`` or ``['name']``), an index (``[0]``, ``[-1]``),
every element or value (``[*]`` or ``.*``), or a filter on list elements
(``[?(@.field == "value")]`` with ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` and a string or
number literal, or ``[?(@.field)]`` for presence). Missing keys give no result, as with
upstream's ``AllowMissingKeys(true)``. An optional surrounding ``{...}`` is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Step = Callable[[Any], Iterator[Any]]


class JSONPathError(ValueError):
    """The path is outside the supported subset or malformed."""


_NAME = re.compile(r"[A-Za-z0-9_\-$]+")
_FILTER = re.compile(
    r"""\?\(\s*@((?:\.[A-Za-z0-9_\-]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*("(?:[^"\\]|\\.)*"|'[^']*'|-?\d+(?:\.\d+)?)\s*)?\)""")


def _field(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]
    return step


def _index(position: int) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list) and -len(value) <= position < len(value):
            yield value[position]
    return step


def _every(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        yield from value
    elif isinstance(value, dict):
        yield from value.values()


def _literal(text: str) -> Any:
    if text[0] in "\"'":
        return text[1:-1].replace('\\"', '"')
    return float(text) if "." in text else int(text)


def _compare(left: Any, operator: str, right: Any) -> bool:
    if operator == "==":
        return bool(left == right)
    if operator == "!=":
        return bool(left != right)
    numeric = (int, float)
    if not (isinstance(left, numeric) and isinstance(right, numeric)) or isinstance(left, bool):
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[operator]


def _filter(fields: list[str], operator: str | None, literal: Any) -> Step:
    def lookup(item: Any) -> tuple[bool, Any]:
        for name in fields:
            if not isinstance(item, dict) or name not in item:
                return False, None
            item = item[name]
        return True, item

    def step(value: Any) -> Iterator[Any]:
        for item in value if isinstance(value, list) else ():
            found, field_value = lookup(item)
            if found and (operator is None or _compare(field_value, operator, literal)):
                yield item
    return step


def _bracket(content: str) -> Step:
    content = content.strip()
    if content == "*":
        return _every
    if re.fullmatch(r"-?\d+", content):
        return _index(int(content))
    if len(content) >= 2 and content[0] == content[-1] and content[0] in "'\"":
        return _field(content[1:-1])
    match = _FILTER.fullmatch(content)
    if match:
        fields = match.group(1).split(".")[1:]
        literal = _literal(match.group(3)) if match.group(3) is not None else None
        return _filter(fields, match.group(2), literal)
    raise JSONPathError(f"unsupported JSONPath step [{content}]")


@dataclass(frozen=True)
class JSONPath:
    """A parsed path; :meth:`find` returns every match in document order."""

    text: str
    steps: tuple[Step, ...]

    def find(self, document: Any) -> list[Any]:
        current = [document]
        for step in self.steps:
            current = [found for value in current for found in step(value)]
        return current


def _closing_bracket(text: str, start: int) -> int:
    quote = ""
    depth = 0
    for position in range(start, len(text)):
        char = text[position]
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return position
    raise JSONPathError(f"unterminated [ in {text!r}")


def parse_jsonpath(text: str) -> JSONPath:
    """Parse ``text``; raises :class:`JSONPathError` when it is outside the subset."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    if body.startswith("$"):
        body = body[1:]
    steps: list[Step] = []
    position = 0
    while position < len(body):
        char = body[position]
        if position == 0 and _NAME.match(body):
            # A leading bare name (``spec.replicas``) reads like ``.spec.replicas``.
            body = "." + body
            continue
        if char == ".":
            if body.startswith("..", position):
                raise JSONPathError(f"recursive descent is not supported: {text!r}")
            if body.startswith(".*", position):
                steps.append(_every)
                position += 2
                continue
            match = _NAME.match(body, position + 1)
            if match is None:
                raise JSONPathError(f"expected a field name at {position + 1} in {text!r}")
            steps.append(_field(match.group(0)))
            position = match.end()
        elif char == "[":
            end = _closing_bracket(body, position)
            steps.append(_bracket(body[position + 1:end]))
            position = end + 1
        else:
            raise JSONPathError(f"unexpected {char!r} at {position} in {text!r}")
    return JSONPath(text, tuple(steps))
