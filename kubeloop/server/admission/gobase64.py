"""Byte fields (Secret ``data``, ConfigMap ``binaryData``) read as kube-apiserver reads them.

Upstream decodes a JSON string into a ``[]byte`` field with Go's ``encoding/base64``
``StdEncoding`` (padded, standard alphabet, not strict about trailing bits), which skips
``\\r`` and ``\\n`` anywhere in the input: a PEM-like value wrapped over several lines (the
kubernetes.io TLS Secret example) is accepted, and what is stored and returned is the
canonical one-line encoding of the decoded bytes. Any other malformed value fails the decoding
of the whole request body, a 400 ``BadRequest`` with Go's ``illegal base64 data at input byte
N`` (N counts the skipped line breaks too) wrapped as the API server wraps decoding errors.

:func:`decode_std` follows ``Encoding.Decode`` / ``decodeQuantum`` for the error offsets.
"""

from __future__ import annotations

import base64
from typing import Any

from kubeloop.api.status import ApiError, bad_request_error

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_VALUES = {c: i for i, c in enumerate(_ALPHABET)}
_LINE_BREAKS = "\r\n"
_PAD = "="


class CorruptInputError(ValueError):
    """Go's ``base64.CorruptInputError``: the offset of the first bad byte."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def _quantum(src: str, si: int) -> tuple[int, list[int], CorruptInputError | None]:
    """One group of up to four symbols from ``si``: (next index, 6-bit values, trailing error).

    Raises :class:`CorruptInputError` for a bad symbol or bad padding.
    """
    values: list[int] = []
    while len(values) < 4:
        if si == len(src):
            if not values:
                return si, values, None
            # A group cut short: StdEncoding needs its padding.
            raise CorruptInputError(si - len(values))
        char = src[si]
        si += 1
        if char in _VALUES:
            values.append(_VALUES[char])
            continue
        if char in _LINE_BREAKS:
            continue
        if char != _PAD or len(values) < 2:
            raise CorruptInputError(si - 1)
        if len(values) == 2:  # "==" expected; the first "=" is consumed
            while si < len(src) and src[si] in _LINE_BREAKS:
                si += 1
            if si == len(src):
                raise CorruptInputError(len(src))
            if src[si] != _PAD:
                raise CorruptInputError(si - 1)
            si += 1
        while si < len(src) and src[si] in _LINE_BREAKS:
            si += 1
        trailing = CorruptInputError(si) if si < len(src) else None
        return si, values, trailing
    return si, values, None


def decode_std(src: str) -> bytes:
    """``base64.StdEncoding.DecodeString``; raises :class:`CorruptInputError` as Go reports it."""
    out = bytearray()
    si = 0
    while True:
        si, values, trailing = _quantum(src, si)
        if not values:
            return bytes(out)
        count = len(values)
        padded = values + [0] * (4 - count)
        word = padded[0] << 18 | padded[1] << 12 | padded[2] << 6 | padded[3]
        out.extend(word.to_bytes(3, "big")[: count - 1])
        if trailing is not None:
            raise trailing
        if count < 4:
            return bytes(out)


def canonical(src: str) -> str:
    """The one-line standard encoding of what ``src`` decodes to (raises as :func:`decode_std`)."""
    return base64.b64encode(decode_std(src)).decode("ascii")


def canonicalize_byte_map(obj: dict[str, Any], field_name: str) -> None:
    """Rewrite every string value of ``obj[field_name]`` canonically, in place.

    A value that does not decode fails the whole body: 400, as upstream's decoder does.
    Non-string values are left for validation to report.
    """
    values = obj.get(field_name)
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        if not isinstance(value, str):
            continue
        try:
            values[key] = canonical(value)
        except CorruptInputError as error:
            raise _undecodable(obj, str(error)) from None


def _undecodable(obj: dict[str, Any], why: str) -> ApiError:
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    version = str(api_version).rsplit("/", 1)[-1]
    return bad_request_error(f'{kind} in version "{version}" cannot be handled as a {kind}: {why}')
