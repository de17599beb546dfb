"""Label selectors: the ``labelSelector=`` grammar, ``metav1.LabelSelector`` and validation.

Semantics follow apimachinery's ``labels`` package and ``metav1.LabelSelectorAsSelector``:

* a parsed selector is an AND of requirements sorted by key (stable for equal keys), each
  requirement keeping the operator spelling it was written with (``=`` and ``==`` both mean
  equality but print back as written);
* ``!=`` and ``notin`` match objects that lack the key; ``>`` / ``<`` compare the label value as
  a 64-bit integer and never match a value that is not one;
* ``Selector.everything()`` (also the empty string and an empty ``LabelSelector``) matches every
  object; ``Selector.nothing()`` (a missing ``LabelSelector``) matches none and prints as ``""``
  like upstream's ``nothingSelector``;
* the string form is what ``Scale.status.selector`` carries (the registry uses
  ``selector.String()``); kubectl's ``FormatLabelSelector`` differs only for the empty selector
  (``<none>``) and invalid ones (``<error>``): see :func:`format_label_selector`.

Error messages reproduce upstream's parser texts, so a bad ``labelSelector`` query answers the
same 400 message as kube-apiserver.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.names import label_value_errors, qualified_name_errors
from kubeloop.api.status import FieldError, forbidden, go_quote, invalid, not_supported, required, type_invalid

# Operator spellings (upstream ``selection.Operator`` values).
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_ALL_OPERATORS = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)
_INT64 = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# ``metav1.LabelSelectorOperator`` -> selection operator.
_EXPRESSION_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


class SelectorError(ValueError):
    """A selector that cannot be parsed or built; the message is upstream's."""


def parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: optional sign, decimal digits, int64 range."""
    if not _INT64.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key <operator> values`` term. ``values`` keep their given order (parsing sorts and
    de-duplicates them, as upstream's string sets do); the string form sorts them."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in (NOT_EQUALS, NOT_IN):
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            value = labels.get(self.key)
            if value is None or len(self.values) != 1:
                return False
            have, want = parse_int64(value), parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({values})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{values}"


def new_requirement(key: str, operator: str, values: Sequence[str] = (), path: str = "") -> Requirement:
    """Build a validated requirement (upstream ``labels.NewRequirement``).

    ``path`` prefixes the field paths of the errors; upstream's parser passes none, which its
    field errors print as ``<nil>`` for the key (see :func:`parse_selector`).
    """
    errors = _requirement_errors(key, operator, list(values), path)
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values))


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _requirement_errors(key: str, operator: str, values: list[str], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    key_errors = qualified_name_errors(key)
    if key_errors:
        errors.append(invalid(_child(path, "key"), key, "; ".join(key_errors)))
    values_path = _child(path, "values")
    if operator in (IN, NOT_IN):
        if not values:
            errors.append(invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errors.append(invalid(values_path, values, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errors.append(invalid(values_path, values, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errors.append(invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                errors.append(
                    invalid(f"{values_path}[{i}]", value, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    else:
        errors.append(not_supported(_child(path, "operator"), operator, _ALL_OPERATORS))
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(invalid(f"{values_path}[{i}][{key}]", value, "; ".join(value_errors)))
    return errors


def _aggregate(errors: Sequence[FieldError | str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message, or ``[a, b]`` without duplicates."""
    messages: list[str] = []
    for error in errors:
        text = str(error)
        if text not in messages:
            messages.append(text)
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


