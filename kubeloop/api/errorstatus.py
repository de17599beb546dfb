"""Reading the ``Status`` an API error carries: its code, reason and causes.

Tolerant of every error shape the controllers meet: :class:`kubeloop.api.status.ApiError`
(and the client's subclasses) carry ``code``, ``reason`` and ``details``; the ``kubernetes``
package's ``ApiException`` carries ``status``; anything else reads as no code, no reason and
no causes. :func:`has_status_cause` is ``HasStatusCause`` of k8s.io/apimachinery/pkg/api/
errors (a cause's ``type`` is ``reason`` on the wire).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

NAMESPACE_TERMINATING_CAUSE: Final = "NamespaceTerminating"
"""``v1.NamespaceTerminatingCause``: a write refused because its namespace is being deleted."""


def status_code(exc: BaseException) -> int | None:
    """The HTTP code an API error carries (its ``code`` or ``status`` attribute), if any."""
    for attr in ("code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def status_reason(exc: BaseException) -> str:
    """The Status ``reason`` an API error carries (``""`` when none)."""
    value = getattr(exc, "reason", "")
    return value if isinstance(value, str) else ""


def has_status_cause(exc: BaseException, cause: str) -> bool:
    """The error's ``details.causes`` include one whose reason is ``cause``."""
    details = getattr(exc, "details", None)
    causes = details.get("causes") if isinstance(details, Mapping) else None
    for item in causes if isinstance(causes, list | tuple) else ():
        if isinstance(item, Mapping) and item.get("reason") == cause:
            return True
    return False


def is_namespace_terminating(exc: BaseException) -> bool:
    """The write was refused because its namespace is being deleted (nothing left to do)."""
    return has_status_cause(exc, NAMESPACE_TERMINATING_CAUSE)
