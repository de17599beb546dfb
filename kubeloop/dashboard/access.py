"""Who may read the dashboard: Host and Origin checks, and a token off loopback.

The page shows cluster data without a login, which is only safe while nothing but this
machine's own browser can reach it:

- **Host**: a dashboard bound to loopback answers only requests whose ``Host`` names loopback
  (``localhost``, ``127.0.0.1``, ``[::1]``, any port). A web page on another site can make the
  browser resolve its own name to 127.0.0.1 (DNS rebinding) and then read the page as
  same-origin; its requests still carry its own name in ``Host``, and get a 403.
- **Origin**: a request that carries ``Origin`` (cross-site fetches, ``EventSource``) must come
  from the page's own origin, ``http://`` + ``Host``; anything else is a 403.
- **Token**: a dashboard bound to any other address (``--host 0.0.0.0``) requires a token:
  ``Authorization: Bearer TOKEN``, or the session cookie that ``/?token=TOKEN`` sets (and then
  redirects to the bare URL, so the token leaves the address bar). The cookie holds an HMAC of
  the token, never the token itself; every comparison is constant-time.

:func:`access_middleware` applies all three; :func:`check` is the pure decision behind it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Middleware

COOKIE = "kubeloop-dashboard"
_SESSION_CONTEXT = b"kubeloop dashboard session v1"
_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or a ``Host`` name, without port) is this machine only."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name part of a ``Host`` header (``[::1]:8765`` -> ``::1``, ``a:1`` -> ``a``)."""
    header = header.strip()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def session_value(token: str) -> str:
    """The session cookie's value for ``token``: an HMAC of it, so the cookie never holds it."""
    return hmac.new(token.encode(), _SESSION_CONTEXT, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Policy:
    """What one dashboard requires: loopback ``Host`` names, or a token (``None``: none)."""

    loopback_only: bool
    token: str | None


@dataclass(frozen=True)
class Decision:
    """``allow``; else the status and text to refuse with; ``set_session`` asks for the cookie
    to be set and the request redirected to the same path without ``token``."""

    allow: bool
    status: int = 200
    reason: str = ""
    set_session: bool = False


def check(policy: Policy, headers: Mapping[str, str], cookies: Mapping[str, str],
          query: Mapping[str, str]) -> Decision:
    """Whether a request may be answered (see the module docstring for the rules)."""
    host = headers.get("Host", "")
    if policy.loopback_only and not is_loopback(host_name(host)):
        return Decision(False, 403, "the dashboard answers only to a loopback Host")
    origin = headers.get("Origin")
    if origin is not None and origin != f"http://{host}":
        return Decision(False, 403, "cross-origin requests are not allowed")
    token = policy.token
    if token is None:
        return Decision(True)
    authorization = headers.get("Authorization", "")
    if authorization.startswith("Bearer ") and hmac.compare_digest(authorization[7:].encode(), token.encode()):
        return Decision(True)
    if hmac.compare_digest(cookies.get(COOKIE, "").encode(), session_value(token).encode()):
        return Decision(True)
    offered = query.get("token")
    if offered is not None and hmac.compare_digest(offered.encode(), token.encode()):
        return Decision(True, set_session=True)
    return Decision(False, 401, "a token is required: open the URL kubeloop printed, with its ?token=")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def access_middleware(policy: Policy) -> Middleware:
    """An aiohttp middleware enforcing ``policy`` on every route."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        decision = check(policy, request.headers, request.cookies, request.query)
        if not decision.allow:
            return web.Response(status=decision.status, text=decision.reason + "\n")
        if decision.set_session:
            assert policy.token is not None
            location = request.rel_url.with_query({k: v for k, v in request.query.items() if k != "token"})
            response = web.Response(status=303, headers={"Location": str(location)})
            response.set_cookie(COOKIE, session_value(policy.token), httponly=True, samesite="Strict",
                                path="/")
            return response
        return await handler(request)

    return middleware
