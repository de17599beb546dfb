"""Impersonation headers: what is asked, what must be allowed, who the request becomes."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from kubeloop.api.status import ApiError
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.impersonation import checks, impersonate, impersonated, requested
from kubeloop.server.auth.user import ADMIN_USER, UserInfo

ALICE = UserInfo("alice", ("devs", "system:authenticated"))


def headers(*pairs: tuple[str, str]) -> CIMultiDict[str]:
    return CIMultiDict(pairs)


def test_no_headers_no_impersonation() -> None:
    assert requested(headers(("Authorization", "Bearer x"))) is None


@pytest.mark.parametrize(("pairs", "user"), [
    ((("X-Impersonate-User", "bob"), ("Accept", "*/*")), None),
    ((("Accept", "*/*"), ("Xi", "mpersonate-User: bob")), None),
    ((("Accept", "*/*"), ("impersonate-user", "bob")), "bob"),
    ((("Accept", "*/*"), ("Host", "h"), ("IMPERSONATE-USER", "carol")), "carol"),
])
def test_only_names_starting_with_impersonate_ask(pairs: tuple[tuple[str, str], ...], user: str | None) -> None:
    asked = requested(headers(*pairs))
    assert (asked.user if asked is not None else None) == user


def test_groups_without_a_user_are_a_bad_request() -> None:
    with pytest.raises(ApiError) as raised:
        requested(headers(("Impersonate-Group", "devs")))
    assert (raised.value.code, raised.value.message) == (
        400, "requested [Impersonate-Group=devs] without impersonating a user")


def test_every_asked_thing_is_checked_in_order() -> None:
    asked = requested(headers(("Impersonate-User", "system:serviceaccount:ns:app"), ("Impersonate-Group", "a"),
                              ("Impersonate-Group", "b"), ("Impersonate-Extra-Scopes%2Fx", "s1"),
                              ("Impersonate-Uid", "u-1")))
    assert asked is not None
    assert [(c.resource, c.subresource, c.namespace, c.name, c.group) for c in checks(asked)] == [
        ("serviceaccounts", "", "ns", "app", ""), ("groups", "", "", "a", ""), ("groups", "", "", "b", ""),
        ("userextras", "scopes/x", "", "s1", "authentication.k8s.io"), ("uids", "", "", "u-1", "authentication.k8s.io")]
    assert all(c.verb == "impersonate" for c in checks(asked))


@pytest.mark.parametrize(("pairs", "groups"), [
    ((("Impersonate-User", "bob"),), ("system:authenticated",)),
    ((("Impersonate-User", "bob"), ("Impersonate-Group", "devs")), ("devs", "system:authenticated")),
    ((("Impersonate-User", "bob"), ("Impersonate-Group", "system:unauthenticated")), ("system:unauthenticated",)),
    ((("Impersonate-User", "system:serviceaccount:ns:app"),),
     ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")),
    ((("Impersonate-User", "system:anonymous"),), ("system:unauthenticated",)),
])
def test_the_impersonated_users_groups(pairs: tuple[tuple[str, str], ...], groups: tuple[str, ...]) -> None:
    asked = requested(headers(*pairs))
    assert asked is not None and impersonated(asked).groups == groups


def test_a_refusal_is_upstreams_403_and_masters_are_not_asked() -> None:
    asked = requested(headers(("Impersonate-User", "bob")))
    assert asked is not None

    def nobody(user: UserInfo, attributes: RequestAttributes) -> tuple[bool, str]:
        return False, ""

    with pytest.raises(ApiError) as raised:
        impersonate(ALICE, asked, nobody)
    assert (raised.value.code, raised.value.message) == (
        403, 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the '
             "cluster scope")
    assert impersonate(ADMIN_USER, asked, nobody).username == "bob"
