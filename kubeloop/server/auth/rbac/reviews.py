"""The answers of the authorization reviews: ``*SubjectAccessReview`` and ``SelfSubjectRulesReview``.

As ``pkg/registry/authorization/{subjectaccessreview,localsubjectaccessreview,
selfsubjectaccessreview,selfsubjectrulesreview}/rest.go``: the spec is validated
(``pkg/apis/authorization/validation``), turned into request attributes
(``authorizationutil.AuthorizationAttributesFrom``: the spec's user for SubjectAccessReviews,
the requesting user for the self reviews) and given to the server's authorizer chain:
``system:masters`` first (allowed, no reason), then the configured authorizer, whose reason
becomes ``status.reason`` (``RBAC: allowed by ...``).

A rules review lists what the chain's ``RulesFor`` lists: ``system:masters`` holds ``*`` on
everything, ``AlwaysAllow`` the same for everyone, RBAC the rules of every binding that applies
(its resolution errors in ``evaluationError``); ``incomplete`` is false for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import bad_request_error, go_quote, invalid, invalid_error
from kubeloop.server.admission.fields import Errors, GoLiteral
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import AlwaysAllow, Authorizer, Decision
from kubeloop.server.auth.rbac.resolver import RBACAuthorizer, aggregate
from kubeloop.server.auth.rbac.rules import FULL_RULES, Rule
from kubeloop.server.auth.user import UserInfo

GROUP = "authorization.k8s.io"
SELF_REVIEWS = frozenset({"SelfSubjectAccessReview"})
Obj = dict[str, Any]


def decide(authorizer: Authorizer, user: UserInfo, attributes: RequestAttributes) -> Decision:
    """The server's chain: ``system:masters`` is allowed (no reason), then ``authorizer``."""
    if user.privileged:
        return Decision(True)
    return authorizer.authorize(user, attributes)


def _go_non_resource(value: Any) -> GoLiteral | str:
    """The attributes as a field error prints them: a nil pointer as the string "null", a set
    one as Go's ``%#v`` of the struct it points to."""
    if not isinstance(value, Mapping):
        return "null"
    return GoLiteral(f"authorization.NonResourceAttributes{{Path:{go_quote(str(value.get('path') or ''))}, "
                     f"Verb:{go_quote(str(value.get('verb') or ''))}}}")


def validate_spec(kind: str, spec: Mapping[str, Any]) -> Errors:
    """``Validate{,Self}SubjectAccessReviewSpec``."""
    errs: Errors = []
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        errs.append(invalid("spec.nonResourceAttributes", _go_non_resource(non_resource),
                            "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        errs.append(invalid("spec.resourceAttributes", _go_non_resource(non_resource),
                            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    if kind not in SELF_REVIEWS and not spec.get("user") and not spec.get("groups"):
        errs.append(invalid("spec.user", str(spec.get("user") or ""),
                            "at least one of user or group must be specified"))
    if kind == "LocalSubjectAccessReview" and non_resource is not None:
        errs.append(invalid("spec.nonResourceAttributes", _go_non_resource(non_resource),
                            "disallowed on this kind of request"))
    return errs


def _spec_user(spec: Mapping[str, Any]) -> UserInfo:
    extra = spec.get("extra") if isinstance(spec.get("extra"), Mapping) else {}
    assert isinstance(extra, Mapping)
    return UserInfo(str(spec.get("user") or ""), tuple(str(g) for g in spec.get("groups") or []),
                    str(spec.get("uid") or ""), {str(k): [str(v) for v in vs or []] for k, vs in extra.items()})


def review_attributes(spec: Mapping[str, Any]) -> RequestAttributes:
    """``AuthorizationAttributesFrom``: the attributes a review's spec asks about."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, Mapping):
        def text(key: str) -> str:
            return str(resource.get(key) or "")

        return RequestAttributes(True, text("verb"), "", text("group"), text("version"), text("namespace"),
                                 text("resource"), text("subresource"), text("name"))
    non_resource = spec.get("nonResourceAttributes")
    non_resource = non_resource if isinstance(non_resource, Mapping) else {}
    return RequestAttributes(False, str(non_resource.get("verb") or ""), str(non_resource.get("path") or ""))


def access_review_status(authorizer: Authorizer, kind: str, spec: Mapping[str, Any], requester: UserInfo) -> Obj:
    """The ``status`` of a SubjectAccessReview, LocalSubjectAccessReview or SelfSubjectAccessReview."""
    errs = validate_spec(kind, spec)
    if errs:
        raise invalid_error(kind, GROUP, "", errs)
    user = requester if kind in SELF_REVIEWS else _spec_user(spec)
    decision = decide(authorizer, user, review_attributes(spec))
    status: Obj = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _split(rules: list[Rule]) -> tuple[list[Obj], list[Obj]]:
    resource = [{k: v for k, v in r.as_json().items() if k != "nonResourceURLs"} for r in rules if r.resources]
    non_resource = [{"verbs": list(r.verbs), "nonResourceURLs": list(r.non_resource_urls)}
                    for r in rules if r.non_resource_urls]
    return resource, non_resource


def rules_review_status(authorizer: Authorizer, spec: Mapping[str, Any], user: UserInfo) -> Obj:
    """The ``status`` of a SelfSubjectRulesReview of ``spec.namespace`` for ``user``."""
    namespace = str(spec.get("namespace") or "")
    if not namespace:
        raise bad_request_error("no namespace on request")
    rules: list[Rule] = list(FULL_RULES) if user.privileged else []
    errors: list[str] = []
    if isinstance(authorizer, AlwaysAllow):
        rules.extend(FULL_RULES)
    elif isinstance(authorizer, RBACAuthorizer):
        owned, errors = authorizer.resolver.rules_for(user, namespace)
        rules.extend(owned)
    resource, non_resource = _split(rules)
    status: Obj = {"resourceRules": resource, "nonResourceRules": non_resource, "incomplete": False}
    if errors:
        status["evaluationError"] = aggregate(errors)
    return status
