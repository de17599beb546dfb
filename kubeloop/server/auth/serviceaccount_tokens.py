"""Service-account tokens: RS256 JWTs that name a ServiceAccount, issued and checked.

The issuing half follows upstream's ``pkg/serviceaccount/jwt.go`` (``JWTTokenGenerator``,
``keyIDFromPublicKey``) and ``claims.go`` (``Claims``); the checking half ``jwt.go``
(``jwtTokenAuthenticator.AuthenticateToken``) and ``claims.go`` (``validator.Validate``), with
the user built as k8s.io/apiserver ``pkg/authentication/serviceaccount`` ``ServiceAccountInfo.UserInfo``
does. Everything here is pure: the current time, the jti generator and the object lookups are
handed in, so the rules are table-tested without a server.

What a token looks like (the facts carry over from upstream):

* header ``{"alg":"RS256","kid":K}``, ``K`` the unpadded base64url SHA-256 of the public key's
  PKIX DER encoding;
* payload (keys sorted, as Go's JSON of a map): ``aud`` (always a list), ``exp``, ``iat``,
  ``iss``, ``jti``, ``kubernetes.io`` {``namespace``, ``serviceaccount`` {name, uid}, and
  ``pod`` / ``secret`` / ``node`` {name, uid} when bound, ``warnafter`` for kubelet's
  extended pod tokens}, ``nbf``, ``sub``
  ``system:serviceaccount:NS:NAME``.

How a token is checked, in upstream's order (the first failure is the error text a TokenReview
reports in ``status.error``):

1. not a JWT of our issuer (payload unreadable or ``iss`` another's): not ours (None), so other
   authenticators may try it;
2. no key with the token's ``kid``: ``invalid signature, no keys found``; a bad signature:
   go-jose's ``go-jose/go-jose: error in cryptographic primitive``;
3. audiences: the token's (the API audiences when it has none) must meet the requested ones
   (the API audiences unless a TokenReview names others), else ``token audiences [...] is
   invalid for the target audiences [...]``;
4. times, with go-jose's one-minute leeway: ``nbf``, then ``exp``, then ``iat``;
5. the ServiceAccount exists (its NotFound text), has the claimed uid, and was not deleted more
   than the leeway ago; a bound Secret, Pod (or, without a pod, Node) likewise, a missing or
   long-deleted one reading ``service account token has been invalidated``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from kubeloop.api.meta import parse_time
from kubeloop.api.status import go_quote
from kubeloop.server.auth.user import UserInfo

Obj = dict[str, Any]

ISSUER = "https://kubernetes.default.svc.cluster.local"
"""kube-apiserver's ``--service-account-issuer`` in kind and kubeadm clusters."""
API_AUDIENCES: tuple[str, ...] = (ISSUER,)
"""``--api-audiences`` defaults to the issuer: what a request to the API must be meant for."""
LEEWAY_SECONDS = 60
"""go-jose's ``jwt.DefaultLeeway``: clock skew allowed on nbf/exp/iat and on deletions."""
KEY_BITS = 2048

SA_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"
AUTHENTICATED_GROUP = "system:authenticated"
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

INVALIDATED = "service account token has been invalidated"
BAD_SIGNATURE = "go-jose/go-jose: error in cryptographic primitive"
NO_KEYS = "invalid signature, no keys found"


class TokenError(Exception):
    """A token of ours that does not authenticate; ``str()`` is upstream's error text."""


@dataclass(frozen=True)
class Ref:
    """A ``{name, uid}`` reference of the private claim."""

    name: str
    uid: str


@dataclass(frozen=True)
class Claims:
    """What a service-account token says."""

    namespace: str
    service_account: Ref
    audiences: tuple[str, ...]
    issued_at: int
    not_before: int
    expiry: int
    jti: str = ""
    pod: Ref | None = None
    secret: Ref | None = None
    node: Ref | None = None
    issuer: str = ISSUER
    warn_after: int | None = None
    """``kubernetes.io.warnafter``: when a pod-bound token given an extended life should have expired."""

    @property
    def subject(self) -> str:
        return f"{SA_PREFIX}{self.namespace}:{self.service_account.name}"


