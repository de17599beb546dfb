"""Encoders by media type: the bytes of a response body.

Go's ``json.Encoder`` (what apimachinery's JSON serializer writes with) ends every document
with a newline, so every JSON body and every watch frame here does too. Protobuf bodies are
:mod:`kubeloop.server.codec.protobuf`'s (the ``k8s\\x00`` magic and a ``runtime.Unknown``
envelope); which endpoints may answer in it is :mod:`kubeloop.server.codec.serving`'s call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import yaml

from kubeloop.server.codec import protobuf
from kubeloop.server.codec.negotiation import JSON, PROTOBUF, YAML

Encoder = Callable[[Any], bytes]


def encode_json(body: Any) -> bytes:
    """``body`` as JSON with the trailing newline Go's encoder writes; 500 Status when it holds
    something JSON cannot carry."""
    return orjson.dumps(body) + b"\n"


def encode_yaml(body: Any) -> bytes:
    """``body`` as YAML the way ``sigs.k8s.io/yaml`` writes it: keys sorted, block style,
    sequences not indented under their key."""
    text: str = yaml.safe_dump(body, default_flow_style=False, sort_keys=True, allow_unicode=True, width=1 << 30)
    return text.encode()


ENCODERS: dict[str, Encoder] = {JSON: encode_json, YAML: encode_yaml, PROTOBUF: protobuf.encode}
