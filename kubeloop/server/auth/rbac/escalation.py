"""Escalation prevention on writes of Roles, ClusterRoles and their bindings.

As the RBAC registry's policy-based storage (``pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}/policybased/storage.go`` and ``pkg/registry/rbac/escalation_check.go``):

* the server's own writes and ``system:masters`` are never checked (``EscalationAllowed``);
* a Role or ClusterRole may be written by a user allowed the ``escalate`` verb on it
  (``RoleEscalationAuthorized``), or who holds every permission it grants
  (``ConfirmNoEscalation``); setting or changing a ClusterRole's ``aggregationRule`` needs all
  of them (``*`` on everything): ``must have cluster-admin privileges to use the aggregationRule``;
* a binding may be written by a user allowed ``bind`` on the role it refers to
  (``BindingAuthorized``), or who holds every permission of that role; a missing role is 404
  ``clusterroles.rbac.authorization.k8s.io "x" not found`` (the registry's wording);
* an update that only changes owner references, finalizers or managed fields is not checked
  (``IsOnlyMutatingGCFields``).

A refusal is 403 ``<resource>.rbac.authorization.k8s.io "<name>" is forbidden: user "u"
(groups=["g"]) is attempting to grant RBAC permissions not currently held:`` followed by the
missing rules, compacted and sorted, one per line (``CompactString``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import ApiError, forbidden_error, go_quote, not_found_error
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.rbac.resolver import GROUP, RBACAuthorizer, RuleResolver, aggregate
from kubeloop.server.auth.rbac.rules import FULL_RULES, Rule, compact, compact_string, missing_rules, rules_of
from kubeloop.server.auth.user import CURRENT_USER, UserInfo
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.state import ServerState

_ROLE_RESOURCES = frozenset({"roles", "clusterroles"})
_BINDING_RESOURCES = frozenset({"rolebindings", "clusterrolebindings"})
_GC_FIELDS = ("ownerReferences", "finalizers", "managedFields", "resourceVersion")


def _go_list(values: tuple[str, ...]) -> str:
    return "[" + " ".join(go_quote(value) for value in values) + "]"


def escalation_error(user: UserInfo, missing: list[Rule], resolution_errors: list[str]) -> str:
    """``ConfirmNoEscalation``'s message (empty when nothing is missing)."""
    if not missing:
        return ""
    lines = sorted({compact_string(rule) for rule in compact(missing)})
    text = (f"user {go_quote(user.username)} (groups={_go_list(user.groups)}) is attempting to grant RBAC "
            "permissions not currently held:\n" + "\n".join(lines))
    if resolution_errors:
        text += f"; resolution errors: [{aggregate(resolution_errors)}]"
    return text


def only_gc_fields_changed(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    def stripped(obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**obj, "metadata": meta}

    return stripped(new) == stripped(old)


def _resolver(state: ServerState) -> RuleResolver:
    authorizer = state.authorizer
    return authorizer.resolver if isinstance(authorizer, RBACAuthorizer) else RuleResolver(state.storage)


def _allowed(state: ServerState, user: UserInfo, verb: str, resource: str, namespace: str, name: str) -> bool:
    attributes = RequestAttributes(True, verb, "", GROUP, "*", namespace, resource, "", name)
    return state.authorizer.authorize(user, attributes).allowed


def _confirm(state: ServerState, user: UserInfo, info: ResourceInfo, name: str, namespace: str,
             rules: tuple[Rule, ...]) -> None:
    owned, errors = _resolver(state).rules_for(user, namespace, plural=True)
    message = escalation_error(user, missing_rules(owned, rules), errors)
    if message:
        raise forbidden_error(info.resource, GROUP, name, message)


def check_rbac_write(state: ServerState, info: ResourceInfo, new: Mapping[str, Any],
                     old: Mapping[str, Any] | None) -> None:
    """Refuse (403/404) a create (``old`` None) or update the requesting user may not make."""
    if info.group != GROUP or (info.resource not in _ROLE_RESOURCES and info.resource not in _BINDING_RESOURCES):
        return
    user = CURRENT_USER.get()
    if user is None or user.privileged:
        return
    if old is not None and only_gc_fields_changed(new, old):
        return
    meta = new.get("metadata") or {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    if info.resource in _ROLE_RESOURCES:
        # The request's name: none on a create (a POST names no object in its path).
        if _allowed(state, user, "escalate", info.resource, namespace, "" if old is None else name):
            return
        _confirm(state, user, info, name, namespace, rules_of(new))
        aggregation = new.get("aggregationRule")
        if aggregation is not None and (old is None or aggregation != old.get("aggregationRule")):
            owned, _ = _resolver(state).rules_for(user, namespace, plural=True)
            if missing_rules(owned, FULL_RULES):
                raise forbidden_error(info.resource, GROUP, name,
                                      "must have cluster-admin privileges to use the aggregationRule")
        return
    ref = new.get("roleRef") or {}
    kind, role = str(ref.get("kind") or ""), str(ref.get("name") or "")
    resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(kind)
    if resource is None:
        raise ApiError(500, "InternalError",
                       f"Internal error occurred: unsupported role reference kind: {go_quote(kind)}")
    if _allowed(state, user, "bind", resource, namespace, role):
        return
    rules = _resolver(state).role_rules(kind, role, namespace)
    if rules is None:
        raise not_found_error(resource, GROUP, role)
    _confirm(state, user, info, name, namespace, rules)
