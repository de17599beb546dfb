"""Values shared by every part of the storage layer: resource types, watch events and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"

#: Event types in the order of their integer codes in the persisted change log.
EVENT_TYPES: Final = (ADDED, MODIFIED, DELETED)
EVENT_CODES: Final = {name: code for code, name in enumerate(EVENT_TYPES)}

ObjectKey = tuple[str, str]
"""An object's identity within its resource type: (namespace, name); namespace "" if cluster-scoped."""

Page = tuple[list[dict[str, Any]], ObjectKey | None, int]
"""A result of ``Storage.list``: (items, key to continue after or None, remaining count or -1)."""


@dataclass(frozen=True)
class ResourceType:
    """Identity of one stored collection.

    Versions are not part of it: every served version of a resource reads and writes the same
    objects, as in kube-apiserver.
    """

    group: str
    """API group, "" for the core group."""
    resource: str
    """Plural resource name, e.g. "pods", "deployments", "clonesets"."""

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


@dataclass(slots=True)
class WatchEvent:
    """One change of one object, shared by the watch window and every watcher that receives it.

    All fields belong to the store: nobody may mutate ``object`` or ``prev``. ``cache`` is the one
    mutable part, a memo the HTTP layer may fill (for instance with the encoded event per media
    type) so that an event fanned out to many watchers is encoded once.
    """

    type: str
    """"ADDED", "MODIFIED" or "DELETED"."""
    rv: int
    """The revision of the change."""
    object: dict[str, Any]
    """State after the change; for DELETED the last state with resourceVersion = the delete's revision."""
    prev: dict[str, Any] | None
    """State before the change: None for ADDED (and, after a restart, when it was compacted away)."""
    cache: dict[str, bytes] = field(default_factory=dict)
    """Free memo slot for the HTTP layer; starts empty."""


class StorageError(Exception):
    """Base of every error the storage layer raises on purpose."""


class _KeyError(StorageError):
    def __init__(self, resource_type: ResourceType, namespace: str, name: str, message: str) -> None:
        super().__init__(message)
        self.resource_type = resource_type
        self.namespace = namespace
        self.name = name


class KeyExists(_KeyError):
    """A create named an object that already exists."""

    def __init__(self, resource_type: ResourceType, namespace: str, name: str) -> None:
        super().__init__(resource_type, namespace, name, f"{resource_type} {namespace}/{name} already exists")


class KeyNotFound(_KeyError):
    """An update or delete named an object that does not exist."""

    def __init__(self, resource_type: ResourceType, namespace: str, name: str) -> None:
        super().__init__(resource_type, namespace, name, f"{resource_type} {namespace}/{name} not found")


class RevisionMismatch(_KeyError):
    """The object's current resourceVersion is not the one the caller expected."""

    def __init__(self, resource_type: ResourceType, namespace: str, name: str, expected: int, current: int) -> None:
        super().__init__(
            resource_type,
            namespace,
            name,
            f"{resource_type} {namespace}/{name} is at revision {current}, not {expected}",
        )
        self.expected = expected
        self.current = current


class TooOldResourceVersion(StorageError):
    """Changes after the requested revision may have left the watch window (etcd calls it compaction)."""

    def __init__(self, oldest: int, requested: int | None = None) -> None:
        super().__init__(
            f"too old resource version: {requested} ({oldest})"
            if requested is not None
            else f"too old resource version (oldest servable: {oldest})"
        )
        self.oldest = oldest
        """The smallest from_rv that the window can serve now (upstream's "oldest - 1")."""
        self.requested = requested
        """The from_rv that was refused, when known."""


def object_key(obj: dict[str, Any]) -> ObjectKey:
    """The (namespace, name) under which ``obj`` is stored; StorageError if it has no name."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict):
        raise StorageError("object has no metadata")
    name = metadata.get("name")
    namespace = metadata.get("namespace", "")
    if not isinstance(name, str) or not name:
        raise StorageError("object has no metadata.name")
    if not isinstance(namespace, str):
        raise StorageError("object's metadata.namespace is not a string")
    # The in-memory index joins the two with NUL (see _collection); no valid name contains it.
    if "\0" in name or "\0" in namespace:
        raise StorageError("object's name or namespace contains a NUL character")
    return namespace, name


def object_revision(obj: dict[str, Any]) -> int:
    """The revision a stored object was last written at (its metadata.resourceVersion)."""
    return int(obj["metadata"]["resourceVersion"])
