"""Syntax of names, label keys and label values, with upstream's error strings.

Each ``*_errors`` function returns the list of messages kube-apiserver would give for the
value (empty when valid). Validation code wraps them into field errors.
"""

from __future__ import annotations

import functools
import re

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT_CHAR}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_MAX_LENGTH = 63
_QUALIFIED_NAME_RE = re.compile(f"^{QUALIFIED_NAME_FMT}$")

LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH = 63
_LABEL_VALUE_RE = re.compile(f"^{LABEL_VALUE_FMT}$")

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH = 63
_DNS1123_LABEL_RE = re.compile(f"^{DNS1123_LABEL_FMT}$")

DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")

DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_DNS1035_LABEL_RE = re.compile(f"^{DNS1035_LABEL_FMT}$")


# The checks are pure and the same keys and values come back on every write (labels, names),
# so their results are cached; the public functions hand out fresh lists.


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Upstream's wording for a regex mismatch, examples included."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


@functools.lru_cache(maxsize=8192)
def _qualified_name_errors(value: str) -> tuple[str, ...]:
    """Errors for a label or annotation key: ``[prefix/]name``, prefix a DNS-1123 subdomain."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + e for e in dns1123_subdomain_errors(prefix))
    else:
        return (
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errors.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.match(name):
        errors.append(
            "name part " + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def _label_value_errors(value: str) -> tuple[str, ...]:
    errors: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errors.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.match(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def _dns1123_label_errors(value: str) -> tuple[str, ...]:
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.match(value):
        errors.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def _dns1123_subdomain_errors(value: str) -> tuple[str, ...]:
    errors: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errors.append(regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def _dns1035_label_errors(value: str) -> tuple[str, ...]:
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.match(value):
        errors.append(regex_error(_DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return tuple(errors)


def qualified_name_errors(value: str) -> list[str]:
    """Errors for a label or annotation key: ``[prefix/]name``, prefix a DNS-1123 subdomain."""
    return list(_qualified_name_errors(value))


def label_value_errors(value: str) -> list[str]:
    return list(_label_value_errors(value))


def dns1123_label_errors(value: str) -> list[str]:
    return list(_dns1123_label_errors(value))


def dns1123_subdomain_errors(value: str) -> list[str]:
    return list(_dns1123_subdomain_errors(value))


def dns1035_label_errors(value: str) -> list[str]:
    return list(_dns1035_label_errors(value))


def object_name_errors(name: str, prefix: bool = False) -> list[str]:
    """Errors for an object name that must be a DNS-1123 subdomain.

    With ``prefix`` (a ``generateName``), a trailing dash is allowed: upstream replaces the
    last two characters with ``a`` before checking.
    """
    if prefix and len(name) > 1 and name.endswith("-"):
        name = name[:-2] + "a"
    return dns1123_subdomain_errors(name)
