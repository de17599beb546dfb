"""The server's service-account token issuer and validator, over its store.

Binds the pure core (:mod:`.serviceaccount_tokens`) to one signing key, one clock and the
stored ServiceAccounts, Pods, Secrets and Nodes: the TokenRequest handler issues through
:meth:`ServiceAccountTokens.issue`, the authenticator validates through
:attr:`ServiceAccountTokens.validator`. As kube-apiserver with one ``--service-account-key-file``
and ``--service-account-signing-key-file``: the same key signs and verifies.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa

from kubeloop.server.auth.serviceaccount_tokens import (
    API_AUDIENCES,
    ISSUER,
    Claims,
    Ref,
    TokenValidator,
    new_claims,
    sign,
)
from kubeloop.server.storage import ResourceType, Storage

Obj = dict[str, Any]

_SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")
_SECRETS = ResourceType("", "secrets")
_PODS = ResourceType("", "pods")
_NODES = ResourceType("", "nodes")


class StoredObjects:
    """:class:`~.serviceaccount_tokens.ObjectLookup` over a store."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def service_account(self, namespace: str, name: str) -> Obj | None:
        return self._storage.get(_SERVICE_ACCOUNTS, namespace, name)

    def secret(self, namespace: str, name: str) -> Obj | None:
        return self._storage.get(_SECRETS, namespace, name)

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self._storage.get(_PODS, namespace, name)

    def node(self, name: str) -> Obj | None:
        return self._storage.get(_NODES, "", name)


class ServiceAccountTokens:
    """Issues and validates the tokens of one server (``clock``: seconds since the epoch)."""

    def __init__(self, key: rsa.RSAPrivateKey, storage: Storage, clock: Callable[[], float],
                 new_jti: Callable[[], str] = lambda: str(uuid.uuid4()), issuer: str = ISSUER,
                 api_audiences: Sequence[str] = API_AUDIENCES) -> None:
        self._key = key
        self._clock = clock
        self._new_jti = new_jti
        self.issuer = issuer
        self.api_audiences = tuple(api_audiences)
        self.validator = TokenValidator([key.public_key()], StoredObjects(storage), clock, issuer, api_audiences)

    def issue(self, namespace: str, service_account: Ref, audiences: Sequence[str], expiration_seconds: int,
              pod: Ref | None = None, secret: Ref | None = None, node: Ref | None = None,
              warn_after_seconds: int = 0) -> tuple[str, Claims]:
        """A signed token and its claims, issued now."""
        claims = new_claims(namespace, service_account, audiences or self.api_audiences, expiration_seconds,
                            int(self._clock()), self._new_jti(), pod, secret, node, warn_after_seconds)
        if claims.issuer != self.issuer:
            claims = replace(claims, issuer=self.issuer)
        return sign(self._key, claims), claims