class Selector:
    """An AND of :class:`Requirement` s, or the selector that matches nothing.

    Immutable; equality compares requirements (and the nothing flag).
    """

    __slots__ = ("_nothing", "_pairs", "requirements")

    requirements: tuple[Requirement, ...]
    _nothing: bool
    _pairs: dict[str, str] | None

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        ordered = tuple(sorted(requirements, key=lambda r: r.key)) if not nothing else ()
        object.__setattr__(self, "requirements", ordered)
        object.__setattr__(self, "_nothing", nothing)
        # A selector of single-value equalities (every workload's matchLabels) matches when its
        # pairs are a subset of the labels: one C-level set comparison instead of a loop.
        pairs: dict[str, str] = {}
        for r in ordered:
            if r.operator not in (EQUALS, DOUBLE_EQUALS, IN) or len(r.values) != 1 or r.key in pairs:
                object.__setattr__(self, "_pairs", None)
                break
            pairs[r.key] = r.values[0]
        else:
            object.__setattr__(self, "_pairs", pairs)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Selector is immutable")

    @classmethod
    def everything(cls) -> Selector:
        return _EVERYTHING

    @classmethod
    def nothing(cls) -> Selector:
        return _NOTHING

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> Selector:
        """Equality on every pair (``labels.SelectorFromSet``), without validation."""
        return cls(Requirement(k, EQUALS, (v,)) for k, v in labels.items())

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._nothing:
            return False
        pairs = self._pairs
        if pairs is not None:
            return pairs.items() <= labels.items()
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        """True when the selector restricts nothing (it matches every object)."""
        return not self._nothing and not self.requirements

    def matches_nothing(self) -> bool:
        return self._nothing

    def requires_exact_match(self, key: str) -> str | None:
        """The single value the selector demands for ``key`` (``=``, ``==`` or a one-value ``in``)."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def add(self, *requirements: Requirement) -> Selector:
        if self._nothing:
            return self
        return Selector((*self.requirements, *requirements))

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "Selector.nothing()"
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


_EVERYTHING = Selector()
_NOTHING = Selector(nothing=True)


# --- the ``labelSelector=`` grammar -------------------------------------------------------------

_END, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _IDENT, _IN, _LT, _NOT_EQ, _NOT_IN, _OPEN = range(13)
_SYMBOL_TOKENS = {")": _CLOSE, ",": _COMMA, "!": _NOT, "=": _EQ, ">": _GT, "<": _LT, "(": _OPEN}
_TWO_CHAR_TOKENS = {"==": _DOUBLE_EQ, "!=": _NOT_EQ}
_KEYWORDS = {"in": _IN, "notin": _NOT_IN}
_OPERATOR_TOKENS = {
    _IN: IN,
    _EQ: EQUALS,
    _DOUBLE_EQ: DOUBLE_EQUALS,
    _GT: GREATER_THAN,
    _LT: LESS_THAN,
    _NOT_IN: NOT_IN,
    _NOT_EQ: NOT_EQUALS,
}


_TOKEN = re.compile(r"[ \t\r\n]*(?:(==|!=|[=!(),<>])|([^ \t\r\n=!(),<>]+))")


def _lex(text: str) -> list[tuple[int, str]]:
    """Tokens as upstream's lexer makes them; a NUL character ends the input, as there."""
    end = text.find("\0")
    if end >= 0:
        text = text[:end]
    tokens: list[tuple[int, str]] = []
    for match in _TOKEN.finditer(text):
        symbol, word = match.groups()
        if symbol is not None:
            tokens.append((_TWO_CHAR_TOKENS.get(symbol) or _SYMBOL_TOKENS[symbol], symbol))
        elif word is not None:
            tokens.append((_KEYWORDS.get(word, _IDENT), word))
    tokens.append((_END, ""))
    return tokens


