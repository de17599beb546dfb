"""How a watch stream frames its events, per negotiated media type.

JSON streams are one ``{"type":...,"object":...}`` document per event, newline-terminated
(upstream's ``json.Framer``), served as ``application/json``; protobuf streams are
length-prefixed ``WatchEvent`` messages (``protobuf.LengthDelimitedFramer``, see
:func:`kubeloop.server.codec.protobuf.encode_watch_event`), served as
``application/vnd.kubernetes.protobuf;stream=watch`` (``serveWatchHandler`` in k8s.io/apiserver
pkg/endpoints/handlers/watch.go). A :class:`WatchFraming` also names itself in the keys of the
per-event encoding cache, so watchers of either kind share one encoding per event, and measures
the object inside a frame (what ``apiserver_watch_events_sizes`` observes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubeloop.server.codec import protobuf
from kubeloop.server.codec.bodies import message_fields
from kubeloop.server.codec.encoding import encode_json
from kubeloop.server.codec.negotiation import JSON, PROTOBUF

Obj = dict[str, Any]


@dataclass(frozen=True)
class WatchFraming:
    """``frame(type, object)`` is one event's bytes; ``object_size(frame)`` the bytes of its
    object; ``content_type`` the stream's; ``key`` tells its frames apart in the event cache."""

    content_type: str
    key: str
    frame: Callable[[str, Any], bytes]
    object_size: Callable[[bytes], int]


def json_event(event_type: str, obj: Any) -> bytes:
    """One JSON watch frame: the event and a newline, as Go's encoder writes it."""
    return encode_json({"type": event_type, "object": obj})


# What `json_event` adds around the object: `{"type":"` TYPE `","object":` OBJECT `}` newline.
_JSON_OVERHEAD = len(json_event("", {})) - len(b"{}")


def json_object_size(frame: bytes) -> int:
    """Bytes of the object in a JSON frame (its type is the string starting at offset 9)."""
    return len(frame) - _JSON_OVERHEAD - (frame.index(b'"', 9) - 9)


def protobuf_object_size(frame: bytes) -> int:
    """Bytes of the object in a protobuf frame: the ``raw`` of the event's RawExtension
    (``WatchEvent`` field 2, whose field 1 holds the encoded object)."""
    # As the codec writes a frame: length, type (field 1, a short string), then field 2 and its
    # field 1, each a tag and a varint length; read directly, anything else field by field.
    at = 6 + frame[5] if len(frame) > 6 and frame[4] == 0x0A and frame[5] < 0x80 else 0
    if at and frame[at:at + 1] == b"\x12":
        at = _skip_varint(frame, at + 1)
        if 0 < at < len(frame) and frame[at] == 0x0A:
            size, stop = _varint_at(frame, at + 1)
            if stop + size == len(frame):
                return size
    try:
        return len(message_fields(message_fields(frame[4:]).get(2, b"")).get(1, b""))
    except ValueError:
        return len(frame)


def _varint_at(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
    return -1, -1


def _skip_varint(data: bytes, at: int) -> int:
    return _varint_at(data, at)[1]


JSON_FRAMING = WatchFraming(JSON, "", json_event, json_object_size)
PROTOBUF_FRAMING = WatchFraming(f"{PROTOBUF};stream=watch", "pb:", protobuf.encode_watch_event,
                                protobuf_object_size)


def framing_for(media_type: str) -> WatchFraming:
    """The framing of a watch negotiated to ``media_type`` (JSON unless protobuf)."""
    return PROTOBUF_FRAMING if media_type == PROTOBUF else JSON_FRAMING
