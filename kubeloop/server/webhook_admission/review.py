"""AdmissionReview requests and responses, and the errors a webhook call ends in.

Upstream: kubernetes/apiserver ``pkg/admission/plugin/webhook/request/admissionreview.go``
(``CreateAdmissionObjects``, ``CreateV1AdmissionReview``, ``VerifyAdmissionResponse``),
``errors/statuserror.go`` (``ToStatusErr``, ``NewDryRunUnsupportedErr``) and
``pkg/util/webhook/error.go`` (``ErrCallingWebhook``). Pure functions: the HTTP call is
:mod:`kubeloop.server.webhook_admission.client`.

A webhook is called with the first AdmissionReview version it lists that the server speaks
(``v1``, ``v1beta1``); the answer must be of that version and echo the request's ``uid`` (v1).
A mutating webhook's ``patch`` (base64 in JSON, decoded here) needs ``patchType: JSONPatch``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubeloop.api.status import ApiError, bad_request_error, go_quote
from kubeloop.server.webhook_admission.matching import Attributes, Invocation

Obj = dict[str, Any]

REVIEW_GROUP = "admission.k8s.io"
KNOWN_VERSIONS = ("v1", "v1beta1")


class InvalidResponse(Exception):
    """The webhook's answer is not a usable AdmissionReview (upstream's error text)."""


class NoKnownVersion(Exception):
    """The webhook accepts no AdmissionReview version this server speaks."""


def review_version(hook: Mapping[str, Any]) -> str:
    """The AdmissionReview version ``hook`` is called with (its first known one)."""
    for version in hook.get("admissionReviewVersions") or []:
        if version in KNOWN_VERSIONS:
            return str(version)
    raise NoKnownVersion("webhook does not accept known AdmissionReview versions (v1, v1beta1)")


def build_review(version: str, uid: str, invocation: Invocation, attributes: Attributes, user: Obj,
                 obj: Obj | None, old: Obj | None, dry_run: bool, options: Obj | None) -> Obj:
    """The AdmissionReview sent to a webhook (``obj``/``old`` at the invocation's version)."""
    request: Obj = {
        "uid": uid,
        "kind": invocation.kind.as_review(),
        "resource": invocation.resource.as_review(),
    }
    if invocation.subresource:
        request["subResource"] = invocation.subresource
    request["requestKind"] = attributes.kind.as_review()
    request["requestResource"] = attributes.resource.as_review()
    if attributes.subresource:
        request["requestSubResource"] = attributes.subresource
    if attributes.name:
        request["name"] = attributes.name
    if attributes.namespace:
        request["namespace"] = attributes.namespace
    request["operation"] = attributes.operation
    request["userInfo"] = user
    # RawExtension of a nil object marshals as JSON null, as upstream sends them.
    request["object"] = obj
    request["oldObject"] = old
    request["dryRun"] = dry_run
    request["options"] = options
    return {"kind": "AdmissionReview", "apiVersion": f"{REVIEW_GROUP}/{version}", "request": request}


@dataclass
class Response:
    """What a webhook answered (upstream's ``request.AdmissionResponse``)."""

    allowed: bool
    patch: list[Any] | None = None
    result: Obj | None = None
    warnings: list[str] = field(default_factory=list)


def _go_type(value: Any) -> str:
    return {dict: "map[string]interface {}", list: "[]interface {}", str: "string", bool: "bool",
            type(None): "<nil>"}.get(type(value), "float64")


def parse_body(body: bytes) -> Obj:
    """Decode the HTTP body of a webhook's answer, failing with the rest client's texts."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise InvalidResponse(f"couldn't get version/kind; json parse error: {error}") from None
    if not isinstance(doc, dict):
        raise InvalidResponse(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                              f"{_go_type(doc)} into Go value of type struct {{ APIVersion string "
                              f"\"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}")
    if not doc.get("kind"):
        raise InvalidResponse(f"Object 'Kind' is missing in '{body.decode('utf-8', 'replace')}'")
    return doc


def _decode_patch(value: Any) -> list[Any]:
    if not isinstance(value, str):
        raise InvalidResponse("json: cannot unmarshal patch into Go struct field AdmissionResponse.response.patch of "
                              "type []uint8")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidResponse("illegal base64 data in response.patch") from None
    if not raw:
        return []
    try:
        patch = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise ApiError(500, "InternalError", f"Internal error occurred: {error}") from None
    if not isinstance(patch, list):
        raise ApiError(500, "InternalError", "Internal error occurred: json: cannot unmarshal object into Go value "
                                             "of type jsonpatch.Patch")
    return patch


def verify_response(doc: Obj, uid: str, version: str, mutating: bool) -> Response:
    """``VerifyAdmissionResponse``: the usable content of a webhook's AdmissionReview ``doc``."""
    api_version = doc.get("apiVersion")
    if version == "v1" and (api_version != f"{REVIEW_GROUP}/v1" or doc.get("kind") != "AdmissionReview"):
        group, _, got_version = str(api_version or "").rpartition("/")
        raise InvalidResponse(f"expected webhook response of {REVIEW_GROUP}/v1, Kind=AdmissionReview, got "
                              f"{group}/{got_version}, Kind={doc.get('kind') or ''}")
    response = doc.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    if version == "v1" and response.get("uid") != uid:
        raise InvalidResponse(f"expected response.uid={go_quote(uid)}, got {go_quote(str(response.get('uid') or ''))}")
    raw_patch = response.get("patch")
    patch_type = response.get("patchType")
    patch: list[Any] | None = None
    if version == "v1":
        if mutating:
            if raw_patch and patch_type is None:
                raise InvalidResponse("webhook returned response.patch but not response.patchType")
            if not raw_patch and patch_type is not None:
                raise InvalidResponse("webhook returned response.patchType but not response.patch")
            if patch_type is not None and patch_type == "":
                raise InvalidResponse('webhook returned invalid response.patchType of ""')
        else:
            if raw_patch:
                raise InvalidResponse("validating webhook may not return response.patch")
            if patch_type is not None:
                raise InvalidResponse("validating webhook may not return response.patchType")
    elif raw_patch:
        patch_type = "JSONPatch"
    if mutating and raw_patch:
        if patch_type != "JSONPatch":
            raise UnsupportedPatchType(str(patch_type))
        patch = _decode_patch(raw_patch)
    warnings = response.get("warnings")
    # The Go field is ``Result``; its JSON name is ``status``.
    result = response.get("status")
    return Response(allowed=response.get("allowed") is True, patch=patch,
                    result=result if isinstance(result, dict) else None,
                    warnings=[str(w) for w in warnings] if isinstance(warnings, list) else [])


class UnsupportedPatchType(Exception):
    """A patch of a type other than JSONPatch (upstream: a call failure)."""

    def __init__(self, patch_type: str) -> None:
        super().__init__(f"unsupported patch type {go_quote(patch_type)}")


def denial(name: str, result: Obj | None) -> ApiError:
    """``ToStatusErr``: the webhook's Status, its message prefixed with who denied the request."""
    status = dict(result or {})
    denied_by = f"admission webhook {go_quote(name)} denied the request"
    code = status.get("code")
    code = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else 400
    message, reason = status.get("message"), status.get("reason")
    if isinstance(message, str) and message:
        text = f"{denied_by}: {message}"
    elif isinstance(reason, str) and reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = status.get("details")
    return ApiError(code, reason if isinstance(reason, str) else "", text,
                    details if isinstance(details, dict) else None)


def dry_run_unsupported(name: str) -> ApiError:
    """``NewDryRunUnsupportedErr``."""
    return bad_request_error(f"admission webhook {go_quote(name)} does not support dry run")


def calling_failure(name: str, reason: str) -> ApiError:
    """A call that failed under ``failurePolicy: Fail``: ``NewInternalError(ErrCallingWebhook)``."""
    text = f"failed calling webhook {go_quote(name)}: {reason}"
    return ApiError(500, "InternalError", f"Internal error occurred: {text}", {"causes": [{"message": text}]})

