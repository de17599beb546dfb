"""Storage of the embedded API server: objects, one global revision, watch windows.

The contract, in short (details on ``Storage``):

- one global, persistent, strictly increasing revision shared by every resource type; every
  create, update and delete takes the next one and stamps it into
  ``metadata.resourceVersion`` of the stored object;
- every current object is held in memory (reads never touch the disk); SQLite in WAL mode
  persists a change log from which ``Storage.open`` rebuilds everything; each acknowledged write
  survives the process being killed; ``memory=True`` gives a throwaway store;
- watches replay the last ``watch_cache_size`` changes per resource type, then stream live ones;
  a watch that starts before that window raises ``TooOldResourceVersion`` (the HTTP layer answers
  it with an in-stream 410, as kube-apiserver does after etcd compaction);
- the store is single-threaded and its methods synchronous, so a caller can read, check and
  write within one event-loop step;
- dicts returned by the store (and carried by watch events) belong to it: never mutate them.

Garbage collection: a large store is millions of long-lived containers, and every full cyclic
collection walks all of them (about 0.5 s at 50,000 pods on the reference machine). The JSON
objects hold no reference cycles, so a server that calls ``gc.freeze()`` once the store is open
(after a ``gc.collect()``) keeps its pauses short; objects deleted later are still freed by
reference counting. ``Storage.open`` pauses the collector while it loads.
"""

from kubeloop.server.storage._model import (
    ADDED,
    DELETED,
    MODIFIED,
    KeyExists,
    KeyNotFound,
    ObjectKey,
    ResourceType,
    RevisionMismatch,
    StorageError,
    TooOldResourceVersion,
    WatchEvent,
)
from kubeloop.server.storage._storage import DEFAULT_WATCH_CACHE_SIZE, Storage
from kubeloop.server.storage._watch import Watcher

__all__ = [
    "ADDED",
    "DEFAULT_WATCH_CACHE_SIZE",
    "DELETED",
    "MODIFIED",
    "KeyExists",
    "KeyNotFound",
    "ObjectKey",
    "ResourceType",
    "RevisionMismatch",
    "Storage",
    "StorageError",
    "TooOldResourceVersion",
    "WatchEvent",
    "Watcher",
]