def new_claims(namespace: str, service_account: Ref, audiences: Sequence[str], expiration_seconds: int, now: int,
               jti: str, pod: Ref | None = None, secret: Ref | None = None, node: Ref | None = None,
               warn_after_seconds: int = 0) -> Claims:
    """A token's claims as upstream's ``Claims`` makes them: iat = nbf = now, exp = now + expiration."""
    if secret is not None and (pod is not None or node is not None):
        raise ValueError("internal error, token can only be bound to one object type")
    return Claims(namespace, service_account, tuple(audiences), now, now, now + expiration_seconds, jti,
                  pod, secret, node, ISSUER, now + warn_after_seconds if warn_after_seconds else None)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id(public_key: rsa.RSAPublicKey) -> str:
    """Upstream's ``keyIDFromPublicKey``: base64url (unpadded) SHA-256 of the PKIX DER key."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return _b64(hashlib.sha256(der).digest())


def new_signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)


def _ref_json(ref: Ref) -> Obj:
    # Go's omitempty on both fields.
    out: Obj = {}
    if ref.name:
        out["name"] = ref.name
    if ref.uid:
        out["uid"] = ref.uid
    return out


def payload(claims: Claims) -> Obj:
    """The JWT payload (keys in Go's order for a map: sorted)."""
    private: Obj = {}
    if claims.namespace:
        private["namespace"] = claims.namespace
    for name, ref in (("node", claims.node), ("pod", claims.pod), ("secret", claims.secret)):
        if ref is not None:
            private[name] = _ref_json(ref)
    private["serviceaccount"] = _ref_json(claims.service_account)
    if claims.warn_after is not None:
        private["warnafter"] = claims.warn_after
    out: Obj = {"aud": list(claims.audiences), "exp": claims.expiry, "iat": claims.issued_at, "iss": claims.issuer}
    if claims.jti:
        out["jti"] = claims.jti
    out["kubernetes.io"] = dict(sorted(private.items()))
    out["nbf"] = claims.not_before
    out["sub"] = claims.subject
    return out


def sign(key: rsa.RSAPrivateKey, claims: Claims) -> str:
    """The compact JWS of ``claims``, RS256 with ``key``."""
    header = {"alg": "RS256", "kid": key_id(key.public_key())}
    signing_input = (_b64(json.dumps(header, separators=(",", ":")).encode()) + "."
                     + _b64(json.dumps(payload(claims), separators=(",", ":")).encode()))
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + _b64(signature)


def _ref(value: object) -> Ref | None:
    if not isinstance(value, dict):
        return None
    return Ref(str(value.get("name") or ""), str(value.get("uid") or ""))


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _audiences(value: object) -> tuple[str, ...]:
    # A JWT's aud is a string or a list of strings (RFC 7519 4.1.3).
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return ()


def _decode_json(part: str) -> Obj | None:
    try:
        value = json.loads(_unb64(part))
    except (ValueError, binascii.Error):
        return None
    return value if isinstance(value, dict) else None


def go_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(value) for value in values) + "]"


class ObjectLookup(Protocol):
    """The stored objects a token may be bound to (None when absent)."""

    def service_account(self, namespace: str, name: str) -> Obj | None: ...

    def secret(self, namespace: str, name: str) -> Obj | None: ...

    def pod(self, namespace: str, name: str) -> Obj | None: ...

    def node(self, name: str) -> Obj | None: ...


@dataclass(frozen=True)
class Authenticated:
    """A token that authenticates: who, and for which of the requested audiences."""

    user: UserInfo
    audiences: tuple[str, ...]
    expiry: int


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


