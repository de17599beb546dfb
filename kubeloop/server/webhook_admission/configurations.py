"""The webhooks to consult, read from the store only when webhook configurations exist.

Upstream: kubernetes/apiserver ``pkg/admission/configuration/{mutating,validating}_webhook_manager.go``
(configurations sorted by name, webhooks in their order). The common path, a server with no
webhook configuration, costs two dictionary lookups per write (:meth:`Configurations.active`);
otherwise the list is rebuilt when the store's revision moved since it was last read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubeloop.server.storage import ResourceType, Storage

Obj = dict[str, Any]

GROUP = "admissionregistration.k8s.io"
MUTATING = ResourceType(GROUP, "mutatingwebhookconfigurations")
VALIDATING = ResourceType(GROUP, "validatingwebhookconfigurations")


@dataclass(frozen=True)
class Hook:
    """One webhook of one configuration."""

    uid: str
    """Identifies the webhook across reinvocation rounds: configuration name and index."""
    configuration: str
    spec: Obj


class Configurations:
    """The current mutating and validating webhooks of one store."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._cache: dict[ResourceType, tuple[int, list[Hook]]] = {}

    def active(self) -> bool:
        """Whether any webhook configuration is stored."""
        return bool(self._storage.count(MUTATING) or self._storage.count(VALIDATING))

    def hooks(self, rt: ResourceType) -> list[Hook]:
        """The webhooks of ``rt`` (:data:`MUTATING` or :data:`VALIDATING`) in calling order."""
        revision = self._storage.revision
        cached = self._cache.get(rt)
        if cached is not None and cached[0] == revision:
            return cached[1]
        hooks: list[Hook] = []
        if self._storage.count(rt):
            items, _, _ = self._storage.list(rt, None)
            for configuration in sorted(items, key=lambda c: str(c["metadata"]["name"])):
                name = str(configuration["metadata"]["name"])
                for index, spec in enumerate(configuration.get("webhooks") or []):
                    if isinstance(spec, dict):
                        hooks.append(Hook(f"{name}/{spec.get('name')}/{index}", name, spec))
        self._cache[rt] = (revision, hooks)
        return hooks
