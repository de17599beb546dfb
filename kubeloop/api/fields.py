"""Field selectors: the ``fieldSelector=`` grammar of apimachinery's ``fields`` package.

A selector is an AND of ``field=value`` / ``field==value`` / ``field!=value`` terms separated
by commas. Values escape ``\\``, ``,`` and ``=`` with a backslash (``!`` needs no escape: the
operator is the first ``!=``, ``==`` or ``=`` of a term, so a field name cannot contain one).
There is no whitespace trimming. A field the object does not have reads as ``""``, so
``spec.nodeName=`` matches unscheduled pods and ``x!=v`` matches objects without ``x``.

Terms are sorted by their raw text before parsing, as upstream does, which fixes both the order
of :attr:`FieldSelector.requirements` and the string form. A term whose field and value are both
empty (``=``) selects everything and is dropped.

Which fields a resource supports is the server's business; :meth:`FieldSelector.check_supported`
raises upstream's ``field label not supported: <field>`` for the first unsupported one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

EQUALS = "="
NOT_EQUALS = "!="
_TERM_OPERATORS = ("!=", "==", "=")


class FieldSelectorError(ValueError):
    """A field selector that cannot be parsed, or uses an unsupported field; upstream's message."""


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """``field = value`` (``operator`` ``"="``) or ``field != value`` (``"!="``)."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        equal = fields.get(self.field, "") == self.value
        return equal if self.operator == EQUALS else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


class FieldSelector:
    """An AND of :class:`FieldRequirement` s, or the selector that matches nothing."""

    __slots__ = ("_nothing", "requirements")

    requirements: tuple[FieldRequirement, ...]
    _nothing: bool

    def __init__(self, requirements: Iterable[FieldRequirement] = (), *, nothing: bool = False) -> None:
        object.__setattr__(self, "requirements", () if nothing else tuple(requirements))
        object.__setattr__(self, "_nothing", nothing)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FieldSelector is immutable")

    @classmethod
    def everything(cls) -> FieldSelector:
        return _EVERYTHING

    @classmethod
    def nothing(cls) -> FieldSelector:
        return _NOTHING

    @classmethod
    def from_set(cls, fields: Mapping[str, str]) -> FieldSelector:
        """Equality on every pair (``fields.SelectorFromSet``)."""
        return cls(FieldRequirement(k, EQUALS, v) for k, v in fields.items())

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object with these field values is selected; missing fields read as ``""``."""
        if self._nothing:
            return False
        return all(r.matches(fields) for r in self.requirements)

    def empty(self) -> bool:
        return not self._nothing and not self.requirements

    def field_names(self) -> set[str]:
        return {r.field for r in self.requirements}

    def requires_exact_match(self, field: str) -> str | None:
        """The value an ``=`` term demands for ``field`` (e.g. ``metadata.name``), if any."""
        for r in self.requirements:
            if r.field == field and r.operator == EQUALS:
                return r.value
        return None

    def check_supported(self, supported: Collection[str]) -> None:
        """Raise upstream's error for the first field (in term order) not in ``supported``."""
        for r in self.requirements:
            if r.field not in supported:
                raise FieldSelectorError(f"field label not supported: {r.field}")

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return "FieldSelector.nothing()" if self._nothing else f"FieldSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


_EVERYTHING = FieldSelector()
_NOTHING = FieldSelector(nothing=True)


def escape_value(value: str) -> str:
    """Escape a literal value for a field selector (``\\`` first, then ``,`` and ``=``)."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(text: str) -> str:
    """Undo :func:`escape_value`; unknown escapes and bare ``,`` / ``=`` are errors."""
    if "\\" not in text and "," not in text and "=" not in text:
        return text
    out: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            if ch not in "\\,=":
                raise FieldSelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            # Upstream prints the rune with %v, i.e. as its code point number.
            raise FieldSelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise FieldSelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped; escapes stay in the terms."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in _TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` string (upstream ``fields.ParseSelector``).

    Raises :class:`FieldSelectorError`, e.g. ``invalid selector: 'a'; can't understand 'a'``.
    """
    requirements: list[FieldRequirement] = []
    for term in sorted(_split_terms(text)):
        if not term:
            continue
        parts = _split_term(term)
        if parts is None:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, raw_value = parts
        value = unescape_value(raw_value)
        if not field and not value:
            continue
        requirements.append(FieldRequirement(field, NOT_EQUALS if op == "!=" else EQUALS, value))
    return FieldSelector(requirements)
