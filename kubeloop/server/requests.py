"""Query-parameter and body decoding, with kube-apiserver's tolerance and its error answers.

Pure functions over strings and bytes: the handlers pass in what aiohttp parsed and get back
typed options or an :class:`~kubeloop.api.status.ApiError` (400, 413, 415) to answer with.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.api.status import (
    ApiError,
    bad_request_error,
    invalid,
    invalid_error,
    not_supported,
    unsupported_media_type_error,
)
from kubeloop.server.codec import protobuf_depth
from kubeloop.server.codec.bodies import decode_protobuf_body
from kubeloop.server.nesting import MAX_DEPTH, encodes_within, object_too_deep, raw_json_within
from kubeloop.server.yaml_body import YamlBodyError, load_yaml

MAX_BODY_BYTES = 3 * 1024 * 1024
"""kube-apiserver's limit on a request body (``maxRequestBodyBytes``)."""

JSON = "application/json"
YAML = "application/yaml"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
BODY_TYPES = (JSON, YAML, PROTOBUF)
"""What a 415 lists: upstream's serializers, for built-in kinds and custom resources alike."""
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(name: str, text: str) -> bool:
    """Go's ``strconv.ParseBool``; anything else is a 400 as upstream's query conversion gives."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise bad_request_error(f'invalid value for {name}: strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_int(name: str, text: str) -> int:
    """A decimal 64-bit integer as Go's ``strconv.ParseInt`` reads it."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise bad_request_error(f'invalid value for {name}: strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise bad_request_error(f'invalid value for {name}: strconv.ParseInt: parsing "{text}": value out of range')
    return value


def optional_bool(query: Mapping[str, str], name: str) -> bool | None:
    text = query.get(name)
    return None if text is None or text == "" else parse_bool(name, text)


def optional_int(query: Mapping[str, str], name: str) -> int | None:
    text = query.get(name)
    return None if text is None or text == "" else parse_int(name, text)


def dry_run_values(values: list[str]) -> bool:
    """Whether ``dryRun`` asks for a dry run; ``All`` is the only accepted value."""
    flat = [v for value in values for v in value.split(",") if v]
    for value in flat:
        if value != "All":
            raise ApiError(400, "BadRequest", f'Invalid dryRun value "{value}": supported values: "All"')
    return bool(flat)


def media_type(content_type: str | None) -> str:
    """The bare media type of a Content-Type header, lower-cased; JSON when there is none.

    A header with parameters but no type (``;;;;``) is not JSON: Go's ``mime.ParseMediaType``
    fails on it (``mime: no media type``) and upstream answers 415, so it is returned as it
    came, for the caller's 415.
    """
    if not content_type:
        return JSON
    return content_type.split(";", 1)[0].strip().lower() or content_type.strip().lower() or JSON


def decode_document(raw: bytes, content_type: str | None, *, into: tuple[str, str] | None = None,
                    custom: bool = False) -> Any:
    """Decode a create/update body (JSON, YAML or protobuf, see
    :mod:`kubeloop.server.codec.bodies`); other types are refused with a 415. ``into`` is the
    (apiVersion, kind) the endpoint decodes into, ``custom`` whether that is a custom resource
    (protobuf cannot fill one). Every form is held to :data:`~kubeloop.server.nesting.MAX_DEPTH`."""
    kind = media_type(content_type)
    if kind == JSON or kind == "*/*":
        return decode_json(raw)
    if kind in (YAML, "application/x-yaml", "text/yaml"):
        return decode_yaml(raw)
    if kind == PROTOBUF:
        doc = decode_protobuf_body(raw, into, custom=custom)
        # The message schema and the body's brackets bound most bodies' depth: not re-encoded.
        if protobuf_depth.surely_within(raw, doc["apiVersion"], doc["kind"], MAX_DEPTH):
            return doc
        return _bounded(doc, "error decoding body")
    raise unsupported_media_type_error(kind, BODY_TYPES)


def _bounded(doc: Any, prefix: str) -> Any:
    """``doc`` unless it nests deeper than the server serves back (see :mod:`kubeloop.server.nesting`)."""
    # orjson measures a body at C speed; one within the bound as a whole is within it apart from
    # its managed fields too, so the exact walk only runs for the rare deep (or odd) document.
    if not encodes_within(doc, MAX_DEPTH) and object_too_deep(doc):
        raise bad_request_error(f"{prefix}: exceeded max depth of {MAX_DEPTH}")
    return doc


def decode_json(raw: bytes) -> Any:
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise bad_request_error(f"error decoding body: {exc}") from None
    # A text opening at most MAX_DEPTH containers cannot nest deeper (most bodies): not re-encoded.
    return doc if raw_json_within(raw, MAX_DEPTH) else _bounded(doc, "error decoding body")


