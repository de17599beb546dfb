"""The service-account token core: what a token carries, and every way upstream refuses one;
the signing key on disk; the user a client certificate names."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kubeloop.server.auth import serviceaccount_tokens as sat
from kubeloop.server.auth.authenticator import Authenticator
from kubeloop.server.auth.serviceaccount_tokens import Claims, Ref, TokenError, TokenValidator, new_claims, sign
from kubeloop.server.auth.user import ADMIN_USER
from kubeloop.server.auth.x509_users import certificate_user
from kubeloop.server.certs import ensure_credentials, ensure_service_account_key, issue_client_certificate

NOW = 1_800_000_000
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
SA = Ref("builder", "sa-uid-1")
API = sat.API_AUDIENCES


def _stamp(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _obj(name: str, uid: str, deleted_at: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid}
    if deleted_at is not None:
        meta["deletionTimestamp"] = _stamp(deleted_at)
    return {"metadata": meta}


@dataclass
class Objects:
    """An in-memory ObjectLookup: (kind, namespace, name) -> object."""

    items: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)

    def service_account(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.items.get(("sa", namespace, name))

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.items.get(("secret", namespace, name))

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.items.get(("pod", namespace, name))

    def node(self, name: str) -> dict[str, Any] | None:
        return self.items.get(("node", "", name))


def _objects(**changes: dict[str, Any] | None) -> Objects:
    items: dict[tuple[str, str, str], dict[str, Any] | None] = {
        ("sa", "ns", "builder"): _obj("builder", "sa-uid-1"),
        ("pod", "ns", "web-0"): _obj("web-0", "pod-uid-1"),
        ("secret", "ns", "tok"): _obj("tok", "secret-uid-1"),
        ("node", "", "node-1"): _obj("node-1", "node-uid-1"),
    }
    for key, value in changes.items():
        kind, _, name = key.partition("__")
        items[(kind, "" if kind == "node" else "ns", name)] = value
    return Objects({k: v for k, v in items.items() if v is not None})


def _claims(**changes: Any) -> Claims:
    return replace(new_claims("ns", SA, API, 3600, NOW, "jti-1"), **changes)


def _validator(objects: Objects | None = None, now: float = NOW) -> TokenValidator:
    return TokenValidator([KEY.public_key()], objects or _objects(), lambda: now)


def _parts(token: str) -> list[Any]:
    head, body, _ = token.split(".")
    return [json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in (head, body)]


def test_a_token_carries_upstreams_header_and_claims() -> None:
    bound = new_claims("ns", SA, ["x", "y"], 600, NOW, "jti-1", pod=Ref("web-0", "pod-uid-1"),
                       node=Ref("node-1", "node-uid-1"))
    header, body = _parts(sign(KEY, bound))
    der = KEY.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    kid = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
    assert header == {"alg": "RS256", "kid": kid}
    assert body == {"aud": ["x", "y"], "exp": NOW + 600, "iat": NOW, "iss": sat.ISSUER, "jti": "jti-1",
                    "kubernetes.io": {"namespace": "ns", "node": {"name": "node-1", "uid": "node-uid-1"},
                                      "pod": {"name": "web-0", "uid": "pod-uid-1"},
                                      "serviceaccount": {"name": "builder", "uid": "sa-uid-1"}},
                    "nbf": NOW, "sub": "system:serviceaccount:ns:builder"}
    assert list(body) == sorted(body)


def test_a_secret_binding_excludes_pod_and_node() -> None:
    with pytest.raises(ValueError, match="one object type"):
        new_claims("ns", SA, API, 600, NOW, "j", pod=Ref("p", "u"), secret=Ref("s", "u"))


def test_a_valid_token_names_the_service_account_user() -> None:
    found = _validator().authenticate(sign(KEY, _claims()))
    assert found is not None
    assert found.audiences == API
    assert found.user.username == "system:serviceaccount:ns:builder"
    assert found.user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")
    assert found.user.uid == "sa-uid-1"
    assert found.user.extra == {"authentication.kubernetes.io/credential-id": ["JTI=jti-1"]}


def test_a_pod_bound_token_names_pod_and_node_in_extra() -> None:
    claims = _claims(pod=Ref("web-0", "pod-uid-1"), node=Ref("node-1", "node-uid-1"))
    found = _validator().authenticate(sign(KEY, claims))
    assert found is not None
    assert found.user.extra == {
        "authentication.kubernetes.io/pod-name": ["web-0"], "authentication.kubernetes.io/pod-uid": ["pod-uid-1"],
        "authentication.kubernetes.io/credential-id": ["JTI=jti-1"],
        "authentication.kubernetes.io/node-name": ["node-1"], "authentication.kubernetes.io/node-uid": ["node-uid-1"]}


_INVALIDATED = "service account token has been invalidated"


@pytest.mark.parametrize(("claims", "objects", "now", "error"), [
    # times, with the one-minute leeway
    (_claims(), _objects(), NOW + 3600 + 61, "service account token has expired"),
    (_claims(not_before=NOW + 120), _objects(), NOW, "service account token is not valid yet"),
    (_claims(issued_at=NOW + 120), _objects(), NOW, "service account token is issued in the future"),
    # audiences
    (_claims(audiences=("x",)), _objects(), NOW,
     'token audiences ["x"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]'),
    # the service account
    (_claims(), _objects(sa__builder=None), NOW, 'serviceaccounts "builder" not found'),
    (_claims(), _objects(sa__builder=_obj("builder", "sa-uid-2")), NOW,
     "service account UID (sa-uid-2) does not match claim (sa-uid-1)"),
    (_claims(), _objects(sa__builder=_obj("builder", "sa-uid-1", deleted_at=NOW - 61)), NOW,
     "service account ns/builder has been deleted"),
    # bound objects
    (_claims(pod=Ref("web-0", "pod-uid-1")), _objects(**{"pod__web-0": None}), NOW, _INVALIDATED),
    (_claims(pod=Ref("web-0", "pod-uid-1")), _objects(**{"pod__web-0": _obj("web-0", "pod-uid-1", NOW - 61)}),
     NOW, _INVALIDATED),
    (_claims(pod=Ref("web-0", "pod-uid-1")), _objects(**{"pod__web-0": _obj("web-0", "pod-uid-9")}), NOW,
     "pod UID (pod-uid-9) does not match service account pod ref claim (pod-uid-1)"),
    (_claims(secret=Ref("tok", "secret-uid-1")), _objects(secret__tok=None), NOW, _INVALIDATED),
    (_claims(secret=Ref("tok", "secret-uid-1")), _objects(secret__tok=_obj("tok", "secret-uid-2")), NOW,
     "secret UID (secret-uid-2) does not match service account secret ref claim (secret-uid-1)"),
    (_claims(node=Ref("node-1", "node-uid-1")), _objects(**{"node__node-1": None}), NOW, _INVALIDATED),
])
def test_a_token_is_refused_with_upstreams_text(claims: Claims, objects: Objects, now: int, error: str) -> None:
    with pytest.raises(TokenError) as refused:
        _validator(objects, now).authenticate(sign(KEY, claims))
    assert str(refused.value) == error


@pytest.mark.parametrize(("claims", "objects", "now"), [
    (_claims(), _objects(), NOW + 3600 + 59),  # expired, but within the leeway
    (_claims(not_before=NOW + 50), _objects(), NOW),
    (_claims(), _objects(sa__builder=_obj("builder", "sa-uid-1", deleted_at=NOW - 30)), NOW),
    (_claims(pod=Ref("web-0", "pod-uid-1")), _objects(**{"pod__web-0": _obj("web-0", "pod-uid-1", NOW - 30)}), NOW),
    # A pod-bound token's node is only reported, never looked up.
    (_claims(pod=Ref("web-0", "pod-uid-1"), node=Ref("gone", "x")), _objects(), NOW),
])
def test_a_token_within_the_leeway_still_authenticates(claims: Claims, objects: Objects, now: int) -> None:
    assert _validator(objects, now).authenticate(sign(KEY, claims)) is not None


def test_requested_audiences_are_intersected() -> None:
    token = sign(KEY, _claims(audiences=("x", "y")))
    found = _validator().authenticate(token, ["y", "z"])
    assert found is not None and found.audiences == ("y",)
    with pytest.raises(TokenError, match=r'token audiences \["x" "y"\] is invalid for the target audiences \["z"\]'):
        _validator().authenticate(token, ["z"])


def test_a_token_signed_by_another_key_finds_no_key() -> None:
    with pytest.raises(TokenError) as refused:
        _validator().authenticate(sign(OTHER_KEY, _claims()))
    assert str(refused.value) == "invalid signature, no keys found"


def test_a_tampered_payload_fails_the_signature() -> None:
    head, _, signature = sign(KEY, _claims()).split(".")
    forged = sat.payload(_claims(service_account=Ref("admin", "sa-uid-1")))
    body = base64.urlsafe_b64encode(json.dumps(forged).encode()).decode().rstrip("=")
    with pytest.raises(TokenError) as refused:
        _validator().authenticate(f"{head}.{body}.{signature}")
    assert str(refused.value) == "go-jose/go-jose: error in cryptographic primitive"


@pytest.mark.parametrize("token", ["opaque-token", "a.b.c", sign(KEY, _claims(issuer="https://other.example"))])
def test_tokens_of_others_are_left_alone(token: str) -> None:
    assert _validator().authenticate(token) is None


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_authenticator_caches_successes_for_ten_seconds() -> None:
    objects = _objects()
    monotonic = _Clock()
    authenticator = Authenticator("admin-token", _validator(objects), monotonic=monotonic, wall=lambda: NOW)
    token = sign(KEY, _claims())
    assert authenticator.review(token).user is not None
    del objects.items[("sa", "ns", "builder")]
    monotonic.now = 9.9
    assert authenticator.review(token).user is not None  # cached, as upstream's token cache
    monotonic.now = 10.1
    refused = authenticator.review(token)
    assert (refused.user, refused.error) == (None, 'serviceaccounts "builder" not found')
    assert authenticator.review(token).error  # failures are not cached


def test_the_admin_token_is_audience_agnostic() -> None:
    authenticator = Authenticator("admin-token", _validator())
    assert authenticator.review("admin-token").user == ADMIN_USER
    assert authenticator.review("admin-token").audiences == API
    assert authenticator.review("admin-token", ["x"]).user is None
    assert authenticator.review("admin-token", ["x", API[0]]).audiences == API


def test_the_signing_key_is_private_and_kept_across_restarts(tmp_path: Path) -> None:
    first = ensure_service_account_key(tmp_path)
    assert (tmp_path / "sa.key").stat().st_mode & 0o777 == 0o600
    assert sat.key_id(ensure_service_account_key(tmp_path).public_key()) == sat.key_id(first.public_key())


def test_a_client_certificate_names_its_user_and_groups(tmp_path: Path) -> None:
    credentials = ensure_credentials(tmp_path, "127.0.0.1")
    pem, _ = issue_client_certificate(credentials, "jane", ("dev", "ops"))
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    user = certificate_user(der)
    assert user is not None
    assert (user.username, user.groups) == ("jane", ("dev", "ops", "system:authenticated"))
    credential = f"X509SHA256={hashlib.sha256(der).hexdigest()}"
    assert user.extra == {"authentication.kubernetes.io/credential-id": [credential]}