class _Parser:
    """Recursive descent over the token list, mirroring upstream's parser and its messages.

    In a value position the keywords ``in`` / ``notin`` are plain identifiers.
    """

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.tokens[self.pos]
        if values and tok in (_IN, _NOT_IN):
            tok = _IDENT
        return tok, lit

    def take(self, values: bool = True) -> tuple[int, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok == _END:
                return requirements
            if tok not in (_IDENT, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except SelectorError as exc:
                raise SelectorError(f"unable to parse requirement: {exc}") from None
            tok, lit = self.take()
            if tok == _END:
                return requirements
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.peek()
            if tok not in (_IDENT, _NOT):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        operator = ""
        tok, lit = self.take()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, lit = self.take()
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        key_errors = qualified_name_errors(key)
        if key_errors:
            raise SelectorError(str(invalid("<nil>", key, "; ".join(key_errors))))
        if operator == DOES_NOT_EXIST or self.peek()[0] in (_END, _COMMA):
            # ``!key`` never takes an operator: ``!x=a`` fails later on the unexpected '='.
            return new_requirement(key, operator or EXISTS, ())
        tok, lit = self.take(values=False)
        binary = _OPERATOR_TOKENS.get(tok)
        if binary is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        values = self.value_set() if binary in (IN, NOT_IN) else self.exact_value()
        return new_requirement(key, binary, sorted(values))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _CLOSE:
            self.take()
            return {""}
        if tok not in (_IDENT, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.take()[0] != _CLOSE:
            raise SelectorError(f"found '{lit}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        """A comma-separated list in which empty items stand for the empty value."""
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _IDENT:
                values.add(lit)
                after, after_lit = self.peek()
                if after == _COMMA:
                    continue
                if after == _CLOSE:
                    return values
                raise SelectorError(f"found '{after_lit}', expected: ',' or ')'")
            if tok == _COMMA:
                if not values:
                    values.add("")
                after = self.peek()[0]
                if after in (_CLOSE, _COMMA):
                    values.add("")
                if after == _CLOSE:
                    return values
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.peek()
        if tok in (_END, _COMMA):
            return {""}
        tok, lit = self.take()
        if tok == _IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


@functools.lru_cache(maxsize=512)
def parse_selector(text: str) -> Selector:
    """Parse a ``labelSelector`` string (upstream ``labels.Parse``).

    Results are cached (selectors are immutable): servers and informers see the same few
    selector strings over and over.

    Raises :class:`SelectorError` with upstream's message, e.g. ``unable to parse requirement:
    values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer``.
    """
    return Selector(_Parser(text).parse())


# --- metav1.LabelSelector ----------------------------------------------------------------------


def selector_from_label_selector(label_selector: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: ``None`` matches nothing, ``{}`` everything.

    Raises :class:`SelectorError` on the first invalid term, with upstream's message.
    """
    if label_selector is None:
        return _NOTHING
    if not isinstance(label_selector, Mapping):
        raise SelectorError(f"a label selector must be an object, not {_json_kind(label_selector)}")
    match_labels = label_selector.get("matchLabels") or {}
    expressions = label_selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise SelectorError(f"matchLabels must be an object, not {_json_kind(match_labels)}")
    if not isinstance(expressions, list):
        raise SelectorError(f"matchExpressions must be an array, not {_json_kind(expressions)}")
    if not match_labels and not expressions:
        return _EVERYTHING
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        requirements.append(new_requirement(str(key), EQUALS, (_as_str(value),)))
    for expression in expressions:
        if not isinstance(expression, Mapping):
            raise SelectorError(f"a match expression must be an object, not {_json_kind(expression)}")
        operator = expression.get("operator")
        op = _EXPRESSION_OPERATORS.get(operator) if isinstance(operator, str) else None
        if op is None:
            raise SelectorError(f"{go_quote(str(operator or ''))} is not a valid label selector operator")
        values = expression.get("values") or []
        if not isinstance(values, list):
            raise SelectorError(f"values must be an array, not {_json_kind(values)}")
        requirements.append(new_requirement(_as_str(expression.get("key")), op, [_as_str(v) for v in values]))
    return Selector(requirements)


def label_selector_string(label_selector: Mapping[str, Any] | None) -> str:
    """The selector's string form as the Scale subresource reports it (``status.selector``).

    ``None`` gives ``""`` (upstream's nothing selector prints empty). Raises
    :class:`SelectorError` for an invalid selector (the registry answers 400 then).
    """
    return str(selector_from_label_selector(label_selector))


def format_label_selector(label_selector: Mapping[str, Any] | None) -> str:
    """kubectl's ``metav1.FormatLabelSelector``: ``<none>`` when empty, ``<error>`` when invalid."""
    try:
        text = label_selector_string(label_selector)
    except SelectorError:
        return "<error>"
    return text or "<none>"


def validate_label_selector(label_selector: Any, path: str) -> list[FieldError]:
    """Field errors for a ``metav1.LabelSelector`` at ``path`` (unversioned validation).

    Mirrors ``ValidateLabelSelector``: label keys and values of ``matchLabels`` (reported on
    ``<path>.matchLabels``), and per expression the operator, ``values`` required for
    ``In``/``NotIn`` and forbidden for ``Exists``/``DoesNotExist``, the key and each value.
    ``None`` is valid (whether a selector is required is the caller's rule).
    """
    if label_selector is None:
        return []
    if not isinstance(label_selector, Mapping):
        return [type_invalid(path, label_selector, "must be an object")]
    errors: list[FieldError] = []
    labels_path = f"{path}.matchLabels"
    match_labels = label_selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        errors.extend(validate_labels(match_labels, labels_path))
    elif match_labels is not None:
        errors.append(type_invalid(labels_path, match_labels, "must be an object"))
    expressions = label_selector.get("matchExpressions")
    if expressions is None:
        return errors
    if not isinstance(expressions, list):
        errors.append(type_invalid(f"{path}.matchExpressions", expressions, "must be an array"))
        return errors
    for i, expression in enumerate(expressions):
        errors.extend(_validate_expression(expression, f"{path}.matchExpressions[{i}]"))
    return errors


def validate_labels(labels: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value, both on ``path``."""
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors.extend(invalid(path, key, message) for message in qualified_name_errors(str(key)))
        if not isinstance(value, str):
            errors.append(type_invalid(path, value, "must be a string"))
            continue
        errors.extend(invalid(path, value, message) for message in label_value_errors(value))
    return errors


def _validate_expression(expression: Any, path: str) -> list[FieldError]:
    if not isinstance(expression, Mapping):
        return [type_invalid(path, expression, "must be an object")]
    errors: list[FieldError] = []
    operator = expression.get("operator")
    values = expression.get("values") or []
    values_path = f"{path}.values"
    if not isinstance(values, list):
        return [type_invalid(values_path, values, "must be an array")]
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(required(values_path, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(forbidden(values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = expression.get("key")
    key_path = f"{path}.key"
    if isinstance(key, str):
        errors.extend(invalid(key_path, key, message) for message in qualified_name_errors(key))
    else:
        errors.append(type_invalid(key_path, key, "must be a string"))
    for i, value in enumerate(values):
        if not isinstance(value, str):
            errors.append(type_invalid(f"{values_path}[{i}]", value, "must be a string"))
            continue
        errors.extend(invalid(f"{values_path}[{i}]", value, message) for message in label_value_errors(value))
    return errors


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise SelectorError(f"label selector keys and values must be strings, not {_json_kind(value)}")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    return "array"
