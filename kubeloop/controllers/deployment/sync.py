"""One Deployment sync: read the caches, execute the pure plans, write the results.

:meth:`DeploymentSync.sync` follows upstream's dispatch (``deployment_controller.go``
``syncDeployment``): an
empty selector only records the generation; the ReplicaSets are claimed; a Deployment being
deleted only gets its status written; pause conditions are recorded; a paused Deployment is
only scaled and cleaned up; a rollback request is carried out; a scaling event is spread
proportionally; otherwise the strategy's rollout runs (RollingUpdate or Recreate).

Every decision comes from the pure modules of this package; this module only reads caches
(never mutating what it reads: pure functions return copies), calls the API, records Events,
and keeps going with the objects the server answered with. API errors propagate to the
controller, which retries with back-off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kubeloop.api.errorstatus import is_namespace_terminating
from kubeloop.api.labels import Selector
from kubeloop.api.meta import deep_copy, is_being_deleted, labels_of, name_of, namespace_of, uid_of
from kubeloop.api.nested import section
from kubeloop.client import DEPLOYMENTS, REPLICA_SETS, is_already_exists, is_not_found
from kubeloop.controllers.deployment import events
from kubeloop.controllers.deployment.annotations import rollback_revision_requested
from kubeloop.controllers.deployment.new_replica_set import (
    after_hash_collision,
    after_replica_set_create_failed,
    after_replica_set_created,
    is_own_replica_set,
    next_revision,
    replica_set_to_create,
    sync_existing_new_replica_set,
)
from kubeloop.controllers.deployment.objects import (
    RECREATE,
    ROLLING_UPDATE,
    Obj,
    generation_of,
    is_paused,
    status_int,
    strategy_type,
)
from kubeloop.controllers.deployment.recreate import plan_recreate
from kubeloop.controllers.deployment.replicasets import active
from kubeloop.controllers.deployment.revisions import plan_rollback, replica_sets_to_delete
from kubeloop.controllers.deployment.rolling import reconcile_new_replica_set, reconcile_old_replica_sets
from kubeloop.controllers.deployment.scaling import ReplicaSetScale, is_scaling_event, plan_scale
from kubeloop.controllers.deployment.selection import deployment_selector, pods_by_replica_set_uid, selects_all_pods
from kubeloop.controllers.deployment.status import (
    PROGRESS_CHECK_SLACK,
    calculate_status,
    deployment_complete,
    paused_condition_status,
    rollout_status,
    status_equal,
    stuck_deployment_requeue,
)
from kubeloop.controllers.deployment.strategy import UnsupportedStrategyError
from kubeloop.controllers.deployment.templates import find_new_replica_set, find_old_replica_sets
from kubeloop.runtime.collaborators import CachedObjects, ObjectClient, Recorder
from kubeloop.runtime.controller import Result
from kubeloop.runtime.controllerref import controller_ref_manager

log = logging.getLogger(__name__)

DEPLOYMENT_API_VERSION = "apps/v1"
DEPLOYMENT_KIND = "Deployment"


class InvalidDeploymentError(ValueError):
    """The Deployment cannot be acted on as it is (malformed selector); retried with back-off."""


def _with_replaced(replica_sets: Sequence[Obj], updated: Mapping[str, Obj]) -> list[Obj]:
    return [updated.get(uid_of(rs), rs) for rs in replica_sets]


class DeploymentSync:
    """Runs syncs of Deployments against the caches of a Deployment controller."""

    def __init__(
        self,
        client: ObjectClient,
        deployments: CachedObjects,
        replica_sets: CachedObjects,
        pods: CachedObjects,
        recorder: Recorder,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.deployments = deployments
        self.replica_sets = replica_sets
        self.pods = pods
        self.recorder = recorder
        self.wall = wall

    # -- writing --------------------------------------------------------------------------
    def event(self, deployment: Mapping[str, Any], event: events.Event) -> None:
        self.recorder.event(deployment, event.type, event.reason, event.message, kind=DEPLOYMENT_KIND,
                            api_version=DEPLOYMENT_API_VERSION)

    async def write_status(self, deployment: Obj) -> Obj:
        written: Obj = await self.client.update_status(DEPLOYMENTS, deployment, namespace=namespace_of(deployment))
        return written

    async def apply_scales(self, deployment: Obj, operations: Sequence[ReplicaSetScale]) -> dict[str, Obj]:
        """Send the planned ReplicaSet updates in order (stopping at the first failure, which
        propagates); returns the updated ReplicaSets by UID."""
        updated: dict[str, Obj] = {}
        for operation in operations:
            written: Obj = await self.client.update(REPLICA_SETS, operation.updated,
                                                    namespace=namespace_of(operation.updated))
            updated[uid_of(written)] = written
            message = operation.event_message
            if message is not None:
                self.event(deployment, events.Event(events.NORMAL, events.SCALING_REPLICA_SET, message))
        return updated

    # -- dispatch -------------------------------------------------------------------------
    async def sync(self, cached: Mapping[str, Any]) -> Result | None:
        deployment: Obj = deep_copy(cached)
        if selects_all_pods(deployment):
            self.event(deployment, events.Event(events.WARNING, events.SELECTING_ALL, events.SELECTING_ALL_MESSAGE))
            if status_int(deployment, "observedGeneration") < generation_of(deployment):
                status = {**section(deployment, "status"), "observedGeneration": generation_of(deployment)}
                await self.write_status({**deployment, "status": status})
            return None
        selector = deployment_selector(deployment)
        if selector is None:
            raise InvalidDeploymentError(f'deployment "{name_of(deployment)}" has an invalid selector')
        replica_sets = await self.claim_replica_sets(deployment, selector)
        # Only a Recreate rollout reads the pods (it waits for the old ones to go): grouping
        # every pod of the namespace on each sync of a RollingUpdate Deployment was wasted work.
        pod_map: Mapping[str, Sequence[Mapping[str, Any]]] = {}
        if strategy_type(deployment) == RECREATE:
            namespace_pods = self.pods.indexer.by_namespace(namespace_of(deployment))
            pod_map = pods_by_replica_set_uid(deployment, replica_sets, namespace_pods)

        if is_being_deleted(deployment):
            deployment, new_rs, old = await self.replica_sets_with_synced_revision(deployment, replica_sets)
            return await self.sync_status(deployment, new_rs, old)
        paused_status = paused_condition_status(deployment, self.wall())
        if paused_status is not None:
            deployment = await self.write_status({**deployment, "status": paused_status})
        if is_paused(deployment):
            deployment, new_rs, old = await self.replica_sets_with_synced_revision(deployment, replica_sets)
            return await self.scale(deployment, new_rs, old)
        if rollback_revision_requested(deployment) is not None:
            return await self.rollback(deployment, replica_sets)
        deployment, new_rs, old = await self.replica_sets_with_synced_revision(deployment, replica_sets)
        if is_scaling_event(deployment, new_rs, old):
            return await self.scale(deployment, new_rs, old)
        kind = strategy_type(deployment)
        if kind == RECREATE:
            return await self.rollout_recreate(deployment, new_rs, old, pod_map)
        if kind == ROLLING_UPDATE:
            return await self.rollout_rolling(deployment, new_rs, old)
        raise UnsupportedStrategyError(f"unexpected deployment strategy type: {kind}")

    # -- ReplicaSets ----------------------------------------------------------------------
    async def claim_replica_sets(self, deployment: Obj, selector: Selector) -> list[Obj]:
        """Every ReplicaSet of the namespace this Deployment controls after adopting and releasing."""
        manager = controller_ref_manager(self.client, deployment, DEPLOYMENTS, REPLICA_SETS,
                                         lambda rs: selector.matches(labels_of(rs)))
        claimed: list[Obj] = await manager.claim(self.replica_sets.indexer.by_namespace(namespace_of(deployment)))
        return claimed

    async def replica_sets_with_synced_revision(
        self, deployment: Obj, replica_sets: Sequence[Obj]
    ) -> tuple[Obj, Obj | None, list[Obj]]:
        """``(deployment, new ReplicaSet or None, old ReplicaSets)``, the new one's revision,
        annotations and minReadySeconds brought in line (one write at most)."""
        _, old = find_old_replica_sets(deployment, replica_sets)
        existing = find_new_replica_set(deployment, replica_sets)
        if existing is None:
            return deployment, None, old
        plan = sync_existing_new_replica_set(deployment, existing, old, self.wall())
        if plan.replica_set_update is not None:
            written: Obj = await self.client.update(REPLICA_SETS, plan.replica_set_update,
                                                    namespace=namespace_of(deployment))
            return deployment, written, old
        if plan.deployment_status_update is not None:
            deployment = await self.write_status(plan.deployment_status_update)
        return deployment, plan.replica_set, old

    async def create_new_replica_set(self, deployment: Obj, old: Sequence[Obj]) -> tuple[Obj, Obj]:
        """Create the new ReplicaSet for the current template; returns ``(deployment, ReplicaSet)``.

        A name taken by a ReplicaSet that is not ours (or has another template) is a hash
        collision: ``status.collisionCount`` goes up and the AlreadyExists error propagates, so
        the next attempt uses another name.
        """
        now = self.wall()
        namespace = namespace_of(deployment)
        wanted = replica_set_to_create(deployment, old)
        already_existed = False
        try:
            created: Obj = await self.client.create(REPLICA_SETS, wanted, namespace=namespace)
        except Exception as exc:
            if is_already_exists(exc):
                existing: Obj = await self.client.get(REPLICA_SETS, name_of(wanted), namespace=namespace)
                if not is_own_replica_set(deployment, existing):
                    await self.write_status(after_hash_collision(deployment))
                    log.info("deployment %s/%s: hash collision on %s", namespace, name_of(deployment),
                             name_of(wanted))
                    raise
                created, already_existed = existing, True
            elif is_namespace_terminating(exc):
                raise
            else:
                failed = after_replica_set_create_failed(deployment, name_of(wanted), str(exc), now)
                self.event(deployment, failed.event)
                if failed.deployment_status_update is not None:
                    try:
                        await self.write_status(failed.deployment_status_update)
                    except Exception as status_error:
                        log.debug("status update after a failed creation failed: %s", status_error)
                raise
        outcome = after_replica_set_created(deployment, created, next_revision(old), already_existed, now)
        for event in outcome.events:
            self.event(deployment, event)
        if outcome.deployment_status_update is not None:
            deployment = await self.write_status(outcome.deployment_status_update)
        return deployment, created

    async def cleanup(self, deployment: Obj, old: Sequence[Obj]) -> None:
        """Delete old ReplicaSets beyond ``revisionHistoryLimit`` (those already at 0)."""
        for replica_set in replica_sets_to_delete(deployment, old):
            try:
                await self.client.delete(REPLICA_SETS, name_of(replica_set), namespace=namespace_of(replica_set))
            except Exception as exc:
                if not is_not_found(exc):
                    raise

    # -- status ---------------------------------------------------------------------------
    async def sync_status(self, deployment: Obj, new_rs: Obj | None, old: Sequence[Obj]) -> Result | None:
        """Write the plain status (no progress estimation) if it changed."""
        status = calculate_status([*old, new_rs], new_rs, deployment, self.wall())
        if not status_equal(section(deployment, "status"), status):
            await self.write_status({**deployment, "status": status})
        return None

    async def sync_rollout_status(self, deployment: Obj, new_rs: Obj | None, old: Sequence[Obj]) -> Result | None:
        """Write the rollout status; an unchanged, unfinished rollout is checked again at its deadline."""
        now = self.wall()
        status = rollout_status([*old, new_rs], new_rs, deployment, now)
        if not status_equal(section(deployment, "status"), status):
            await self.write_status({**deployment, "status": status})
            return None
        after = stuck_deployment_requeue(deployment, status, now)
        if after is None:
            return None
        if not after:
            return Result(requeue=True)
        return Result(requeue_after=(after + PROGRESS_CHECK_SLACK).total_seconds())

    # -- flows ----------------------------------------------------------------------------
    async def scale(self, deployment: Obj, new_rs: Obj | None, old: list[Obj]) -> Result | None:
        """A scaling event or a paused Deployment: proportional scaling, clean-up when paused, status."""
        updated = await self.apply_scales(deployment, plan_scale(deployment, new_rs, old))
        if is_paused(deployment) and rollback_revision_requested(deployment) is None:
            await self.cleanup(deployment, old)
        old = _with_replaced(old, updated)
        if new_rs is not None:
            new_rs = updated.get(uid_of(new_rs), new_rs)
        return await self.sync_status(deployment, new_rs, old)

    async def rollback(self, deployment: Obj, replica_sets: Sequence[Obj]) -> Result | None:
        """Carry out a ``deprecated.deployment.rollback.to`` request (the annotation always goes)."""
        deployment, new_rs, old = await self.replica_sets_with_synced_revision(deployment, replica_sets)
        if new_rs is None:
            deployment, new_rs = await self.create_new_replica_set(deployment, old)
        plan = plan_rollback(deployment, [*old, new_rs])
        if plan is None:
            return None
        if plan.event.type == events.WARNING:
            self.event(deployment, plan.event)
        await self.client.update(DEPLOYMENTS, plan.deployment, namespace=namespace_of(deployment))
        if plan.rolled_back:
            self.event(deployment, plan.event)
        return None

    async def rollout_rolling(self, deployment: Obj, new_rs: Obj | None, old: list[Obj]) -> Result | None:
        if new_rs is None:
            deployment, new_rs = await self.create_new_replica_set(deployment, old)
        new_scale = reconcile_new_replica_set(deployment, [*old, new_rs], new_rs)
        if new_scale is not None:
            updated = await self.apply_scales(deployment, [new_scale])
            return await self.sync_rollout_status(deployment, updated.get(uid_of(new_rs), new_rs), old)

        plan = reconcile_old_replica_sets(deployment, [*old, new_rs], active(old), new_rs)
        try:
            updated = await self.apply_scales(deployment, plan.operations)
        except Exception as exc:
            # Upstream treats a failed old-ReplicaSet update as "nothing scaled" and goes on.
            log.info("deployment %s/%s: scaling down old replica sets failed: %s", namespace_of(deployment),
                     name_of(deployment), exc)
            updated = {}
            scaled = False
        else:
            scaled = plan.scaled
        old = _with_replaced(old, updated)
        if scaled:
            return await self.sync_rollout_status(deployment, new_rs, old)
        if deployment_complete(deployment, section(deployment, "status")):
            await self.cleanup(deployment, old)
        return await self.sync_rollout_status(deployment, new_rs, old)

    async def rollout_recreate(
        self, deployment: Obj, new_rs: Obj | None, old: list[Obj], pod_map: Mapping[str, Sequence[Mapping[str, Any]]]
    ) -> Result | None:
        step = plan_recreate(deployment, new_rs, old, pod_map)
        if step.scale_down:
            old = _with_replaced(old, await self.apply_scales(deployment, step.scale_down))
            return await self.sync_rollout_status(deployment, new_rs, old)
        if step.wait_for_old_pods:
            return await self.sync_rollout_status(deployment, new_rs, old)
        if step.create_new:
            deployment, new_rs = await self.create_new_replica_set(deployment, old)
            step = plan_recreate(deployment, new_rs, old, pod_map)
        if step.scale_up is not None and new_rs is not None:
            updated = await self.apply_scales(deployment, [step.scale_up])
            new_rs = updated.get(uid_of(new_rs), new_rs)
        if deployment_complete(deployment, section(deployment, "status")):
            await self.cleanup(deployment, old)
        return await self.sync_rollout_status(deployment, new_rs, old)
