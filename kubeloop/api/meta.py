"""Object metadata helpers: keys, owner references, timestamps and copies.

Objects are plain JSON dicts as on the wire. Functions here read them without mutating them,
except those whose name says they set something.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeGuard

import orjson

from kubeloop.api.shapes import ObjectMeta, OwnerReference

Obj = dict[str, Any]


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, answered at once for plain dicts (decoded JSON is made of
    them, and the abstract-class check costs several times more on hot paths)."""
    return type(value) is dict or isinstance(value, Mapping)


def is_shape(value: Any) -> bool:
    """:func:`is_mapping` without narrowing the type, for a value that is to be read as one of
    :mod:`kubeloop.api.shapes` (a ``TypedDict`` is not narrowed from a ``Mapping``)."""
    return type(value) is dict or isinstance(value, Mapping)


def metadata(obj: Mapping[str, Any]) -> ObjectMeta:
    """The object's ``metadata`` (an empty mapping when missing)."""
    meta: Any = obj.get("metadata")
    return meta if is_shape(meta) else {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("namespace") or "")


def uid_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("uid") or "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = metadata(obj).get("labels")
    return labels if is_mapping(labels) else {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    annotations = metadata(obj).get("annotations")
    return annotations if is_mapping(annotations) else {}


def resource_version_of(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("resourceVersion") or "")


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    return metadata(obj).get("deletionTimestamp") is not None


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (client-go's key function)."""
    # Inlined name_of/namespace_of: every cached object passes here several times per event.
    meta: Any = obj.get("metadata")
    if not is_shape(meta):
        return ""
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    """Reverse of :func:`object_key`: ``(namespace, name)``; namespace is ``""`` if absent."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


def owner_references(obj: Mapping[str, Any]) -> list[OwnerReference]:
    """The object's owner references (the well-formed ones: mappings), as they are."""
    refs = metadata(obj).get("ownerReferences")
    return [r for r in refs if is_shape(r)] if isinstance(refs, list) else []


def controller_of(obj: Mapping[str, Any]) -> OwnerReference | None:
    """The owner reference with ``controller: true``, if any."""
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def new_controller_ref(owner: Mapping[str, Any], api_version: str, kind: str) -> OwnerReference:
    """An owner reference making ``owner`` the controller, blocking its foreground deletion."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def deep_copy(obj: Any) -> Any:
    """A deep copy of a JSON value (much faster than :func:`copy.deepcopy` for dicts)."""
    return orjson.loads(orjson.dumps(obj))


def now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """``metav1.Time``: RFC 3339 in UTC with second precision (``2021-01-02T03:04:05Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(moment: datetime) -> str:
    """``metav1.MicroTime``: RFC 3339 in UTC with six fractional digits."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> datetime | None:
    """Parse an RFC 3339 timestamp (any precision, ``Z`` or offset); ``None`` for empty input."""
    if not text:
        return None
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    # Python 3.11 accepts up to six fractional digits; RFC 3339 allows more.
    if "." in value:
        head, _, rest = value.partition(".")
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        value = f"{head}.{digits[:6].ljust(6, '0')}{rest}" if digits else head + rest
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def now_time() -> str:
    return format_time(now())
