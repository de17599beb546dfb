"""Which defaults and rules apply to which kind: the admission dispatch table.

Each built-in kind maps to a :class:`KindRules`; kinds without an entry (custom resources)
get only the generic metadata rules. Another module can add a kind with :func:`register`
(the CloneSet admission module does, for ``apps.kruise.io`` CloneSets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from kubeloop.server.admission import (
    apps,
    autoscaling,
    batch,
    core_kinds,
    core_more,
    events,
    launchpriority,
    pods,
    policy,
    workloads_more,
)
from kubeloop.server.admission.fields import Errors
from kubeloop.server.admission.metadata import validate_object_meta_update

Defaulter = Callable[[dict[str, Any]], None]
CreateMutation = Callable[[dict[str, Any]], None]
CreateRule = Callable[[Mapping[str, Any]], Errors]
UpdateRule = Callable[[Mapping[str, Any], Mapping[str, Any]], Errors]


def _no_defaults(obj: dict[str, Any]) -> None:
    del obj


def _no_create_mutation(obj: dict[str, Any]) -> None:
    del obj


def _metadata_only_status(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    return validate_object_meta_update(new, old)


@dataclass(frozen=True)
class KindRules:
    """Defaulting and validation of one kind.

    ``create`` validates a new object, ``update`` a replacement through the main endpoint and
    ``status_update`` one through ``/status``; all return upstream's field errors, and none
    includes the generic registry's metadata pass, which the package runs around them.
    ``mutate_on_create`` is the kind's mutating admission of new objects only (upstream's
    mutating webhooks registered for CREATE): it rewrites the defaulted object in place before
    validation and may refuse it by raising :class:`~kubeloop.api.status.ApiError`.
    """

    default: Defaulter
    create: CreateRule
    update: UpdateRule
    status_update: UpdateRule = _metadata_only_status
    mutate_on_create: CreateMutation = _no_create_mutation


_RULES: dict[tuple[str, str], KindRules] = {
    ("", "Pod"): KindRules(pods.default_pod, pods.validate_pod_create, pods.validate_pod_update,
                           pods.validate_pod_status_update, mutate_on_create=launchpriority.inject_launch_priority),
    ("", "Namespace"): KindRules(core_kinds.default_namespace, core_kinds.validate_namespace_create,
                                 core_kinds.validate_namespace_update, core_kinds.validate_namespace_status_update),
    ("", "Node"): KindRules(core_kinds.default_node, core_kinds.validate_node_create, core_kinds.validate_node_update,
                            core_kinds.validate_node_update),
    ("", "ConfigMap"): KindRules(_no_defaults, core_kinds.validate_config_map_create,
                                 core_kinds.validate_config_map_update),
    ("", "Secret"): KindRules(core_kinds.default_secret, core_kinds.validate_secret_create,
                              core_kinds.validate_secret_update),
    ("", "ServiceAccount"): KindRules(_no_defaults, core_kinds.validate_service_account_create,
                                      core_kinds.validate_service_account_update),
    ("", "PersistentVolumeClaim"): KindRules(core_kinds.default_persistent_volume_claim,
                                             core_kinds.validate_persistent_volume_claim_create,
                                             core_kinds.validate_persistent_volume_claim_update),
    ("", "Event"): KindRules(_no_defaults, partial(events.validate_event_create, group=""),
                             partial(events.validate_event_update, group="")),
    (events.EVENTS_GROUP, "Event"): KindRules(_no_defaults,
                                              partial(events.validate_event_create, group=events.EVENTS_GROUP),
                                              partial(events.validate_event_update, group=events.EVENTS_GROUP)),
    ("coordination.k8s.io", "Lease"): KindRules(_no_defaults, core_kinds.validate_lease_create,
                                                core_kinds.validate_lease_update),
    ("apps", "Deployment"): KindRules(apps.default_deployment, apps.validate_deployment_create,
                                      apps.validate_deployment_update, apps.validate_deployment_status_update),
    ("apps", "ReplicaSet"): KindRules(apps.default_replica_set, apps.validate_replica_set_create,
                                      apps.validate_replica_set_update, apps.validate_replica_set_status_update),
    ("apps", "ControllerRevision"): KindRules(_no_defaults, apps.validate_controller_revision_create,
                                              apps.validate_controller_revision_update),
    ("batch", "Job"): KindRules(batch.default_job, batch.validate_job_create, batch.validate_job_update,
                                batch.validate_job_status_update, mutate_on_create=batch.generate_job_selector),
    ("batch", "CronJob"): KindRules(batch.default_cron_job, batch.validate_cron_job_create,
                                    batch.validate_cron_job_update),
    ("apps", "DaemonSet"): KindRules(workloads_more.default_daemon_set, workloads_more.validate_daemon_set_create,
                                     workloads_more.validate_daemon_set_update,
                                     workloads_more.validate_daemon_set_status_update),
    ("apps", "StatefulSet"): KindRules(workloads_more.default_stateful_set, workloads_more.validate_stateful_set_create,
                                       workloads_more.validate_stateful_set_update,
                                       workloads_more.validate_stateful_set_status_update),
    ("", "ReplicationController"): KindRules(core_more.default_replication_controller,
                                             core_more.validate_replication_controller_create,
                                             core_more.validate_replication_controller_update,
                                             core_more.validate_replication_controller_status_update),
    ("", "PodTemplate"): KindRules(core_more.default_pod_template, core_more.validate_pod_template_create,
                                   core_more.validate_pod_template_update),
    ("", "LimitRange"): KindRules(core_more.default_limit_range, core_more.validate_limit_range_create,
                                  core_more.validate_limit_range_update),
    ("", "ResourceQuota"): KindRules(_no_defaults, core_more.validate_resource_quota_create,
                                     core_more.validate_resource_quota_update,
                                     core_more.validate_resource_quota_status_update),
    ("", "PersistentVolume"): KindRules(core_more.default_persistent_volume,
                                        core_more.validate_persistent_volume_create,
                                        core_more.validate_persistent_volume_update,
                                        core_more.validate_persistent_volume_status_update,
                                        mutate_on_create=core_more.stamp_persistent_volume_phase),
    ("autoscaling", "HorizontalPodAutoscaler"): KindRules(
        autoscaling.default_horizontal_pod_autoscaler, autoscaling.validate_horizontal_pod_autoscaler_create,
        autoscaling.validate_horizontal_pod_autoscaler_update,
        autoscaling.validate_horizontal_pod_autoscaler_status_update),
    ("policy", "PodDisruptionBudget"): KindRules(_no_defaults, policy.validate_pod_disruption_budget_create,
                                                 policy.validate_pod_disruption_budget_update,
                                                 policy.validate_pod_disruption_budget_status_update),
}


def register(group: str, kind: str, rules: KindRules) -> None:
    """Add (or replace) the rules of a kind."""
    _RULES[(group, kind)] = rules


def rules_for(group: str, kind: str) -> KindRules | None:
    return _RULES.get((group, kind))
