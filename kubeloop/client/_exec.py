"""Exec credential plugins (``client.authentication.k8s.io`` v1 and v1beta1).

The plugin is a program named in kubeconfig (``aws eks get-token``, ``gke-gcloud-auth-plugin``,
``kubelogin``...). We run it as an asyncio subprocess with no stdin, pass
``KUBERNETES_EXEC_INFO`` (an ``ExecCredential`` whose ``spec.interactive`` is false, plus the
cluster when ``provideClusterInfo`` is set), and read an ``ExecCredential`` from its stdout.
Its ``status`` carries a ``token`` and/or ``clientCertificateData`` + ``clientKeyData`` and an
optional ``expirationTimestamp``. The credential is cached until that time; after a 401 with
the cached credential it is discarded and the plugin runs again. Concurrent callers share
one plugin run (a lock), so a burst of requests does not fork a burst of plugins.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from kubeloop.client._auth import Credentials
from kubeloop.client._clock import Clock
from kubeloop.client._config import ExecConfig
from kubeloop.client._errors import ConfigError, ExecPluginError

SUPPORTED_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


def parse_timestamp(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (``2024-01-02T03:04:05Z``, fractions and offsets allowed)."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ExecPluginError(f"exec plugin returned an invalid expirationTimestamp {text!r}") from exc
    if parsed.tzinfo is None:
        raise ExecPluginError(f"exec plugin expirationTimestamp {text!r} has no time zone")
    return parsed


def exec_info(config: ExecConfig) -> dict[str, Any]:
    """The ``KUBERNETES_EXEC_INFO`` document for ``config`` (never interactive: no stdin)."""
    spec: dict[str, Any] = {"interactive": False}
    if config.provide_cluster_info and config.cluster_info is not None:
        spec["cluster"] = config.cluster_info
    return {"kind": "ExecCredential", "apiVersion": config.api_version, "spec": spec}


def parse_exec_output(config: ExecConfig, stdout: bytes) -> tuple[Credentials, datetime | None]:
    """Validate a plugin's ``ExecCredential`` output; return credentials and expiry."""
    try:
        doc = orjson.loads(stdout)
    except orjson.JSONDecodeError as exc:
        raise ExecPluginError(f"exec plugin {config.command!r} printed invalid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
        raise ExecPluginError(f"exec plugin {config.command!r} did not print an ExecCredential")
    if doc.get("apiVersion") != config.api_version:
        raise ExecPluginError(
            f"exec plugin is configured to use API version {config.api_version}, "
            f"plugin returned version {doc.get('apiVersion')}"
        )
    status = doc.get("status")
    if not isinstance(status, dict):
        raise ExecPluginError(f"exec plugin {config.command!r} returned no status")
    token = status.get("token") or None
    cert = status.get("clientCertificateData") or None
    key = status.get("clientKeyData") or None
    if (cert is None) != (key is None):
        raise ExecPluginError("exec plugin returned only one of clientCertificateData and clientKeyData")
    if token is None and cert is None:
        raise ExecPluginError("exec plugin didn't return a token or cert/key pair")
    expiry_text = status.get("expirationTimestamp")
    expiry = parse_timestamp(str(expiry_text)) if expiry_text else None
    credentials = Credentials(
        authorization=f"Bearer {token}" if token else None,
        client_cert_pem=str(cert).encode() if cert else None,
        client_key_pem=str(key).encode() if key else None,
    )
    return credentials, expiry


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ExecAuth:
    """Authenticator running an exec plugin; see the module docstring for the contract.

    ``wall`` reads the wall clock once per plugin run, to turn ``expirationTimestamp`` into
    a deadline on ``clock`` (so expiry follows the injectable monotonic clock).
    """

    def __init__(self, config: ExecConfig, clock: Clock, wall: Callable[[], datetime] = _utc_now) -> None:
        if config.api_version not in SUPPORTED_API_VERSIONS:
            raise ConfigError(f"exec plugin: unsupported apiVersion {config.api_version!r}; "
                              f"use one of {', '.join(SUPPORTED_API_VERSIONS)}")
        if config.interactive_mode not in INTERACTIVE_MODES:
            raise ConfigError(f"exec plugin: invalid interactiveMode {config.interactive_mode!r}")
        self._config = config
        self._clock = clock
        self._wall = wall
        self._lock = asyncio.Lock()
        self._cached: Credentials | None = None
        self._deadline: float | None = None
        self.runs = 0
        """How many times the plugin ran (for metrics and tests)."""

    def _fresh(self) -> Credentials | None:
        if self._cached is None:
            return None
        if self._deadline is not None and self._clock.now() >= self._deadline:
            return None
        return self._cached

    async def credentials(self) -> Credentials:
        cached = self._fresh()
        if cached is not None:
            return cached
        async with self._lock:
            cached = self._fresh()
            if cached is None:
                cached = await self._run()
            return cached

    async def refresh(self, rejected: Credentials) -> bool:
        async with self._lock:
            if self._cached is not None and self._cached != rejected:
                return True
            self._cached = None
            fresh = await self._run()
            return fresh != rejected

    async def _run(self) -> Credentials:
        config = self._config
        if config.interactive_mode == "Always":
            raise ExecPluginError(
                f"exec plugin {config.command!r} requires an interactive terminal (interactiveMode "
                "Always), and this client never gives plugins a standard input"
            )
        env = dict(os.environ)
        env.update(config.env)
        env["KUBERNETES_EXEC_INFO"] = orjson.dumps(exec_info(config)).decode()
        self.runs += 1
        try:
            process = await asyncio.create_subprocess_exec(
                config.command, *config.args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
        except OSError as exc:
            hint = f"\n\n{config.install_hint}" if config.install_hint else ""
            raise ExecPluginError(f"exec plugin: cannot run {config.command!r}: {exc}{hint}") from exc
        stdout, stderr = await process.communicate()
        if process.returncode != 0:
            text = stderr.decode("utf-8", "replace").strip()
            raise ExecPluginError(
                f"exec plugin {config.command!r} exited with status {process.returncode}: {text}"
            )
        credentials, expiry = parse_exec_output(config, stdout)
        self._cached = credentials
        if expiry is None:
            self._deadline = None
        else:
            self._deadline = self._clock.now() + (expiry - self._wall()).total_seconds()
        return credentials
