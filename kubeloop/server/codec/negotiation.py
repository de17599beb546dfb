"""Output negotiation of resource reads: which media type, and which ``as=`` conversion.

One pure function, :func:`negotiate_output`, decides for get, list and watch alike, as
upstream's ``NegotiateOutputMediaType`` / ``acceptMediaTypeOptions`` (k8s.io/apiserver
pkg/endpoints/handlers/negotiation/negotiate.go) with ``RequestScope.AllowsMediaTypeTransform``
(handlers/rest.go) as the endpoint's restrictions:

* media ranges are tried by quality, concrete before wildcards, else as written (goautoneg);
  each is matched against the media types we can encode, in order; the first range whose
  parameters the endpoint allows wins;
* ``as``/``g``/``v`` name a conversion: ``Table`` (JSON only, and only where the endpoint has
  a table convertor), ``PartialObjectMetadata`` and ``PartialObjectMetadataList``, each for
  ``meta.k8s.io`` ``v1`` and ``v1beta1`` (both still served by 1.33); any other conversion
  makes the range unacceptable, and so does a ``g``/``v`` without the other;
* nothing acceptable is a 406 ``NotAcceptable`` listing the media types upstream advertises.

Which conversion fits which verb (PartialObjectMetadata asked of a list) is decided later,
when the answer is built (:mod:`kubeloop.server.codec.metadata`), as upstream does.

``encoded`` are the media types the endpoint has an encoder for (JSON, YAML, and protobuf
where :mod:`kubeloop.server.codec.protobuf` knows the kind); ``standard`` restricts the media
types allowed *without* a conversion, as upstream's ``RequestScope.StandardSerializers``:
custom resources list protobuf among their serializers (so ``as=PartialObjectMetadata`` is
served in protobuf, as kube-controller-manager's garbage collector asks) but serve their
objects in JSON and YAML only (``apiextensions-apiserver`` customresource_handler.go). A
``stream=`` parameter other than ``watch``, or on a media type with no stream form (YAML),
makes the range unacceptable (``acceptMediaTypeOptions``). A watch has no YAML stream
(``STREAM_MEDIA_TYPES``), so a watch asking for YAML alone is answered in JSON, as the server
always did.

:func:`negotiate_error` is the same walk with upstream's ``DefaultEndpointRestrictions`` (no
conversion allowed), which ``responsewriters.ErrorNegotiated`` uses for error Status bodies;
None means "nothing acceptable" and the caller writes indented JSON (``WriteRawJSON``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from kubeloop.api.status import not_acceptable_error

META_GROUP = "meta.k8s.io"
META_VERSIONS = ("v1", "v1beta1")
TABLE = "Table"
PARTIAL_OBJECT_METADATA = "PartialObjectMetadata"
PARTIAL_OBJECT_METADATA_LIST = "PartialObjectMetadataList"

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
ADVERTISED_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
"""What a 406 lists: upstream's serializers for built-in and custom resources."""
ENCODED_MEDIA_TYPES = (JSON, YAML)
"""Media types every endpoint writes objects and lists in, in upstream's preference order
(protobuf joins them per kind, see :mod:`kubeloop.server.codec.serving`)."""
STREAM_MEDIA_TYPES = (JSON,)
"""Media types every endpoint writes watch streams in (protobuf joins them per kind)."""
STREAMED = frozenset({JSON, PROTOBUF})
"""Media types upstream has a stream serializer for (``stream=watch`` is allowed on them)."""
ERROR_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
"""Media types an error Status is written in (every kind has a Status)."""
_PLAIN_ALIASES = {YAML: JSON}
"""Media types answered with another encoding when no conversion is asked (see module doc)."""


@dataclass(frozen=True)
class AcceptClause:
    """One media range of an ``Accept`` header: lower-case ``media`` (``type/subtype``), its
    parameters other than ``q``, and its quality."""

    media: str
    parameters: dict[str, str]
    quality: float


@dataclass(frozen=True)
class Conversion:
    """An ``as=<kind>;g=<group>;v=<version>`` request."""

    kind: str
    group: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True)
class MediaTypeOptions:
    """The outcome: the media type to write and the conversion to apply (None: the object as is)."""

    media_type: str
    convert: Conversion | None = None


