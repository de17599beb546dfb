"""From a request's credentials to a :class:`~.user.UserInfo`.

kube-apiserver's union of authenticators (``pkg/authentication/request/union``): a bearer token
or a client certificate that authenticates names the user; a credential that authenticates
nobody is 401 ``Unauthorized``; a request with no credential at all is ``system:anonymous``
(anonymous auth is on by default). A non-Bearer ``Authorization`` header is no credential to a
server without basic auth, as upstream's bearer-token authenticator ignores it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from kubeloop.api.status import unauthorized_error
from kubeloop.server.auth.user import ADMIN_USER, ANONYMOUS_USER, UserInfo


def bearer_token(authorization: str | None) -> str | None:
    """The bearer token of an ``Authorization`` header, None when it carries none."""
    parts = (authorization or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


class Authenticator:
    """The server's authenticators; today the administrator's static bearer token."""

    def __init__(self, admin_token: str, static_tokens: Mapping[str, UserInfo] | None = None) -> None:
        self._admin = admin_token.encode()
        self._static = {token.encode(): user for token, user in (static_tokens or {}).items() if token}
        """Further bearer tokens and whom they name (upstream's ``--token-auth-file``)."""

    def authenticate_token(self, token: str) -> UserInfo | None:
        """The user ``token`` authenticates, None when it authenticates nobody (TokenReview)."""
        if self._admin and hmac.compare_digest(token.encode(), self._admin):
            return ADMIN_USER
        encoded = token.encode()
        for known, user in self._static.items():
            if hmac.compare_digest(encoded, known):
                return user
        return None

    def authenticate(self, authorization: str | None, peer_certificate: object = None) -> UserInfo:
        """The user of a request; 401 when its credential authenticates nobody."""
        token = bearer_token(authorization)
        if token is None:
            return ANONYMOUS_USER
        user = self.authenticate_token(token)
        if user is None:
            raise unauthorized_error()
        return user
