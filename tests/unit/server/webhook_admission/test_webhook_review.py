"""AdmissionReview requests and answers (kubeloop.server.webhook_admission.review), as tables."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from kubeloop.server.webhook_admission.matching import GVK, GVR, Attributes, Invocation
from kubeloop.server.webhook_admission.review import (
    InvalidResponse,
    NoKnownVersion,
    UnsupportedPatchType,
    build_review,
    calling_failure,
    denial,
    dry_run_unsupported,
    parse_body,
    review_version,
    verify_response,
)

UID = "0b8e6c6e-1111-2222-3333-444455556666"
PODS = GVR("", "v1", "pods")
POD = GVK("", "v1", "Pod")


def answer(response: dict[str, Any], api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def b64(value: Any) -> str:
    return base64.b64encode(orjson.dumps(value)).decode()


def test_review_fields_as_upstream() -> None:
    attributes = Attributes("UPDATE", PODS, "status", POD, "ns", "p", {"a": 1}, {"a": 0})
    review = build_review("v1", UID, Invocation(PODS, "status", POD), attributes, {"username": "u"},
                          {"a": 1}, {"a": 0}, True, {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"})
    assert review == {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {
        "uid": UID, "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "subResource": "status",
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1", "resource": "pods"}, "requestSubResource": "status",
        "name": "p", "namespace": "ns", "operation": "UPDATE", "userInfo": {"username": "u"},
        "object": {"a": 1}, "oldObject": {"a": 0}, "dryRun": True,
        "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}}}


@pytest.mark.parametrize(("versions", "expected"), [(["v1", "v1beta1"], "v1"), (["v2", "v1beta1"], "v1beta1")])
def test_review_version(versions: list[str], expected: str) -> None:
    assert review_version({"admissionReviewVersions": versions}) == expected


def test_no_known_review_version() -> None:
    with pytest.raises(NoKnownVersion, match=r"webhook does not accept known AdmissionReview versions"):
        review_version({"admissionReviewVersions": ["v9"]})


INVALID = [
    ("absent", answer({}) | {"response": None}, True, "webhook response was absent"),
    ("uid", answer({"uid": "other", "allowed": True}), True, f'expected response.uid="{UID}", got "other"'),
    ("version", answer({"uid": UID, "allowed": True}, "admission.k8s.io/v1beta1"), True,
     "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, "
     "Kind=AdmissionReview"),
    ("patch without type", answer({"uid": UID, "allowed": True, "patch": b64([])}), True,
     "webhook returned response.patch but not response.patchType"),
    ("type without patch", answer({"uid": UID, "allowed": True, "patchType": "JSONPatch"}), True,
     "webhook returned response.patchType but not response.patch"),
    ("validating patch", answer({"uid": UID, "allowed": True, "patch": b64([])}), False,
     "validating webhook may not return response.patch"),
    ("validating patch type", answer({"uid": UID, "allowed": True, "patchType": "JSONPatch"}), False,
     "validating webhook may not return response.patchType"),
]


@pytest.mark.parametrize(("case", "doc", "mutating", "text"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_responses(case: str, doc: dict[str, Any], mutating: bool, text: str) -> None:
    with pytest.raises(InvalidResponse) as raised:
        verify_response(doc, UID, "v1", mutating)
    assert str(raised.value) == text


def test_patch_decoded_and_warnings_kept() -> None:
    ops = [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]
    response = verify_response(answer({"uid": UID, "allowed": True, "patchType": "JSONPatch", "patch": b64(ops),
                                       "warnings": ["careful"]}), UID, "v1", True)
    assert (response.allowed, response.patch, response.warnings) == (True, ops, ["careful"])


def test_the_denial_status_is_read_from_status() -> None:
    response = verify_response(answer({"uid": UID, "allowed": False, "status": {"message": "m", "code": 409}}),
                               UID, "v1", False)
    assert (response.allowed, response.result) == (False, {"message": "m", "code": 409})


def test_v1beta1_needs_no_uid_and_implies_json_patch() -> None:
    ops = [{"op": "remove", "path": "/a"}]
    response = verify_response(answer({"allowed": True, "patch": b64(ops)}, "admission.k8s.io/v1beta1"),
                               UID, "v1beta1", True)
    assert response.patch == ops


def test_unsupported_patch_type() -> None:
    with pytest.raises(UnsupportedPatchType, match='unsupported patch type "MergePatch"'):
        verify_response(answer({"uid": UID, "allowed": True, "patchType": "MergePatch", "patch": b64({})}),
                        UID, "v1", True)


@pytest.mark.parametrize(("body", "text"), [
    (b"garbage", "couldn't get version/kind; json parse error: "),
    (b'{"apiVersion": "v1"}', "Object 'Kind' is missing in '{\"apiVersion\": \"v1\"}'"),
])
def test_unparsable_bodies(body: bytes, text: str) -> None:
    with pytest.raises(InvalidResponse) as raised:
        parse_body(body)
    assert str(raised.value).startswith(text)


DENIALS = [
    ("message", {"message": "no", "code": 403, "reason": "Forbidden"}, 403, "Forbidden",
     'admission webhook "w" denied the request: no'),
    ("reason only", {"reason": "Because"}, 400, "Because", 'admission webhook "w" denied the request: Because'),
    ("nothing", None, 400, "", 'admission webhook "w" denied the request without explanation'),
    ("code below 400", {"code": 200, "message": "m"}, 400, "", 'admission webhook "w" denied the request: m'),
]


@pytest.mark.parametrize(("case", "result", "code", "reason", "message"), DENIALS, ids=[c[0] for c in DENIALS])
def test_denials(case: str, result: dict[str, Any] | None, code: int, reason: str, message: str) -> None:
    error = denial("w", result)
    assert (error.code, error.reason, error.message) == (code, reason, message)


def test_failure_texts() -> None:
    failure = calling_failure("w", "failed to call webhook: boom")
    assert (failure.code, failure.reason, failure.message) == (
        500, "InternalError", 'Internal error occurred: failed calling webhook "w": failed to call webhook: boom')
    refused = dry_run_unsupported("w")
    assert (refused.code, refused.message) == (400, 'admission webhook "w" does not support dry run')
