"""Wiring of the ClusterRole aggregation controller.

Any change to any ClusterRole enqueues every ClusterRole with an ``aggregationRule`` (as
upstream's ``enqueue``), read from the shared informer's cache. A sync computes the role's rules
with :func:`~.aggregate.aggregated_rules` and, when they differ, writes them with server-side
apply as field manager ``clusterrole-aggregation-controller``, forcing conflicts (upstream's
``applyClusterRoles``).
"""

from __future__ import annotations

import logging
from typing import Any

from kubeloop.client import ApiClient, find_builtin, is_not_found
from kubeloop.controllers.clusterroleaggregation.aggregate import aggregated_rules, needs_update, selectors_of
from kubeloop.runtime.controller import Result
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import SharedIndexInformer
from kubeloop.runtime.manager import Manager

log = logging.getLogger(__name__)

NAME = "clusterroleaggregation"
FIELD_MANAGER = "clusterrole-aggregation-controller"
CLUSTER_ROLES = find_builtin("clusterroles.rbac.authorization.k8s.io")
Obj = dict[str, Any]


def every_aggregated_role(roles: SharedIndexInformer) -> Any:
    """ClusterRole event -> every cached ClusterRole with an aggregation rule."""

    def mapper(_: Obj) -> list[Request]:
        return [Request("", str(role["metadata"]["name"])) for role in roles.indexer.list()
                if selectors_of(role) is not None]

    return mapper


class ClusterRoleAggregationController:
    def __init__(self, client: ApiClient, roles: SharedIndexInformer) -> None:
        self.client = client
        self.roles = roles

    async def reconcile(self, request: Request) -> Result | None:
        assert CLUSTER_ROLES is not None
        role = self.roles.indexer.get_by_name("", request.name)
        if role is None:
            return None
        rules = aggregated_rules(role, self.roles.indexer.list())
        if rules is None or not needs_update(role, rules):
            return None
        body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": request.name}, "rules": rules}
        try:
            await self.client.patch(CLUSTER_ROLES, request.name, body, patch_type="apply",
                                    field_manager=FIELD_MANAGER, force=True)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise
        return None


async def add_clusterrole_aggregation_controller(manager: Manager) -> ClusterRoleAggregationController:
    """Build the aggregation controller on ``manager``'s shared ClusterRole informer."""
    assert CLUSTER_ROLES is not None, "clusterroles are a built-in resource"
    roles = await manager.factory.informer_for(CLUSTER_ROLES)
    controller = ClusterRoleAggregationController(manager.client, roles)
    await manager.controller(NAME).watches(CLUSTER_ROLES, every_aggregated_role(roles)).complete(controller.reconcile)
    return controller
