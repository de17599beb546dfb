"""Which defaults and rules apply to which kind: the admission dispatch table.

Each built-in kind maps to a :class:`KindRules`; kinds without an entry (custom resources)
get only the generic metadata rules. The table is read-only: a server builds its registry of
kinds from it plus the rules of the custom kinds it knows (CloneSets, whose rules read the
server's own pods), and each served kind carries its rules from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

from kubeloop.server.admission import (
    apps,
    autoscaling,
    batch,
    certificates,
    core_kinds,
    core_more,
    events,
    flowcontrol,
    launchpriority,
    networking,
    pods,
    policy,
    rbac,
    scheduling,
    storage,
    webhooks,
    workloads_more,
)
from kubeloop.server.admission.fields import Errors
from kubeloop.server.admission.metadata import validate_object_meta_update
from kubeloop.server.services import defaults as service_defaults
from kubeloop.server.services import validation as service_validation

Defaulter = Callable[[dict[str, Any]], None]
CreateMutation = Callable[[dict[str, Any]], None]
CreateRule = Callable[[Mapping[str, Any]], Errors]
UpdateRule = Callable[[Mapping[str, Any], Mapping[str, Any]], Errors]
UpdateMutation = Callable[[dict[str, Any], Mapping[str, Any], bool], None]


def _no_defaults(obj: dict[str, Any]) -> None:
    del obj


def _no_create_mutation(obj: dict[str, Any]) -> None:
    del obj


def _no_update_mutation(new: dict[str, Any], old: Mapping[str, Any], status: bool) -> None:
    del new, old, status


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
    ``prepare_update`` is the strategy's ``PrepareForUpdate`` (``status`` True for writes through
    ``/status`` and similar subresources): it rewrites the new object, knowing the old one, before
    defaulting and validation.
    """

    default: Defaulter
    create: CreateRule
    update: UpdateRule
    status_update: UpdateRule = _metadata_only_status
    mutate_on_create: CreateMutation = _no_create_mutation
    prepare_update: UpdateMutation = _no_update_mutation


