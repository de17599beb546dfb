"""Role-based access control: kube-apiserver's ``--authorization-mode RBAC``.

* :mod:`.rules`: pure matching of one PolicyRule against a request, and the coverage checks of
  escalation prevention (``plugin/pkg/auth/authorizer/rbac/rbac.go``,
  ``pkg/apis/rbac/v1/evaluation_helpers.go``, ``pkg/registry/rbac/validation/policy_comparator.go``);
* :mod:`.resolver`: which rules apply to a user in a namespace, from the stored Roles,
  ClusterRoles and bindings (``pkg/registry/rbac/validation/rule.go``), indexed by subject and
  cached per user until any of the four kinds changes; :class:`~.resolver.RBACAuthorizer`;
* :mod:`.reviews`: the ``*AccessReview`` and ``SelfSubjectRulesReview`` answers;
* :mod:`.escalation`: the RBAC registry's escalation checks on Role/ClusterRole/binding writes;
* :mod:`.bootstrap`: the default policy created and reconciled at server start.
"""
