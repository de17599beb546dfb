"""Cache-mutation detector: fails loudly when code changes an object it got from a cache.

Informer caches hand the same dict to every reader, so an in-place change by one controller
silently corrupts what all the others see. With the detector on (tests turn it on; so does
``KUBELOOP_CACHE_MUTATION_DETECTOR=true``) the informer keeps the encoded form of every object
it caches and compares it at each :meth:`check`; any difference raises
:class:`CacheMutationError` naming the object.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

ENV_VAR = "KUBELOOP_CACHE_MUTATION_DETECTOR"


def detector_enabled_by_env() -> bool:
    return os.environ.get(ENV_VAR, "").lower() in ("1", "true", "yes", "on")


class CacheMutationError(AssertionError):
    """A cached object was changed in place."""


class CacheMutationDetector:
    """Remembers the bytes of each cached object and finds objects that changed since."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._seen: dict[str, tuple[dict[str, Any], bytes]] = {}

    def record(self, key: str, obj: dict[str, Any]) -> None:
        self._seen[key] = (obj, orjson.dumps(obj, option=orjson.OPT_SORT_KEYS))

    def forget(self, key: str) -> None:
        self._seen.pop(key, None)

    def check(self) -> None:
        """Raise :class:`CacheMutationError` if any recorded object differs from its bytes."""
        for key, (obj, encoded) in self._seen.items():
            if orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) != encoded:
                raise CacheMutationError(
                    f"cache {self.name!r}: object {key!r} was mutated in place; copy objects from a cache "
                    "before changing them"
                )