_RULES: Mapping[tuple[str, str], KindRules] = {
    ("", "Pod"): KindRules(pods.default_pod, pods.validate_pod_create, pods.validate_pod_update,
                           pods.validate_pod_status_update, mutate_on_create=launchpriority.inject_launch_priority),
    ("", "Namespace"): KindRules(core_kinds.default_namespace, core_kinds.validate_namespace_create,
                                 core_kinds.validate_namespace_update, core_kinds.validate_namespace_status_update),
    ("", "Node"): KindRules(core_kinds.default_node, core_kinds.validate_node_create, core_kinds.validate_node_update,
                            core_kinds.validate_node_update),
    ("", "ConfigMap"): KindRules(core_kinds.default_config_map, core_kinds.validate_config_map_create,
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
    ("", "Service"): KindRules(service_defaults.default_service, service_validation.validate_service_create,
                               service_validation.validate_service_update,
                               service_validation.validate_service_status_update),
    ("", "Endpoints"): KindRules(service_defaults.default_endpoints, service_validation.validate_endpoints_create,
                                 service_validation.validate_endpoints_update),
    ("discovery.k8s.io", "EndpointSlice"): KindRules(service_defaults.default_endpoint_slice,
                                                     service_validation.validate_endpoint_slice_create,
                                                     service_validation.validate_endpoint_slice_update),
    # Part B of the kinds served since 1.33 (issue 14): one line per kind, logic in the group's module.
    (rbac.GROUP, "Role"): KindRules(_no_defaults, rbac.validate_role_create, rbac.validate_role_update),
    (rbac.GROUP, "ClusterRole"): KindRules(_no_defaults, rbac.validate_cluster_role_create,
                                           rbac.validate_cluster_role_update),
    (rbac.GROUP, "RoleBinding"): KindRules(rbac.default_binding, rbac.validate_role_binding_create,
                                           rbac.validate_role_binding_update),
    (rbac.GROUP, "ClusterRoleBinding"): KindRules(rbac.default_binding, rbac.validate_cluster_role_binding_create,
                                                  rbac.validate_cluster_role_binding_update),
    ("scheduling.k8s.io", "PriorityClass"): KindRules(scheduling.default_priority_class,
                                                      scheduling.validate_priority_class_create,
                                                      scheduling.validate_priority_class_update),
    ("node.k8s.io", "RuntimeClass"): KindRules(_no_defaults, scheduling.validate_runtime_class_create,
                                               scheduling.validate_runtime_class_update),
    ("storage.k8s.io", "StorageClass"): KindRules(storage.default_storage_class, storage.validate_storage_class_create,
                                                  storage.validate_storage_class_update),
    ("storage.k8s.io", "CSIDriver"): KindRules(storage.default_csi_driver, storage.validate_csi_driver_create,
                                               storage.validate_csi_driver_update),
    ("storage.k8s.io", "CSINode"): KindRules(_no_defaults, storage.validate_csi_node_create,
                                             storage.validate_csi_node_update),
    ("storage.k8s.io", "CSIStorageCapacity"): KindRules(_no_defaults, storage.validate_csi_storage_capacity_create,
                                                        storage.validate_csi_storage_capacity_update),
    ("storage.k8s.io", "VolumeAttachment"): KindRules(_no_defaults, storage.validate_volume_attachment_create,
                                                      storage.validate_volume_attachment_update,
                                                      storage.validate_volume_attachment_status_update),
    ("networking.k8s.io", "Ingress"): KindRules(networking.default_ingress, networking.validate_ingress_create,
                                                networking.validate_ingress_update,
                                                networking.validate_ingress_status_update),
    ("networking.k8s.io", "IngressClass"): KindRules(networking.default_ingress_class,
                                                     networking.validate_ingress_class_create,
                                                     networking.validate_ingress_class_update),
    ("networking.k8s.io", "NetworkPolicy"): KindRules(networking.default_network_policy,
                                                      networking.validate_network_policy_create,
                                                      networking.validate_network_policy_update),
    ("networking.k8s.io", "IPAddress"): KindRules(_no_defaults, networking.validate_ip_address_create,
                                                  networking.validate_ip_address_update),
    ("networking.k8s.io", "ServiceCIDR"): KindRules(_no_defaults, networking.validate_service_cidr_create,
                                                    networking.validate_service_cidr_update),
    (webhooks.GROUP, "ValidatingWebhookConfiguration"): KindRules(
        webhooks.default_validating_webhook_configuration, webhooks.validate_validating_webhook_configuration_create,
        webhooks.validate_validating_webhook_configuration_update),
    (webhooks.GROUP, "MutatingWebhookConfiguration"): KindRules(
        webhooks.default_mutating_webhook_configuration, webhooks.validate_mutating_webhook_configuration_create,
        webhooks.validate_mutating_webhook_configuration_update),
    (webhooks.GROUP, "ValidatingAdmissionPolicy"): KindRules(
        webhooks.default_validating_admission_policy, webhooks.validate_admission_policy_create,
        webhooks.validate_admission_policy_update),
    (webhooks.GROUP, "ValidatingAdmissionPolicyBinding"): KindRules(
        webhooks.default_validating_admission_policy_binding, webhooks.validate_policy_binding_create,
        webhooks.validate_policy_binding_update),
    (flowcontrol.GROUP, "FlowSchema"): KindRules(flowcontrol.default_flow_schema,
                                                 flowcontrol.validate_flow_schema_create,
                                                 flowcontrol.validate_flow_schema_update),
    (flowcontrol.GROUP, "PriorityLevelConfiguration"): KindRules(
        flowcontrol.default_priority_level, flowcontrol.validate_priority_level_create,
        flowcontrol.validate_priority_level_update),
    (certificates.GROUP, "CertificateSigningRequest"): KindRules(
        _no_defaults, certificates.validate_csr_create, certificates.validate_csr_update,
        certificates.validate_csr_status_update, mutate_on_create=certificates.set_requester,
        prepare_update=certificates.prepare_update),
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


BUILTIN_RULES = MappingProxyType(dict(_RULES))
"""The rules of every built-in kind that has its own."""


def rules_for(group: str, kind: str) -> KindRules | None:
    return BUILTIN_RULES.get((group, kind))
