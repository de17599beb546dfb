"""Authenticators: what goes into the ``Authorization`` header, and when it changes.

The client asks its :class:`Authenticator` for :class:`Credentials` before every request
(cheap: each implementation caches) and, after a 401, calls :meth:`Authenticator.refresh`
with the credentials that were rejected; if that yields new ones the request is retried
once. Implementations: none, a static bearer token or basic auth, a token file re-read
periodically (in-cluster service-account tokens rotate; client-go re-reads them every
minute), and the exec plugin in :mod:`kubeloop.client._exec`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Protocol

from kubeloop.client._clock import Clock
from kubeloop.client._errors import ConfigError


@dataclass(frozen=True, slots=True)
class Credentials:
    """What one request is authenticated with."""

    authorization: str | None = None
    """Full ``Authorization`` header value, or ``None``."""
    client_cert_pem: bytes | None = None
    """Client certificate from an exec plugin (kubeconfig certificates live in the TLS
    context from the start)."""
    client_key_pem: bytes | None = None


NO_CREDENTIALS = Credentials()


class Authenticator(Protocol):
    async def credentials(self) -> Credentials:
        """Current credentials (cached; may run a plugin or read a file when stale)."""
        ...

    async def refresh(self, rejected: Credentials) -> bool:
        """After a 401 with ``rejected``: obtain new credentials; True if they differ."""
        ...


class StaticAuth:
    """Fixed credentials: a bearer token, basic auth, or nothing."""

    def __init__(self, credentials: Credentials = NO_CREDENTIALS) -> None:
        self._credentials = credentials

    @classmethod
    def bearer(cls, token: str) -> StaticAuth:
        return cls(Credentials(authorization=f"Bearer {token}"))

    @classmethod
    def basic(cls, username: str, password: str) -> StaticAuth:
        raw = f"{username}:{password}".encode()
        return cls(Credentials(authorization="Basic " + base64.b64encode(raw).decode("ascii")))

    async def credentials(self) -> Credentials:
        return self._credentials

    async def refresh(self, rejected: Credentials) -> bool:
        return False


class TokenFileAuth:
    """A bearer token read from a file, re-read every ``period`` seconds and after a 401.

    A read failure keeps the last good token (the file may be mid-rotation); only a failure
    with no token ever read is an error. ``initial_token`` is used if the file was never
    readable, as client-go does when both ``token`` and ``tokenFile`` are set.
    """

    def __init__(self, path: str, clock: Clock, period: float = 60.0, initial_token: str | None = None) -> None:
        self._path = path
        self._clock = clock
        self._period = period
        self._token = initial_token
        self._credentials = Credentials(f"Bearer {initial_token}") if initial_token else NO_CREDENTIALS
        self._read_at: float | None = None

    def _read(self) -> bool:
        """Re-read the file; True if the token changed."""
        self._read_at = self._clock.now()
        try:
            with open(self._path, encoding="utf-8") as handle:
                token = handle.read().strip()
        except OSError as exc:
            if self._token is None:
                raise ConfigError(f"cannot read token file {self._path}: {exc}") from exc
            return False
        if not token or token == self._token:
            if self._token is None:
                raise ConfigError(f"token file {self._path} is empty")
            return False
        self._token = token
        self._credentials = Credentials(f"Bearer {token}")
        return True

    async def credentials(self) -> Credentials:
        if self._read_at is None or self._clock.now() - self._read_at >= self._period:
            self._read()
        return self._credentials

    async def refresh(self, rejected: Credentials) -> bool:
        if rejected != self._credentials:
            return True
        return self._read()
