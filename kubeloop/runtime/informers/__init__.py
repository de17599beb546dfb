"""Informers: a reflector keeps an indexed local cache of one collection and feeds handlers.

See ``reflector.py`` for the list/watch protocol, ``store.py`` for the cache and its indexes,
``informer.py`` for handler delivery and resync, ``sharing.py`` for the structural sharing
that keeps cached objects small, ``mutation.py`` for the cache-mutation detector used in tests.
"""

from kubeloop.runtime.informers.informer import (
    EventHandler,
    EventHandlerFuncs,
    HandlerRegistration,
    SharedIndexInformer,
    strip_managed_fields,
    wait_for_cache_sync,
)
from kubeloop.runtime.informers.listwatch import ListerWatcher, ListPage, WatchErrorEvent
from kubeloop.runtime.informers.mutation import CacheMutationDetector, CacheMutationError
from kubeloop.runtime.informers.reflector import Reflector, Transform
from kubeloop.runtime.informers.sharing import SubtreeSharer
from kubeloop.runtime.informers.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    key_of,
    namespace_index_func,
)

__all__ = [
    "NAMESPACE_INDEX",
    "CacheMutationDetector",
    "CacheMutationError",
    "DeletedFinalStateUnknown",
    "EventHandler",
    "EventHandlerFuncs",
    "HandlerRegistration",
    "IndexFunc",
    "Indexer",
    "ListPage",
    "ListerWatcher",
    "Reflector",
    "SharedIndexInformer",
    "SubtreeSharer",
    "Transform",
    "WatchErrorEvent",
    "key_of",
    "namespace_index_func",
    "strip_managed_fields",
    "wait_for_cache_sync",
]
