"""Access review validation texts and the attributes a review's spec asks about."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import AlwaysAllow
from kubeloop.server.auth.rbac.reviews import access_review_status, review_attributes
from kubeloop.server.auth.user import UserInfo

BOB = UserInfo("bob")


@pytest.mark.parametrize(("kind", "spec", "message"), [
    ("SelfSubjectAccessReview", {},
     'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
     "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
    ("SelfSubjectAccessReview", {"resourceAttributes": {"verb": "get"},
                                 "nonResourceAttributes": {"path": "/x", "verb": "get"}},
     'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
     'authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with '
     "resourceAttributes"),
    ("SubjectAccessReview", {"user": "u", "nonResourceAttributes": {"path": "/x", "verb": "get"}}, ""),
    ("SubjectAccessReview", {"resourceAttributes": {"verb": "get"}},
     'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user '
     "or group must be specified"),
    ("SubjectAccessReview", {"groups": ["g"], "resourceAttributes": {"verb": "get"}}, ""),
])
def test_validation(kind: str, spec: dict[str, Any], message: str) -> None:
    if not message:
        assert access_review_status(AlwaysAllow(), kind, spec, BOB) == {"allowed": True}
        return
    with pytest.raises(ApiError) as raised:
        access_review_status(AlwaysAllow(), kind, spec, BOB)
    assert (raised.value.code, raised.value.message) == (422, message)


def test_attributes_of_a_spec() -> None:
    assert review_attributes({"resourceAttributes": {
        "namespace": "ns", "verb": "update", "group": "apps", "version": "v1", "resource": "deployments",
        "subresource": "scale", "name": "web"}}) == RequestAttributes(True, "update", "", "apps", "v1", "ns",
                                                                      "deployments", "scale", "web")
    assert review_attributes({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}) == \
        RequestAttributes(False, "get", "/healthz")
