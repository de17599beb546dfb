"""Acting as another user: the ``Impersonate-*`` headers, as kube-apiserver's impersonation filter.

``kubectl --as bob --as-group devs`` (and any client's impersonation config) sends
``Impersonate-User``, ``Impersonate-Group`` (repeated), ``Impersonate-Uid`` and
``Impersonate-Extra-<key>`` headers. As upstream's ``WithImpersonation``
(k8s.io/apiserver pkg/endpoints/filters/impersonation.go), the requester must be allowed the
verb ``impersonate`` on each thing it asks to be:

* a user: ``users`` named the user (a ``system:serviceaccount:NS:NAME`` name is checked as
  ``serviceaccounts`` NAME in namespace NS instead);
* each group: ``groups`` named the group;
* the uid: ``uids`` in ``authentication.k8s.io``;
* each extra value: ``userextras/<key>`` in ``authentication.k8s.io``, named the value.

The first refusal is a 403 worded as any other (``users "bob" is forbidden: User "alice" cannot
impersonate resource "users" in API group "" at the cluster scope``). Groups or extras without
a user is a 400 (``requested [...] without impersonating a user``). Once allowed, the request
is served as the impersonated user: its groups, plus ``system:authenticated`` for a user other
than ``system:anonymous`` unless the groups name it or ``system:unauthenticated`` (a service
account impersonated without groups gets its own groups).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote

from kubeloop.api.status import bad_request_error
from kubeloop.server.auth.attributes import RequestAttributes, forbidden
from kubeloop.server.auth.user import ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, UserInfo

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "Impersonate-Extra-"
_SERVICE_ACCOUNT = "system:serviceaccount:"


class _Headers(Protocol):
    def getall(self, key: str, default: list[str]) -> list[str]: ...
    def __iter__(self) -> Iterator[str]: ...


@dataclass(frozen=True)
class Impersonation:
    """What a request asks to be."""

    user: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


def requested(headers: _Headers) -> Impersonation | None:
    """The impersonation ``headers`` ask for; None without any; 400 for groups, uid or extras
    without a user."""
    names = list(headers)
    # One scan of all the names at C speed (names hold no line breaks): most requests have none.
    if "\nimpersonate-" not in "\n" + "\n".join(names).lower():
        return None
    users = headers.getall(USER_HEADER, [])
    groups = tuple(headers.getall(GROUP_HEADER, []))
    uids = headers.getall(UID_HEADER, [])
    extra: dict[str, list[str]] = {}
    for name in names:
        if name.lower().startswith(EXTRA_PREFIX.lower()):
            key = unquote(name[len(EXTRA_PREFIX):]).lower()
            extra.setdefault(key, []).extend(headers.getall(name, []))
    if not users or not users[0]:
        asked = [f"{GROUP_HEADER}={g}" for g in groups] + [f"{UID_HEADER}={u}" for u in uids]
        asked += [f"{EXTRA_PREFIX}{k}={v}" for k, values in extra.items() for v in values]
        raise bad_request_error(f"requested [{' '.join(asked)}] without impersonating a user")
    return Impersonation(users[0], groups, uids[0] if uids else "",
                         tuple((key, tuple(values)) for key, values in extra.items()))


def checks(asked: Impersonation) -> list[RequestAttributes]:
    """The authorization checks ``asked`` needs, in upstream's order."""
    found: list[RequestAttributes] = []
    if asked.user.startswith(_SERVICE_ACCOUNT) and asked.user.count(":") == 3:
        namespace, name = asked.user[len(_SERVICE_ACCOUNT):].split(":", 1)
        found.append(RequestAttributes(True, "impersonate", "", "", "v1", namespace, "serviceaccounts", "", name))
    else:
        found.append(RequestAttributes(True, "impersonate", "", "", "v1", "", "users", "", asked.user))
    found += [RequestAttributes(True, "impersonate", "", "", "v1", "", "groups", "", group) for group in asked.groups]
    for key, values in asked.extra:
        found += [RequestAttributes(True, "impersonate", "", "authentication.k8s.io", "v1", "", "userextras", key,
                                    value) for value in values]
    if asked.uid:
        found.append(RequestAttributes(True, "impersonate", "", "authentication.k8s.io", "v1", "", "uids", "",
                                       asked.uid))
    return found


def impersonated(asked: Impersonation) -> UserInfo:
    """The user a request is served as once its impersonation is allowed."""
    groups = list(asked.groups)
    if not groups and asked.user.startswith(_SERVICE_ACCOUNT) and asked.user.count(":") == 3:
        namespace = asked.user[len(_SERVICE_ACCOUNT):].split(":", 1)[0]
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    if asked.user != ANONYMOUS and AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    elif asked.user == ANONYMOUS and UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(asked.user, tuple(groups), asked.uid, {key: list(values) for key, values in asked.extra})


def impersonate(requester: UserInfo, asked: Impersonation,
                allowed: Callable[[UserInfo, RequestAttributes], tuple[bool, str]]) -> UserInfo:
    """The user to serve the request as; 403 at the first check ``allowed`` refuses."""
    if not requester.privileged:
        for attributes in checks(asked):
            ok, reason = allowed(requester, attributes)
            if not ok:
                raise forbidden(requester.username, attributes, reason)
    return impersonated(asked)
