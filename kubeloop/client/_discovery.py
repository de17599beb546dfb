"""Discovery: which resources a server offers, and resolving the names users type.

Reads the legacy discovery documents (``/api``, ``/apis``, ``/api/v1``, ``/apis/{g}/{v}``),
which every server answers (apiserver ``pkg/endpoints/discovery``,
``root.go`` and ``group.go``/``version.go``), and builds one :class:`Resource` per
top-level entry, folding ``<plural>/<sub>`` entries into its ``subresources``. Group
versions are fetched concurrently; one that fails (an unavailable aggregated API) is
skipped, as kubectl does, rather than failing every lookup.

Name resolution follows kubectl's RESTMapper: ``deployments``, ``deployment``,
``Deployment``, ``deploy``, ``deployments.apps`` and ``deployments.v1.apps`` all match;
for a bare name the core group comes first, then groups in the server's order, each at its
preferred version first. Results are cached; a miss drops the cache and asks again once
(a CRD may have been added since), and :meth:`Discovery.invalidate` drops it explicitly.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from kubeloop.client._clock import Clock, SystemClock
from kubeloop.client._errors import ApiException, NotFound, TransportError
from kubeloop.client._resources import Resource, find_builtin, resource_names, split_qualified_name

if TYPE_CHECKING:
    from kubeloop.client._rest import RestCore

log = logging.getLogger(__name__)


def parse_resource_list(group: str, version: str, document: dict[str, Any]) -> list[Resource]:
    """The resources of one ``APIResourceList``, subresources folded into their parents."""
    entries = [e for e in document.get("resources") or [] if isinstance(e, dict) and e.get("name")]
    subresources: dict[str, set[str]] = {}
    for entry in entries:
        parent, slash, sub = str(entry["name"]).partition("/")
        if slash:
            subresources.setdefault(parent, set()).add(sub)
    resources = []
    for entry in entries:
        name = str(entry["name"])
        if "/" in name:
            continue
        resources.append(Resource(
            group=group,
            version=version,
            plural=name,
            kind=str(entry.get("kind") or ""),
            namespaced=bool(entry.get("namespaced", False)),
            subresources=frozenset(subresources.get(name, ())),
            short_names=tuple(str(s) for s in entry.get("shortNames") or ()),
            singular=str(entry.get("singularName") or ""),
            verbs=frozenset(str(v) for v in entry.get("verbs") or ()),
        ))
    return resources


class Discovery:
    """Cached discovery for one client. ``ttl`` (seconds) bounds the cache's age; ``None``
    keeps it until :meth:`invalidate` or a resolution miss."""

    def __init__(self, client: RestCore, *, clock: Clock | None = None, ttl: float | None = None) -> None:
        self._client = client
        self._clock = clock or SystemClock()
        self._ttl = ttl
        self._lock = asyncio.Lock()
        self._resources: list[Resource] | None = None
        self._loaded_at = 0.0

    def invalidate(self) -> None:
        """Forget everything; the next lookup reads discovery again."""
        self._resources = None

    async def _group_versions(self) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        core = await self._client.request_json("GET", "/api")
        pairs.extend(("", str(v)) for v in core.get("versions") or [])
        groups = await self._client.request_json("GET", "/apis")
        for group in groups.get("groups") or []:
            name = str(group.get("name") or "")
            preferred = str((group.get("preferredVersion") or {}).get("version") or "")
            versions = [str(v.get("version")) for v in group.get("versions") or [] if v.get("version")]
            ordered = ([preferred] if preferred in versions else []) + [v for v in versions if v != preferred]
            pairs.extend((name, v) for v in ordered)
        return pairs

    async def _fetch(self, group: str, version: str) -> list[Resource]:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            document = await self._client.request_json("GET", path)
        except (ApiException, TransportError) as exc:
            log.warning("unable to retrieve the complete list of server APIs: %s/%s: %s", group, version, exc)
            return []
        return parse_resource_list(group, version, document)

    async def server_resources(self) -> list[Resource]:
        """Every resource of every group version, in resolution order (cached)."""
        async with self._lock:
            stale = self._ttl is not None and self._clock.now() - self._loaded_at >= self._ttl
            if self._resources is None or stale:
                pairs = await self._group_versions()
                lists = await asyncio.gather(*(self._fetch(g, v) for g, v in pairs))
                self._resources = [r for rs in lists for r in rs]
                self._loaded_at = self._clock.now()
            return self._resources

    def _match(self, resources: list[Resource], name: str) -> Resource | None:
        plural, version, group = split_qualified_name(name)
        wanted = plural.lower()
        for resource in resources:
            if group is not None and resource.group != group:
                continue
            if version is not None and resource.version != version:
                continue
            if wanted in resource_names(resource):
                return resource
        return None

    async def resolve(self, name: str) -> Resource:
        """The resource ``name`` denotes; :class:`NotFound` if the server has none."""
        builtin = find_builtin(name)
        if builtin is not None:
            return builtin
        found = self._match(await self.server_resources(), name)
        if found is None:
            self.invalidate()
            found = self._match(await self.server_resources(), name)
        if found is None:
            raise NotFound(code=404, reason="NotFound",
                           message=f"the server doesn't have a resource type {name!r}",
                           details={"kind": name})
        return found