def _clause(text: str) -> AcceptClause:
    media, *raw = text.split(";")
    parameters: dict[str, str] = {}
    quality = 1.0
    for item in raw:
        key, _, value = item.partition("=")
        key, value = key.strip().lower(), value.strip().strip('"')
        if key == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        else:
            parameters[key] = value
    return AcceptClause(media.strip().lower(), parameters, quality)


def accept_clauses(accept: str) -> list[AcceptClause]:
    """The media ranges of ``accept`` in the order a server tries them: higher quality first,
    then concrete types before wildcards, otherwise as written (goautoneg's order)."""
    clauses = [_clause(part) for part in accept.split(",") if part.strip()]

    def rank(clause: AcceptClause) -> tuple[float, bool, bool]:
        kind, _, subtype = clause.media.partition("/")
        return -clause.quality, kind == "*", subtype == "*"

    return sorted(clauses, key=rank)


def _matches(media_range: str, media_type: str) -> bool:
    kind, _, subtype = media_range.partition("/")
    served_kind, _, served_subtype = media_type.partition("/")
    if kind == "*":
        return subtype == "*"
    return kind == served_kind and subtype in (served_subtype, "*")


def _conversion(parameters: Mapping[str, str]) -> Conversion | None:
    if not any(key in parameters for key in ("as", "g", "v")):
        return None
    return Conversion(parameters.get("as", ""), parameters.get("g", ""), parameters.get("v", ""))


def allows(media_type: str, convert: Conversion | None, *, tables: bool = True,
           standard: tuple[str, ...] | None = None) -> bool:
    """Whether the endpoint can answer ``media_type`` with ``convert`` (AllowsMediaTypeTransform);
    ``standard`` lists the media types allowed without a conversion (None: all)."""
    if convert is None:
        return standard is None or media_type in standard
    if convert.group != META_GROUP or convert.version not in META_VERSIONS:
        return False
    if convert.kind == TABLE:
        return tables and media_type in (JSON, YAML)
    return convert.kind in (PARTIAL_OBJECT_METADATA, PARTIAL_OBJECT_METADATA_LIST)


def _stream_allowed(parameters: Mapping[str, str], media_type: str) -> bool:
    """A non-empty ``stream`` must be ``watch`` and the media type must have a stream form."""
    stream = parameters.get("stream", "")
    return not stream or (stream == "watch" and media_type in STREAMED)


def negotiate_output(accept: str | None, *, tables: bool = True,
                     encoded: tuple[str, ...] = ENCODED_MEDIA_TYPES,
                     standard: tuple[str, ...] | None = None) -> MediaTypeOptions:
    """The media type and conversion to answer ``accept`` with; 406 when nothing fits.

    ``tables`` says whether the endpoint converts to Tables; ``encoded`` are the media types
    with an encoder (the codec seam); ``standard`` those allowed without a conversion."""
    return _negotiated(accept, tables, encoded, standard)


@functools.lru_cache(maxsize=512)
def _negotiated(accept: str | None, tables: bool, encoded: tuple[str, ...],
                standard: tuple[str, ...] | None) -> MediaTypeOptions:
    """:func:`negotiate_output`'s answer, kept per arguments: a client sends the same ``Accept``
    on every request (client-go's is two ranges to parse and rank); a 406 is raised anew."""
    if accept is None or not accept.strip():
        return MediaTypeOptions(encoded[0])
    for clause in accept_clauses(accept):
        convert = _conversion(clause.parameters)
        for media_type in encoded:
            if (_matches(clause.media, media_type) and _stream_allowed(clause.parameters, media_type)
                    and allows(media_type, convert, tables=tables, standard=standard)):
                return MediaTypeOptions(media_type, convert)
        alias = _PLAIN_ALIASES.get(clause.media)
        if convert is None and clause.media not in encoded and alias in encoded:
            return MediaTypeOptions(alias)
    raise not_acceptable_error(ADVERTISED_MEDIA_TYPES)


def negotiate_error(accept: str | None) -> str | None:
    """The media type of an error Status for ``accept`` (``ErrorNegotiated``): the first range
    that names one of :data:`ERROR_MEDIA_TYPES` without a conversion; None when none does."""
    if accept is None or not accept.strip():
        return JSON
    for clause in accept_clauses(accept):
        if _conversion(clause.parameters) is not None:
            continue
        for media_type in ERROR_MEDIA_TYPES:
            if _matches(clause.media, media_type) and _stream_allowed(clause.parameters, media_type):
                return media_type
    return None
