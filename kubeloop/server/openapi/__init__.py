"""The OpenAPI documents of the embedded API server (``/openapi/v2``, ``/openapi/v3``).

Definitions of the built-in kinds are our own (:mod:`.definitions`); custom resources get
theirs from their CRDs (:mod:`.crd_definitions`); :mod:`.paths` adds the operations kubectl
looks for; :mod:`.gnostic` encodes the protobuf form kubectl 1.20 requires; :mod:`.cache`
negotiates the format and keeps encoded documents until what is served changes; :mod:`.http`
(imported on its own, it needs aiohttp and the server state) answers the HTTP requests.
"""

from kubeloop.server.openapi.cache import OpenAPIService, negotiate_v2
from kubeloop.server.openapi.crd_definitions import crd_definition_name, crd_definitions
from kubeloop.server.openapi.definitions import BUILTIN_DEFINITIONS, builtin_definition_name
from kubeloop.server.openapi.document import (
    JSON_CONTENT_TYPE,
    PROTOBUF_CONTENT_TYPE,
    Encoded,
    openapi_v2_json,
    openapi_v2_protobuf,
    openapi_v3_discovery,
    openapi_v3_document,
)
from kubeloop.server.openapi.gnostic_decode import decode_document
from kubeloop.server.openapi.served import ServedResource, served_from_info, served_from_infos, served_from_registry

__all__ = [
    "BUILTIN_DEFINITIONS",
    "JSON_CONTENT_TYPE",
    "PROTOBUF_CONTENT_TYPE",
    "Encoded",
    "OpenAPIService",
    "ServedResource",
    "builtin_definition_name",
    "crd_definition_name",
    "crd_definitions",
    "decode_document",
    "negotiate_v2",
    "openapi_v2_json",
    "openapi_v2_protobuf",
    "openapi_v3_discovery",
    "openapi_v3_document",
    "served_from_info",
    "served_from_infos",
    "served_from_registry",
]
