"""Which rules apply to a user, from the stored RBAC objects, and the RBAC authorizer.

As upstream's ``DefaultRuleResolver.VisitRulesFor`` (``pkg/registry/rbac/validation/rule.go``):
first every ClusterRoleBinding with a subject that is the user, then (for a namespaced request)
every RoleBinding of the namespace; each contributes the rules of the role it refers to, or an
error when that role does not exist. A subject applies as ``appliesToUser``: a User by name, a
Group by membership, a ServiceAccount when the user is ``system:serviceaccount:<ns>:<name>``
(a RoleBinding's ServiceAccount subject without a namespace is one of the binding's namespace).

:class:`RBACAuthorizer` is upstream's ``RBACAuthorizer.Authorize``: allowed by the first rule
that allows the request, with reason ``RBAC: allowed by ClusterRoleBinding "b" of ClusterRole
"r" to User "u"``; otherwise no opinion, with reason ``RBAC: <errors>`` when some binding's role
is missing (``clusterrole.rbac.authorization.k8s.io "x" not found``, the informer listers'
wording) and no reason when simply no rule allows.

Speed: the authorizer runs on every request of a user outside ``system:masters``. Bindings are
indexed by subject once per change of the RBAC kinds, and each user's applicable rules (per
namespace) are cached; watchers on the four kinds (the store's own watch machinery) tell when
any of them changed, which drops the index and every cached answer. See docs/decisions.md for
the measured cost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeloop.api.status import go_quote
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import Decision
from kubeloop.server.auth.rbac.rules import Rule, rule_allows, rules_of
from kubeloop.server.auth.user import UserInfo
from kubeloop.server.storage import ResourceType, Storage, Watcher

GROUP = "rbac.authorization.k8s.io"
ROLES = ResourceType(GROUP, "roles")
CLUSTER_ROLES = ResourceType(GROUP, "clusterroles")
ROLE_BINDINGS = ResourceType(GROUP, "rolebindings")
CLUSTER_ROLE_BINDINGS = ResourceType(GROUP, "clusterrolebindings")
RBAC_TYPES = (ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS)
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_CACHE_LIMIT = 4096

Obj = Mapping[str, Any]
SubjectKey = tuple[str, str, str]
"""(kind, namespace, name); namespace is empty for users and groups."""


@dataclass(frozen=True)
class Grant:
    """What one binding gives a user: its role's rules, or why it gives nothing."""

    source: str
    """``ClusterRoleBinding "b" of ClusterRole "r" to User "u"`` (upstream's describers)."""
    rules: tuple[Rule, ...] = ()
    missing: tuple[str, str] = ("", "")
    """(kind, name) of the role the binding refers to when it does not exist."""
    allowed: Decision = field(init=False, repr=False, compare=False)
    """The decision of a request one of its rules allows (worded once: grants are cached)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", Decision(True, f"RBAC: allowed by {self.source}"))

    def error(self, plural: bool = False) -> str:
        """The resolution error, worded as the listers (``clusterrole...``) or, with
        ``plural``, the registry (``clusterroles...``) word it; empty when none."""
        kind, name = self.missing
        if not kind:
            return ""
        if kind not in ("Role", "ClusterRole"):
            return f"unsupported role reference kind: {go_quote(kind)}"
        resource = kind.lower() + ("s" if plural else "")
        return f"{resource}.{GROUP} {go_quote(name)} not found"


def aggregate(errors: Sequence[str]) -> str:
    """Go's ``utilerrors.NewAggregate(errs).Error()``: one message as is, several deduplicated
    in brackets."""
    unique = list(dict.fromkeys(errors))
    if len(errors) == 1 or len(unique) == 1:
        return unique[0] if unique else ""
    return "[" + ", ".join(unique) + "]"


def subject_keys(user: UserInfo) -> list[SubjectKey]:
    """The subject index keys that name ``user``."""
    keys: list[SubjectKey] = [("User", "", user.username)]
    keys.extend(("Group", "", group) for group in user.groups)
    if user.username.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, found, name = user.username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        if found and namespace and name:
            keys.append(("ServiceAccount", namespace, name))
    return keys


def _subject_key(subject: Mapping[str, Any], binding_namespace: str) -> SubjectKey | None:
    kind, name = str(subject.get("kind") or ""), str(subject.get("name") or "")
    if kind in ("User", "Group"):
        return kind, "", name
    if kind == "ServiceAccount":
        namespace = str(subject.get("namespace") or "") or binding_namespace
        return (kind, namespace, name) if namespace else None
    return None


def describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = str(subject.get("kind") or ""), str(subject.get("name") or "")
    if kind == "ServiceAccount":
        return f"{kind} {go_quote(name + '/' + (str(subject.get('namespace') or '') or binding_namespace))}"
    return f"{kind} {go_quote(name)}"


def describe_binding(binding: Obj, subject: Mapping[str, Any]) -> str:
    meta = binding.get("metadata") or {}
    ref = binding.get("roleRef") or {}
    namespace = str(meta.get("namespace") or "")
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    name = str(meta.get("name") or "") + (f"/{namespace}" if namespace else "")
    return (f"{kind} {go_quote(name)} of {ref.get('kind') or ''} {go_quote(str(ref.get('name') or ''))} "
            f"to {describe_subject(subject, namespace)}")


class _Index:
    """Bindings by subject: ``{namespace ("" for cluster bindings): {key: [(position, subject index)]}}``."""

    def __init__(self, storage: Storage) -> None:
        self.bindings: dict[str, list[Obj]] = {}
        self.by_subject: dict[str, dict[SubjectKey, list[tuple[int, int]]]] = {}
        for rt in (CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS):
            items, _, _ = storage.list(rt, None)
            for binding in items:
                namespace = str((binding.get("metadata") or {}).get("namespace") or "")
                bindings = self.bindings.setdefault(namespace, [])
                index = self.by_subject.setdefault(namespace, {})
                position = len(bindings)
                bindings.append(binding)
                subjects = binding.get("subjects")
                for number, subject in enumerate(subjects if isinstance(subjects, list) else []):
                    key = _subject_key(subject, namespace) if isinstance(subject, Mapping) else None
                    if key is not None:
                        index.setdefault(key, []).append((position, number))

    def applicable(self, namespace: str, keys: Sequence[SubjectKey]) -> list[tuple[Obj, Mapping[str, Any]]]:
        """The bindings of ``namespace`` naming one of ``keys``, in store order, each with the
        first of its subjects that does (``appliesTo``)."""
        index = self.by_subject.get(namespace)
        if not index:
            return []
        first: dict[int, int] = {}
        for key in keys:
            for position, number in index.get(key, ()):
                if number < first.get(position, number + 1):
                    first[position] = number
        bindings = self.bindings[namespace]
        return [(bindings[p], bindings[p]["subjects"][first[p]]) for p in sorted(first)]


class RuleResolver:
    """The rules that apply to a user in a namespace, read from ``storage`` and cached."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._watchers: list[Watcher] = []
        self._index: _Index | None = None
        self._grants: dict[tuple[str, tuple[str, ...], str], tuple[Grant, ...]] = {}

    def _fresh(self) -> None:
        """Drop the index and the cache when any RBAC object changed since they were built."""
        changed = not self._watchers or any(w.closed for w in self._watchers)
        for watcher in self._watchers:
            if watcher.backlog:
                watcher.take_queued(watcher.backlog)
                changed = True
        if not changed:
            return
        self._index = None
        self._grants.clear()
        if not self._watchers or any(w.closed for w in self._watchers):
            for watcher in self._watchers:
                watcher.close()
            try:
                revision = self.storage.revision
                self._watchers = [self.storage.watch(rt, None, revision) for rt in RBAC_TYPES]
            except Exception:  # a closed store: answer from what it holds, uncached
                self._watchers = []

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[Rule, ...] | None:
        """The rules of the role a binding in ``namespace`` refers to; None when there is none."""
        if kind not in ("ClusterRole", "Role"):
            return None
        role = self.storage.get(CLUSTER_ROLES, "", name) if kind == "ClusterRole" else \
            self.storage.get(ROLES, namespace, name)
        return None if role is None else rules_of(role)

    def _grants_of(self, bindings: list[tuple[Obj, Mapping[str, Any]]]) -> tuple[Grant, ...]:
        out: list[Grant] = []
        for binding, subject in bindings:
            ref = binding.get("roleRef") or {}
            namespace = str((binding.get("metadata") or {}).get("namespace") or "")
            kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            rules = self.role_rules(kind, name, namespace)
            source = describe_binding(binding, subject)
            out.append(Grant(source, missing=(kind, name)) if rules is None else Grant(source, rules))
        return tuple(out)

    def grants(self, user: UserInfo, namespace: str) -> tuple[Grant, ...]:
        """What the cluster bindings (``namespace`` "") or the namespace's bindings give ``user``."""
        self._fresh()
        key = (user.username, user.groups, namespace)
        cached = self._grants.get(key)
        if cached is not None:
            return cached
        if self._index is None:
            self._index = _Index(self.storage)
        grants = self._grants_of(self._index.applicable(namespace, subject_keys(user)))
        if self._watchers:
            if len(self._grants) >= _CACHE_LIMIT:
                self._grants.clear()
            self._grants[key] = grants
        return grants

    def visit(self, user: UserInfo, namespace: str) -> Iterator[Grant]:
        """The user's grants in upstream's order: cluster bindings, then the namespace's."""
        yield from self.grants(user, "")
        if namespace:
            yield from self.grants(user, namespace)

    def rules_for(self, user: UserInfo, namespace: str, plural: bool = False) -> tuple[list[Rule], list[str]]:
        """Every rule that applies, and the resolution errors (``RulesFor``)."""
        rules: list[Rule] = []
        errors: list[str] = []
        for grant in self.visit(user, namespace):
            rules.extend(grant.rules)
            if grant.missing[0]:
                errors.append(grant.error(plural))
        return rules, errors


class RBACAuthorizer:
    """``--authorization-mode RBAC``."""

    def __init__(self, storage: Storage) -> None:
        self.resolver = RuleResolver(storage)

    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        errors: list[str] = []
        for grant in self.resolver.visit(user, attributes.namespace):
            for rule in grant.rules:
                if rule_allows(attributes, rule):
                    return grant.allowed
            if grant.missing[0]:
                errors.append(grant.error())
        return Decision(False, f"RBAC: {aggregate(errors)}" if errors else "")
