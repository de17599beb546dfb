"""Who a request is from: upstream's ``user.Info`` (k8s.io/apiserver pkg/authentication/user)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated (or anonymous) user: name, uid, groups and extra attributes."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)

    @property
    def privileged(self) -> bool:
        """In ``system:masters``: allowed everything, without asking the authorizer."""
        return MASTERS in self.groups

    def as_review(self) -> dict[str, Any]:
        """The ``UserInfo`` of authentication.k8s.io (TokenReview, SelfSubjectReview), and of
        an AdmissionReview: empty fields left out, as upstream's ``omitempty``."""
        out: dict[str, Any] = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, (UNAUTHENTICATED,))
ADMIN_USER = UserInfo("kubernetes-admin", (MASTERS, AUTHENTICATED))
"""Who the kubeconfig written to the data directory authenticates as."""


USER_KEY = web.RequestKey("user", UserInfo)
"""Where the server's middleware leaves each request's :class:`UserInfo`."""


def request_user(request: web.Request) -> UserInfo:
    """Who sent ``request`` (set by the middleware before any handler runs)."""
    user = request.get(USER_KEY)
    return user if isinstance(user, UserInfo) else ANONYMOUS_USER


CURRENT_USER: ContextVar[UserInfo | None] = ContextVar("kubeloop_current_user", default=None)
"""The user of the request being served, for code below the handlers (admission webhooks' and
RBAC escalation checks' ``userInfo``) that is not handed the request. None outside a request
(the server's own writes: bootstrap, the namespace finalizer)."""
