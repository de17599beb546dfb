"""The conversion seam: objects are stored once per (group, resource), served at every version.

kube-apiserver decodes a request body at the URL's version, converts it to the storage version
to store it, and converts what it read back to the URL's version to answer
(``apiserver/pkg/endpoints/handlers``, ``runtime.Scheme.Convert``). Here a served
:class:`~kubeloop.server.registry.ResourceInfo` may carry a :class:`Converter` doing both ways
on plain dicts:

- ``to_stored(obj)``: a body decoded against the served version's schema, as the storage
  version holds it (applied by the handlers after decoding, before admission and storage: on
  create, update, ``/status``, patch -- the patch applies to the object as served at the URL's
  version -- and server-side apply);
- ``from_stored(obj)``: a stored object as the served version shows it (get, list, watch
  events, Tables, PartialObjectMetadata, write and delete answers), never changing its argument.

``storage_version`` names the version whose :class:`ResourceInfo` admission and storage run with
(``None``: objects are stored as written, at the served version). Resources without a converter
are stored and served at their one version.

Converters in use: ``autoscaling`` HorizontalPodAutoscalers (v1 converted to and from the v2
storage version, :mod:`kubeloop.server.conversion.autoscaling`; v2 drops v1's round-trip
annotations both ways), and every served version of a custom resource (:class:`Relabel`: one
schema per CRD version, no conversion webhook, so only ``apiVersion`` changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kubeloop.server.conversion.autoscaling import drop_round_trip_annotations, hpa_v1_to_v2, hpa_v2_to_v1

if TYPE_CHECKING:
    from kubeloop.server.registry import Registry, ResourceInfo

Obj = dict[str, Any]


class Converter(Protocol):
    """How one served resource version maps to and from its stored form."""

    @property
    def storage_version(self) -> str | None: ...

    def to_stored(self, obj: Obj) -> Obj: ...

    def from_stored(self, obj: Obj) -> Obj: ...


@dataclass(frozen=True)
class Relabel:
    """Versions that share one schema: serving only rewrites ``apiVersion`` (custom resources,
    whose CRD has no conversion webhook); objects are stored as written."""

    api_version: str
    storage_version: str | None = None

    def to_stored(self, obj: Obj) -> Obj:
        return obj

    def from_stored(self, obj: Obj) -> Obj:
        if obj.get("apiVersion") == self.api_version:
            return obj
        shown = dict(obj)
        shown["apiVersion"] = self.api_version
        return shown


@dataclass(frozen=True)
class HorizontalPodAutoscalerV1:
    """``autoscaling/v1`` HorizontalPodAutoscalers, stored at ``autoscaling/v2``."""

    storage_version: str | None = "v2"

    def to_stored(self, obj: Obj) -> Obj:
        return hpa_v1_to_v2(obj)

    def from_stored(self, obj: Obj) -> Obj:
        return hpa_v2_to_v1(obj)


@dataclass(frozen=True)
class HorizontalPodAutoscalerV2:
    """``autoscaling/v2``, the storage version: v1's round-trip annotations never pass either
    way (upstream's v2 conversion drops them to and from the internal type)."""

    storage_version: str | None = "v2"

    def to_stored(self, obj: Obj) -> Obj:
        return drop_round_trip_annotations(obj)

    def from_stored(self, obj: Obj) -> Obj:
        return drop_round_trip_annotations(obj)


_BUILTIN: dict[tuple[str, str, str], Converter] = {
    ("autoscaling", "v1", "horizontalpodautoscalers"): HorizontalPodAutoscalerV1(),
    ("autoscaling", "v2", "horizontalpodautoscalers"): HorizontalPodAutoscalerV2(),
}


def builtin_converter(group: str, version: str, resource: str) -> Converter | None:
    """The converter of a built-in resource version (``None``: stored and served as is)."""
    return _BUILTIN.get((group, version, resource))


def served(info: ResourceInfo, obj: Obj) -> Obj:
    """A stored object as ``info``'s version serves it (``obj`` itself when nothing changes)."""
    converter: Converter | None = info.conversion
    return obj if converter is None else converter.from_stored(obj)


def stored(info: ResourceInfo, obj: Obj) -> Obj:
    """A body decoded at ``info``'s version in its stored form."""
    converter: Converter | None = info.conversion
    return obj if converter is None else converter.to_stored(obj)


def storage_info(registry: Registry, info: ResourceInfo) -> ResourceInfo:
    """The registry entry admission and storage run with for writes made at ``info``'s version."""
    converter: Converter | None = info.conversion
    if converter is None or converter.storage_version in (None, info.version):
        return info
    found = registry.lookup(info.group, converter.storage_version, info.resource)
    return found if found is not None else info