def decode_yaml(raw: bytes) -> Any:
    try:
        doc = load_yaml(raw)
    except YamlBodyError as exc:
        raise bad_request_error(f"error decoding YAML body: {exc}") from None
    return _bounded(doc, "error decoding YAML body: yaml")


def require_object(doc: Any) -> dict[str, Any]:
    """The body must be a JSON object (``Object 'Kind' is missing`` otherwise, as upstream)."""
    if not isinstance(doc, dict):
        raise bad_request_error("Object 'Kind' is missing in body: the body must be a JSON object")
    return doc


@dataclass(frozen=True)
class ContinueToken:
    """A decoded ``continue`` token: the list revision and the key to resume after."""

    rv: int
    namespace: str
    name: str


def encode_continue(rv: int, namespace: str, name: str) -> str:
    key = f"{namespace}/{name}" if namespace else name
    payload = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"})
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


def decode_continue(token: str, namespaced: bool) -> ContinueToken:
    """Decode a token made by :func:`encode_continue`; malformed tokens are a 400 as upstream."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        raise bad_request_error("continue key is not valid: incorrect encoded start resourceVersion "
                                "(version meta.k8s.io/v1)") from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
        raise bad_request_error("continue key is not valid: server does not recognize this encoded key")
    rv, start = data.get("rv"), data.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or not isinstance(start, str) or not start.endswith("\x00"):
        raise bad_request_error("continue key is not valid: incorrect encoded start resourceVersion "
                                "(version meta.k8s.io/v1)")
    key = start[:-1]
    if namespaced:
        namespace, sep, name = key.partition("/")
        if not sep or "/" in name:
            raise bad_request_error("continue key is not valid: path traversal not allowed")
        return ContinueToken(rv, namespace, name)
    if "/" in key:
        raise bad_request_error("continue key is not valid: path traversal not allowed")
    return ContinueToken(rv, "", key)


def parse_resource_version(name: str, text: str) -> int:
    """A non-negative revision; anything else is the 400 upstream gives for an invalid RV."""
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise bad_request_error(f'invalid {name} "{text}": must be a non-negative decimal integer')
    return int(text)


_PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


@dataclass(frozen=True)
class DeleteOptions:
    """The parts of ``DeleteOptions`` the server acts on."""

    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    """``Orphan``, ``Background`` or ``Foreground``; ``orphanDependents`` is folded into it."""
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


def delete_options(body: Any, query: Mapping[str, str], query_dry_run: list[str]) -> DeleteOptions:
    """DeleteOptions from the body when there is one, else from query parameters (as upstream)."""
    if body is None:
        grace = optional_int(query, "gracePeriodSeconds")
        policy = query.get("propagationPolicy") or None
        orphan = optional_bool(query, "orphanDependents")
        dry_run = dry_run_values(query_dry_run)
        uid = rv = None
    else:
        if not isinstance(body, dict):
            raise bad_request_error("DeleteOptions must be a JSON object")
        grace = body.get("gracePeriodSeconds")
        if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
            raise bad_request_error("gracePeriodSeconds must be an integer")
        if grace is None:
            grace = optional_int(query, "gracePeriodSeconds")
        policy = body.get("propagationPolicy")
        orphan = body.get("orphanDependents")
        if policy is not None and not isinstance(policy, str):
            raise bad_request_error("propagationPolicy must be a string")
        if orphan is not None and not isinstance(orphan, bool):
            raise bad_request_error("orphanDependents must be a boolean")
        if policy is None and orphan is None:
            policy = query.get("propagationPolicy") or None
            orphan = optional_bool(query, "orphanDependents")
        body_dry_run = body.get("dryRun") or []
        if not isinstance(body_dry_run, list) or not all(isinstance(v, str) for v in body_dry_run):
            raise bad_request_error("dryRun must be a list of strings")
        dry_run = dry_run_values([*body_dry_run, *query_dry_run])
        preconditions = body.get("preconditions") or {}
        if not isinstance(preconditions, dict):
            raise bad_request_error("preconditions must be an object")
        uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
        if (uid is not None and not isinstance(uid, str)) or (rv is not None and not isinstance(rv, str)):
            raise bad_request_error("preconditions must hold strings")
    return DeleteOptions(grace, _propagation(policy, orphan), uid, rv, dry_run)


def _propagation(policy: str | None, orphan: bool | None) -> str | None:
    if policy is not None and orphan is not None:
        raise invalid_error("DeleteOptions", "meta.k8s.io", "", [
            invalid("propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set")])
    if policy is not None and policy not in _PROPAGATION_POLICIES:
        raise invalid_error("DeleteOptions", "meta.k8s.io", "", [
            not_supported("propagationPolicy", policy, _PROPAGATION_POLICIES)])
    if orphan is not None:
        return "Orphan" if orphan else "Background"
    return policy
