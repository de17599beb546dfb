"""Client settings: where the server is, how to trust it, how to authenticate, how fast to go.

A :class:`ClientConfig` is plain data; the loaders in :mod:`kubeloop.client._kubeconfig`
fill it from a kubeconfig or from the in-cluster service account, and tests or embedding
code build one directly. Nothing here does I/O.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field
from typing import Any

from kubeloop._version import __version__


def default_user_agent() -> str:
    """``kubeloop/<version> (<os>/<arch>) python/<x.y>``, the shape kubectl's agent has."""
    system = platform.system().lower() or "unknown"
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return f"kubeloop/{__version__} ({system}/{machine}) python/{sys.version_info[0]}.{sys.version_info[1]}"


@dataclass
class ExecConfig:
    """An exec credential plugin (kubeconfig ``users[].user.exec``).

    The plugin is run with ``args`` and the extra ``env`` on top of this process's
    environment, plus ``KUBERNETES_EXEC_INFO`` describing the request; it prints an
    ``ExecCredential`` whose ``status`` carries a token and/or a client certificate.
    """

    command: str
    """Program to run; a relative path with a separator was already resolved by the loader."""
    api_version: str
    """``client.authentication.k8s.io/v1`` or ``client.authentication.k8s.io/v1beta1``."""
    args: list[str] = field(default_factory=list)
    """Arguments passed to the plugin."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables for the plugin (override the inherited ones)."""
    interactive_mode: str = "IfAvailable"
    """``Never``, ``IfAvailable`` or ``Always``. We never give the plugin a terminal, so
    ``Always`` is refused and the other two run it non-interactively."""
    install_hint: str = ""
    """Printed with the error when the command cannot be found."""
    provide_cluster_info: bool = False
    """Pass the cluster's server, CA and the ``client.authentication.k8s.io/exec`` extension
    in ``KUBERNETES_EXEC_INFO.spec.cluster``."""
    cluster_info: dict[str, Any] | None = None
    """What ``provide_cluster_info`` sends; filled by the kubeconfig loader."""


@dataclass
class ClientConfig:
    """Everything :class:`kubeloop.client.ApiClient` needs to talk to one API server.

    Data fields (``*_data``) win over the matching file fields, as in kubeconfig. Tokens:
    ``token_file`` wins over ``token`` and is re-read every ``token_file_period`` seconds so
    rotated service-account tokens are picked up; ``exec`` wins over both.
    """

    server: str
    """Base URL, e.g. ``https://10.0.0.1:6443``; may carry a path prefix."""
    namespace: str = "default"
    """Namespace used by single-object calls when none is given and the object has none."""
    ca_data: bytes | None = None
    """PEM bundle of CAs trusted for the server's certificate."""
    ca_file: str | None = None
    """Path of a PEM CA bundle (used when ``ca_data`` is unset)."""
    client_cert_data: bytes | None = None
    """PEM client certificate for mutual TLS."""
    client_cert_file: str | None = None
    """Path of the PEM client certificate."""
    client_key_data: bytes | None = None
    """PEM private key of the client certificate."""
    client_key_file: str | None = None
    """Path of the PEM private key."""
    token: str | None = None
    """Static bearer token."""
    token_file: str | None = None
    """File holding the bearer token, re-read periodically (service-account rotation)."""
    token_file_period: float = 60.0
    """Seconds between re-reads of ``token_file``; client-go uses one minute."""
    username: str | None = None
    """HTTP basic auth user (kubeconfig ``username``), used when no token is set."""
    password: str | None = None
    """HTTP basic auth password."""
    exec: ExecConfig | None = None
    """Exec credential plugin; wins over static tokens."""
    insecure_skip_tls_verify: bool = False
    """Do not verify the server's certificate (test clusters only)."""
    tls_server_name: str | None = None
    """Name to verify the server certificate against instead of the URL's host."""
    proxy_url: str | None = None
    """HTTP(S) proxy for every request (kubeconfig ``proxy-url``)."""
    proxy_from_environment: bool = True
    """Without ``proxy_url``, honour ``HTTPS_PROXY`` / ``NO_PROXY`` like Go's default transport."""
    qps: float = 50.0
    """Sustained client-side request rate (token bucket refill). 0 or negative disables
    limiting. client-go's default of 5 starves controllers that sync thousands of objects."""
    burst: int = 100
    """Bucket size: requests that may go out at once before ``qps`` applies."""
    max_retries: int = 10
    """How often a 429 / 5xx answer carrying ``Retry-After`` is retried (client-go: 10)."""
    connection_retries: int = 4
    """How often a connection failure is retried (any verb when the connection never opened,
    reads only otherwise), with exponential back-off from ``retry_backoff``."""
    retry_backoff: float = 0.2
    """First back-off after a connection failure, doubled each time up to ``retry_backoff_max``."""
    retry_backoff_max: float = 5.0
    """Cap of the connection-failure back-off."""
    connect_timeout: float = 10.0
    """Seconds to open a connection (TCP + TLS)."""
    request_timeout: float | None = 60.0
    """Total seconds for a non-streaming request; ``None`` waits forever."""
    watch_idle_timeout: float | None = None
    """Seconds a watch stream may stay silent before it fails; ``None`` disables (servers
    send a bookmark about every minute, so a reflector may set ~5 minutes)."""
    pool_limit: int = 100
    """Maximum open connections (bounded: an unbounded pool turns server-side max-inflight
    limits into 429 storms)."""
    user_agent: str = field(default_factory=default_user_agent)
    """``User-Agent`` header."""
