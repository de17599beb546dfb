"""Whether a user may do what a request asks: upstream's ``authorizer.Authorizer``.

A :class:`Decision` is allowed or not, with the reason upstream appends to a 403's message
(empty when no rule allows the request, as RBAC's "no opinion"). ``system:masters`` never
reaches an authorizer (see :mod:`kubeloop.server.auth`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kubeloop.server.auth.attributes import PUBLIC_INFO_PATHS, RequestAttributes
from kubeloop.server.auth.user import UserInfo


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


ALLOW = Decision(True)
NO_OPINION = Decision(False)


class Authorizer(Protocol):
    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision: ...


class AlwaysAllow:
    """``--authorization-mode AlwaysAllow``: every request is allowed."""

    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        return ALLOW


class PublicInfoOnly:
    """Only the ``system:public-info-viewer`` paths, for everyone (no RBAC objects consulted)."""

    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        if not attributes.resource_request and attributes.path in PUBLIC_INFO_PATHS:
            return ALLOW
        return NO_OPINION