class TokenValidator:
    """Checks tokens signed by one of ``keys`` (see the module docstring for the order)."""

    def __init__(self, keys: Sequence[rsa.RSAPublicKey], lookup: ObjectLookup, clock: Callable[[], float],
                 issuer: str = ISSUER, api_audiences: Sequence[str] = API_AUDIENCES) -> None:
        self._keys = {key_id(key): key for key in keys}
        self._lookup = lookup
        self._clock = clock
        self._issuer = issuer
        self._api_audiences = tuple(api_audiences)

    def authenticate(self, token: str, requested: Sequence[str] | None = None) -> Authenticated | None:
        """The user ``token`` names; None when it is not one of ours; TokenError when it fails."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        header, body = _decode_json(parts[0]), _decode_json(parts[1])
        # hasCorrectIssuer: a token of another issuer is left to other authenticators.
        if header is None or body is None or body.get("iss") != self._issuer:
            return None
        kid = header.get("kid")
        keys = list(self._keys.values()) if not kid else [k for i, k in self._keys.items() if i == kid]
        if not keys:
            raise TokenError(NO_KEYS)
        try:
            signature = _unb64(parts[2])
        except (ValueError, binascii.Error):
            return None
        if header.get("alg") != "RS256" or not self._verified(keys, f"{parts[0]}.{parts[1]}".encode(), signature):
            raise TokenError(BAD_SIGNATURE)
        token_audiences = _audiences(body.get("aud")) or self._api_audiences
        wanted = tuple(requested) if requested else self._api_audiences
        audiences = tuple(aud for aud in token_audiences if aud in wanted)
        if not audiences:
            raise TokenError(f"token audiences {go_list(token_audiences)} is invalid for the target audiences "
                             f"{go_list(wanted)}")
        private = body.get("kubernetes.io")
        private = private if isinstance(private, dict) else {}
        claims = Claims(str(private.get("namespace") or ""), _ref(private.get("serviceaccount")) or Ref("", ""),
                        token_audiences, _int(body.get("iat")) or 0, _int(body.get("nbf")) or 0,
                        _int(body.get("exp")) or 0, str(body.get("jti") or ""), _ref(private.get("pod")),
                        _ref(private.get("secret")), _ref(private.get("node")), self._issuer)
        now = self._clock()
        self._check_times(body, now)
        return Authenticated(self._validate_objects(claims, now), audiences, claims.expiry)

    @staticmethod
    def _verified(keys: Sequence[rsa.RSAPublicKey], signed: bytes, signature: bytes) -> bool:
        for key in keys:
            try:
                key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
            except InvalidSignature:
                continue
            return True
        return False

    @staticmethod
    def _check_times(body: Obj, now: float) -> None:
        # go-jose's Claims.ValidateWithLeeway: nbf, exp, iat, each only when present.
        nbf, exp, iat = _int(body.get("nbf")), _int(body.get("exp")), _int(body.get("iat"))
        if nbf is not None and now + LEEWAY_SECONDS < nbf:
            raise TokenError("service account token is not valid yet")
        if exp is not None and now - LEEWAY_SECONDS > exp:
            raise TokenError("service account token has expired")
        if iat is not None and now + LEEWAY_SECONDS < iat:
            raise TokenError("service account token is issued in the future")

    @staticmethod
    def _deleted_long_ago(obj: Obj, now: float) -> bool:
        stamp = _meta(obj).get("deletionTimestamp")
        moment = parse_time(stamp) if isinstance(stamp, str) else None
        return moment is not None and moment.timestamp() < now - LEEWAY_SECONDS

    def _check_bound(self, obj: Obj | None, ref: Ref, what: str, now: float) -> None:
        if obj is None:
            raise TokenError(INVALIDATED)
        uid = str(_meta(obj).get("uid") or "")
        if uid != ref.uid:
            raise TokenError(f"{what} UID ({uid}) does not match service account {what} ref claim ({ref.uid})")
        if self._deleted_long_ago(obj, now):
            raise TokenError(INVALIDATED)

    def _validate_objects(self, claims: Claims, now: float) -> UserInfo:
        namespace, sa_ref = claims.namespace, claims.service_account
        account = self._lookup.service_account(namespace, sa_ref.name)
        if account is None:
            raise TokenError(f'serviceaccounts "{sa_ref.name}" not found')
        uid = str(_meta(account).get("uid") or "")
        if uid != sa_ref.uid:
            raise TokenError(f"service account UID ({uid}) does not match claim ({sa_ref.uid})")
        if self._deleted_long_ago(account, now):
            raise TokenError(f"service account {namespace}/{sa_ref.name} has been deleted")
        if claims.secret is not None:
            self._check_bound(self._lookup.secret(namespace, claims.secret.name), claims.secret, "secret", now)
        if claims.pod is not None:
            self._check_bound(self._lookup.pod(namespace, claims.pod.name), claims.pod, "pod", now)
        elif claims.node is not None:
            self._check_bound(self._lookup.node(claims.node.name), claims.node, "node", now)
        return service_account_user(claims)


def service_account_user(claims: Claims) -> UserInfo:
    """``ServiceAccountInfo.UserInfo`` plus ``system:authenticated`` (the group adder's)."""
    namespace = claims.namespace
    extra: dict[str, list[str]] = {}
    if claims.pod is not None and claims.pod.name and claims.pod.uid:
        extra[POD_NAME_KEY] = [claims.pod.name]
        extra[POD_UID_KEY] = [claims.pod.uid]
    if claims.jti:
        extra[CREDENTIAL_ID_KEY] = [f"JTI={claims.jti}"]
    if claims.node is not None and claims.node.name:
        extra[NODE_NAME_KEY] = [claims.node.name]
        if claims.node.uid:
            extra[NODE_UID_KEY] = [claims.node.uid]
    return UserInfo(claims.subject, (SA_GROUP, f"{SA_GROUP}:{namespace}", AUTHENTICATED_GROUP),
                    claims.service_account.uid, extra)
