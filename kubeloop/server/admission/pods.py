"""core/v1 Pods: pod-level defaults and the create, update and status-update rules.

After creation a pod's spec is frozen except for container images, a shrinking
``activeDeadlineSeconds``, added tolerations, removed scheduling gates and the one
``terminationGracePeriodSeconds`` fix-up; any other change is refused with upstream's message
listing the fields that may change, followed by a diff of the spec.

Of ``ValidatePodSpecificAnnotations`` (pkg/apis/core/validation/validation.go) the
``controller.kubernetes.io/pod-deletion-cost`` rule is applied (:mod:`.deletioncost`); updates
report it twice, as upstream's ``ValidatePodUpdate`` does (its own pass and
``ValidatePodSpecificAnnotationUpdates``; the message shows it once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import forbidden, invalid, required
from kubeloop.server.admission.containers import default_requests_from_limits, image_whitespace_errors
from kubeloop.server.admission.deletioncost import deletion_cost_errors
from kubeloop.server.admission.fields import (
    Errors,
    child,
    index,
    int_at,
    mapping_at,
    objects_at,
    semantically_equal,
    spec_diff,
    str_at,
)
from kubeloop.server.admission.metadata import name_is_dns_subdomain, validate_object_meta, validate_object_meta_update
from kubeloop.server.admission.podspec import default_pod_spec, validate_pod_spec, validate_tolerations

MAX_INT32 = 2**31 - 1
UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
_SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})


def default_pod(pod: dict[str, Any]) -> None:
    """``SetDefaults_Pod`` then the pod spec defaults, in place."""
    spec = pod.get("spec")
    if spec is None:
        spec = pod["spec"] = {}
    if not isinstance(spec, dict):
        return
    for list_name in ("containers", "initContainers"):
        containers = spec.get(list_name)
        for container in containers if isinstance(containers, list) else []:
            if isinstance(container, dict):
                default_requests_from_limits(container)
                if spec.get("hostNetwork") is True:
                    _default_host_ports(container)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    default_pod_spec(spec)


def _default_host_ports(container: dict[str, Any]) -> None:
    """Host-network pods: a port without a host port (unset or 0) uses its container port.

    Pods only: since Kubernetes 1.28 templates embedded in workloads are left alone (the
    ``DefaultHostNetworkHostPortsInPodTemplates`` gate, off by default and later removed).
    A port without a container port stays as it is (upstream copies a 0, which is omitted).
    """
    ports = container.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort") is not None:
            port["hostPort"] = port["containerPort"]


def _deletion_cost_errors(pod: Mapping[str, Any]) -> Errors:
    """The deletion-cost rule of ``ValidatePodSpecificAnnotations`` for the pod's own metadata."""
    return deletion_cost_errors(mapping_at(mapping_at(pod, "metadata", "", []), "annotations", "metadata", []),
                                "metadata")


def _metadata_and_spec(pod: Mapping[str, Any]) -> Errors:
    """``validatePodMetadataAndSpec``: shared by create and update."""
    errs = validate_object_meta(pod, True, name_is_dns_subdomain)
    errs.extend(_deletion_cost_errors(pod))
    spec = mapping_at(pod, "spec", "", errs)
    errs.extend(validate_pod_spec(spec, "spec", is_pod=True))
    if not str_at(spec, "serviceAccountName", "spec", []):
        for volume_path, volume in objects_at(spec, "volumes", "spec", []):
            projected = volume.get("projected")
            sources = projected.get("sources") if isinstance(projected, dict) else None
            for position, source in enumerate(sources if isinstance(sources, list) else []):
                if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                    source_path = index(child(child(volume_path, "projected"), "sources"), position)
                    errs.append(forbidden(child(source_path, "serviceAccountToken"),
                                          "must not be specified when serviceAccountName is not set"))
    errs.extend(image_whitespace_errors(objects_at(spec, "containers", "spec", [])))
    errs.extend(image_whitespace_errors(objects_at(spec, "initContainers", "spec", [])))
    return errs


def validate_pod_create(pod: Mapping[str, Any]) -> Errors:
    errs = _metadata_and_spec(pod)
    spec = mapping_at(pod, "spec", "", [])
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if str_at(spec, "nodeName", "spec", []) and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


def _container_update_errors(new: list[Any], old: list[Any], path: str, errs: Errors) -> bool:
    """Images required and trimmed; returns True (stop) when containers were added or removed."""
    if len(new) != len(old):
        errs.append(forbidden(path, "pod updates may not add or remove containers"))
        return True
    for position, container in enumerate(new):
        image = container.get("image") if isinstance(container, dict) else None
        image = image if isinstance(image, str) else ""
        item = index(path, position)
        if not image:
            errs.append(required(child(item, "image")))
        if image != image.strip():
            errs.append(invalid(child(item, "image"), image, "must not have leading or trailing whitespace"))
    return False


def validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidatePodUpdate``: metadata, the new spec on its own, then what may change."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_metadata_and_spec(new))
    errs.extend(_deletion_cost_errors(new))  # ValidatePodSpecificAnnotationUpdates
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    for list_name in ("containers", "initContainers"):
        new_value = new_spec.get(list_name)
        old_value = old_spec.get(list_name)
        new_list: list[Any] = new_value if isinstance(new_value, list) else []
        old_list: list[Any] = old_value if isinstance(old_value, list) else []
        if _container_update_errors(new_list, old_list, child("spec", list_name), errs):
            return errs
    new_deadline = int_at(new_spec, "activeDeadlineSeconds", "spec", [])
    old_deadline = int_at(old_spec, "activeDeadlineSeconds", "spec", [])
    if new_deadline is not None:
        if not 0 <= new_deadline <= MAX_INT32:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline,
                                f"must be between 0 and {MAX_INT32}, inclusive"))
            return errs
        if old_deadline is not None and old_deadline < new_deadline:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline,
                                "must be less than or equal to previous value"))
            return errs
    elif old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    errs.extend(_tolerations_only_added(new_spec, old_spec))
    errs.extend(_scheduling_gates_only_removed(new_spec, old_spec))
    if new_spec == old_spec:
        return errs
    # The spec with what may change taken from the old one; it is only compared, so it shares
    # everything but the copies of what it changes (no deep copy of the spec on every write).
    # A spec semantically equal to the old one gives a munged spec equal to it too, so the
    # usual update (an image, or nothing) is decided by one plain comparison below.
    munged = dict(new_spec)
    for list_name in ("containers", "initContainers"):
        new_items, old_items = munged.get(list_name), old_spec.get(list_name)
        if not isinstance(new_items, list) or not isinstance(old_items, list):
            # Malformed (a Pod body is decoded before this; templates and fuzzed values are not).
            continue
        new_items = munged[list_name] = list(new_items)
        for position, (new_container, old_container) in enumerate(zip(new_items, old_items)):
            if isinstance(new_container, dict) and isinstance(old_container, dict):
                new_items[position] = {**new_container, "image": old_container.get("image")}
    for field_name in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged.pop(field_name, None)
        if field_name in old_spec:
            munged[field_name] = old_spec[field_name]
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if not semantically_equal(munged, old_spec):
        diff = spec_diff("core.PodSpec", old_spec, munged)
        allowed = ",".join(UPDATABLE_POD_SPEC_FIELDS)
        errs.append(forbidden("spec", f"pod updates may not change fields other than {allowed}\n{diff}"))
    return errs


def _tolerations_only_added(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> Errors:
    new_tolerations = objects_at(new_spec, "tolerations", "spec", [])
    if new_spec.get("tolerations") == old_spec.get("tolerations"):
        # Unchanged (the usual update): each old toleration is trivially still there, and the
        # list was valid when stored.
        return []
    for _, old_toleration in objects_at(old_spec, "tolerations", "spec", []):
        found = False
        for _, new_toleration in new_tolerations:
            candidate = dict(old_toleration)
            candidate.pop("tolerationSeconds", None)
            if "tolerationSeconds" in new_toleration:
                candidate["tolerationSeconds"] = new_toleration["tolerationSeconds"]
            if semantically_equal(candidate, new_toleration):
                found = True
                break
        if not found:
            return [forbidden("spec.tolerations",
                              "existing toleration can not be modified except its tolerationSeconds")]
    errs: Errors = []
    validate_tolerations(new_tolerations, errs)
    return errs


def _scheduling_gates_only_removed(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> Errors:
    old_gates = {str_at(g, "name", "", []) for _, g in objects_at(old_spec, "schedulingGates", "spec", [])}
    errs: Errors = []
    for item_path, gate in objects_at(new_spec, "schedulingGates", "spec", []):
        name = str_at(gate, "name", "", [])
        if name not in old_gates:
            errs.append(forbidden(child(item_path, "name"),
                                  f"only deletion is allowed, but found new scheduling gate '{name}'"))
    return errs


def validate_pod_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidatePodStatusUpdate``: custom condition types are qualified names; nodeName frozen.

    Upstream reports condition errors under ``metadata.conditions[i].Type``; so does this.
    """
    errs = validate_object_meta_update(new, old)
    errs.extend(_deletion_cost_errors(new))  # ValidatePodSpecificAnnotationUpdates
    status = mapping_at(new, "status", "", errs)
    for item_path, condition in objects_at(status, "conditions", "status", errs):
        condition_type = str_at(condition, "type", item_path, errs)
        if condition_type in _SYSTEM_CONDITIONS:
            continue
        position = item_path[item_path.rindex("[") :]
        errs.extend(invalid(f"metadata.conditions{position}.Type", condition_type, m)
                    for m in names.qualified_name_errors(condition_type))
    new_node = str_at(mapping_at(new, "spec", "", []), "nodeName", "spec", [])
    old_node = str_at(mapping_at(old, "spec", "", []), "nodeName", "spec", [])
    if new_node != old_node:
        errs.append(forbidden("status.nodeName", "may not be changed directly"))
    nominated = str_at(status, "nominatedNodeName", "status", errs)
    old_nominated = str_at(mapping_at(old, "status", "", []), "nominatedNodeName", "status", [])
    if nominated and nominated != old_nominated:
        errs.extend(invalid("status.nominatedNodeName", nominated, m)
                    for m in names.dns1123_subdomain_errors(nominated))
    return errs
