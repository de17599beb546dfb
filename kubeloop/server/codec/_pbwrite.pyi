"""Types of the C protobuf writer (kubeloop/server/codec/_pbwrite.c; its contract is there)."""

from collections.abc import Callable
from typing import Any

ABI: int
REPEATED: int
MAP: int
INLINE: int
KIND_STRING: int
KIND_BYTES: int
KIND_BOOL: int
KIND_VARINT: int
KIND_DOUBLE: int
KIND_FLOAT: int
KIND_MESSAGE: int
KIND_DELIMITED: int
KIND_WRITER: int
KIND_RAW: int
KIND_TIME: int
KIND_MICROTIME: int
KIND_QUANTITY: int
KIND_INTSTR: int

def init(mapping_abc: type, b64decode: Callable[[Any], bytes], dumps: Callable[[Any], bytes], /) -> None: ...
def reserve() -> int: ...
def define(ident: int, fields: tuple[tuple[str, int, bytes, int, bytes, int, Any, bytes], ...], /) -> None: ...
def write(ident: int, obj: Any, /) -> bytes: ...
def write_into(ident: int, obj: Any, out: bytearray, /) -> None: ...
def delimited(ident: int, obj: Any, head: bytes, tail: bytes, /) -> bytes: ...
