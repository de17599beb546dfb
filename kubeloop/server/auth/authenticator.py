"""From a request's credentials to a :class:`~.user.UserInfo`.

kube-apiserver's union of authenticators (``pkg/authentication/request/union``), in its order:
a client certificate verified against the cluster CA (:mod:`.x509_users`), then a bearer token,
the administrator's static token (audience-agnostic, as ``authenticator.WrapAudienceAgnosticToken``
makes a token file) or a service-account JWT (:mod:`.serviceaccount_tokens`). A credential that
authenticates nobody is 401 ``Unauthorized``; a request with no credential at all is
``system:anonymous`` (anonymous auth is on by default). A non-Bearer ``Authorization`` header is
no credential to a server without basic auth, as upstream's bearer-token authenticator ignores it.

Token answers are cached for :data:`SUCCESS_TTL_SECONDS` per (token, audiences), as
kube-apiserver's ``tokencache`` with its default ``--token-success-cache-ttl`` (failures are not
cached, its default too): a JWT costs an RSA verification and up to three store reads, and
clients send the same token on every request. A cached answer outlives neither the token nor a
deletion by more than that TTL, as upstream.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kubeloop.api.status import unauthorized_error
from kubeloop.server.auth.serviceaccount_tokens import API_AUDIENCES, TokenError, TokenValidator
from kubeloop.server.auth.user import ADMIN_USER, ANONYMOUS_USER, UserInfo
from kubeloop.server.auth.x509_users import certificate_user

SUCCESS_TTL_SECONDS = 10.0
_CACHE_LIMIT = 4096


def bearer_token(authorization: str | None) -> str | None:
    """The bearer token of an ``Authorization`` header, None when it carries none."""
    parts = (authorization or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


@dataclass(frozen=True)
class TokenResult:
    """A token's answer: the user (None: not authenticated), the audiences it was good for, and
    the error text of an authenticator that recognised the token and refused it."""

    user: UserInfo | None
    audiences: tuple[str, ...] = ()
    error: str = ""


class Authenticator:
    """The server's authenticators: client certificates, the admin token, service-account JWTs."""

    def __init__(self, admin_token: str, service_accounts: TokenValidator | None = None,
                 api_audiences: Sequence[str] = API_AUDIENCES,
                 monotonic: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 cache_ttl: float = SUCCESS_TTL_SECONDS, static_tokens: Mapping[str, UserInfo] | None = None) -> None:
        self._admin = admin_token.encode()
        self._static = {token.encode(): user for token, user in (static_tokens or {}).items() if token}
        """Further bearer tokens and whom they name (upstream's ``--token-auth-file``)."""
        self.service_accounts = service_accounts
        self._api_audiences = tuple(api_audiences)
        self._monotonic = monotonic
        self._wall = wall
        self._ttl = cache_ttl
        self._cache: dict[tuple[str, tuple[str, ...]], tuple[float, TokenResult]] = {}

    def review(self, token: str, audiences: Sequence[str] = ()) -> TokenResult:
        """``token`` for ``audiences`` (the API audiences when empty), as a TokenReview sees it."""
        wanted = tuple(audiences) or self._api_audiences
        key = (token, wanted)
        cached = self._cache.get(key)
        if cached is not None:
            if self._monotonic() < cached[0]:
                return cached[1]
            del self._cache[key]
        result, expiry = self._review(token, wanted)
        if result.user is not None and self._ttl > 0:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            # Never past the token's own expiry (plus go-jose's leeway, which validation allows).
            ttl = self._ttl if expiry is None else min(self._ttl, expiry + 60 - self._wall())
            if ttl > 0:
                self._cache[key] = (self._monotonic() + ttl, result)
        return result

    def _review(self, token: str, wanted: tuple[str, ...]) -> tuple[TokenResult, int | None]:
        if self._admin and hmac.compare_digest(token.encode(), self._admin):
            shared = tuple(aud for aud in self._api_audiences if aud in wanted)
            return (TokenResult(ADMIN_USER, shared) if shared else TokenResult(None)), None
        encoded = token.encode()
        for known, user in self._static.items():
            if hmac.compare_digest(encoded, known):
                shared = tuple(aud for aud in self._api_audiences if aud in wanted)
                return (TokenResult(user, shared) if shared else TokenResult(None)), None
        if self.service_accounts is None:
            return TokenResult(None), None
        try:
            found = self.service_accounts.authenticate(token, wanted)
        except TokenError as error:
            return TokenResult(None, (), str(error)), None
        if found is None:
            return TokenResult(None), None
        return TokenResult(found.user, found.audiences), found.expiry

    def authenticate_token(self, token: str) -> UserInfo | None:
        """The user ``token`` authenticates for the API, None when it authenticates nobody."""
        return self.review(token).user

    def authenticate(self, authorization: str | None, peer_certificate: bytes | None = None) -> UserInfo:
        """The user of a request (``peer_certificate``: the verified client certificate's DER
        bytes); 401 when its credential authenticates nobody."""
        if peer_certificate:
            user = certificate_user(peer_certificate)
            if user is not None:
                return user
        token = bearer_token(authorization)
        if token is None:
            return ANONYMOUS_USER
        found = self.authenticate_token(token)
        if found is None:
            raise unauthorized_error()
        return found
