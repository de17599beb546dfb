"""Pod specs and pod templates: defaults and validation shared by Pods and every workload.

``default_pod_spec`` / ``validate_pod_spec`` are upstream's ``SetDefaults_PodSpec`` and
``ValidatePodSpec`` for the fields a workload controller relies on: volumes and the mounts that
refer to them, containers, restart and DNS policies, node selector, tolerations, readiness and
scheduling gates, service account, node, host names and deadlines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import duplicate, forbidden, go_quote, invalid, not_supported, required
from kubeloop.server.admission.containers import (
    default_container,
    local_descending_path_errors,
    validate_containers,
    validate_init_containers,
)
from kubeloop.server.admission.deletioncost import deletion_cost_errors
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    int_at,
    mapping_at,
    objects_at,
    str_at,
    str_map_at,
)
from kubeloop.server.admission.metadata import validate_annotations, validate_labels

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
DEFAULT_TERMINATION_GRACE_PERIOD = 30
DEFAULT_SCHEDULER = "default-scheduler"
MAX_INT32 = 2**31 - 1
_FILE_MODE_DEFAULT = 0o644
_FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"

# Volume source fields in the order upstream examines them, with the path upstream names in
# "may not specify more than 1 volume type" (two differ from the JSON key, as upstream spells them).
VOLUME_SOURCES: tuple[tuple[str, str], ...] = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
    ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"),
    ("fc", "fc"), ("flexVolume", "flexVolume"), ("configMap", "configMap"), ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"), ("storageos", "storageos"),
    ("projected", "projected"), ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"),
)


# ---------------------------------------------------------------------------------- defaults

# The declarative (``+default=``) field defaults of volume sources, as upstream's generated
# ``SetDefaults_ISCSIVolumeSource``, ``SetDefaults_RBDVolumeSource``,
# ``SetDefaults_AzureDiskVolumeSource`` and ``SetDefaults_ScaleIOVolumeSource`` apply them.
_SOURCE_FIELD_DEFAULTS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("iscsi", (("iscsiInterface", "default"),)),
    ("rbd", (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring"))),
    ("azureDisk", (("cachingMode", "ReadWrite"), ("fsType", "ext4"), ("readOnly", False), ("kind", "Shared"))),
    ("scaleIO", (("storageMode", "ThinProvisioned"), ("fsType", "xfs"))),
)


def _default_volume(volume: dict[str, Any]) -> None:
    if not any(volume.get(source) is not None for source, _ in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        body = volume.get(source)
        if isinstance(body, dict) and body.get("defaultMode") is None:
            body["defaultMode"] = _FILE_MODE_DEFAULT
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    for owner in (volume.get("downwardAPI"), *_projected_downward_apis(volume)):
        if isinstance(owner, dict):
            for item in _dicts(owner.get("items")):
                ref = item.get("fieldRef")
                if isinstance(ref, dict) and not ref.get("apiVersion"):
                    ref["apiVersion"] = "v1"
    projected = volume.get("projected")
    if isinstance(projected, dict):
        for projection in _dicts(projected.get("sources")):
            token = projection.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
    for source, defaults in _SOURCE_FIELD_DEFAULTS:
        body = volume.get(source)
        if isinstance(body, dict):
            for field_name, value in defaults:
                if body.get(field_name) is None:
                    body[field_name] = value
    ephemeral = volume.get("ephemeral")
    claim = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    claim_spec = claim.get("spec") if isinstance(claim, dict) else None
    if isinstance(claim_spec, dict) and claim_spec.get("volumeMode") is None:
        claim_spec["volumeMode"] = "Filesystem"


def _projected_downward_apis(volume: dict[str, Any]) -> list[Any]:
    projected = volume.get("projected")
    if not isinstance(projected, dict):
        return []
    return [s.get("downwardAPI") for s in _dicts(projected.get("sources"))]


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` plus the volume and container defaults under it, in place."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    for volume in _dicts(spec.get("volumes")):
        _default_volume(volume)
    for list_name in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(list_name)):
            default_container(container)
    mirror_service_account(spec)


def mirror_service_account(spec: dict[str, Any]) -> None:
    """``serviceAccount`` is the deprecated alias of ``serviceAccountName``, as upstream's v1
    conversion of ``PodSpec`` treats it: read when the name is empty, always written back as
    the name (and dropped when there is none)."""
    name = spec.get("serviceAccountName")
    if not name:
        alias = spec.get("serviceAccount")
        name = alias if isinstance(alias, str) else ""
        if name:
            spec["serviceAccountName"] = name
    if isinstance(name, str) and name:
        spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccount", None)


def default_pod_template_spec(template: dict[str, Any]) -> None:
    """Defaults of a workload's ``spec.template`` (the pod spec only; no pod-level defaults)."""
    spec = template.get("spec")
    if spec is None:
        spec = template["spec"] = {}
    if isinstance(spec, dict):
        default_pod_spec(spec)


# -------------------------------------------------------------------------------- validation


def _key_to_path_errors(item: Mapping[str, Any], path: str, errs: Errors) -> None:
    if not str_at(item, "key", path, errs):
        errs.append(required(child(path, "key")))
    target = str_at(item, "path", path, errs)
    if not target:
        errs.append(required(child(path, "path")))
    errs.extend(local_descending_path_errors(target, child(path, "path")))
    if target.startswith(".."):
        errs.append(invalid(child(path, "path"), target, "must not start with '..'"))
    mode = int_at(item, "mode", path, errs)
    if mode is not None and not 0 <= mode <= 0o777:
        errs.append(invalid(child(path, "mode"), mode, _FILE_MODE_ERROR))


def _validate_projection_like(body: Mapping[str, Any], name_field: str, path: str, errs: Errors) -> None:
    if not str_at(body, name_field, path, errs):
        errs.append(required(child(path, name_field)))
    mode = int_at(body, "defaultMode", path, errs)
    if mode is not None and not 0 <= mode <= 0o777:
        errs.append(invalid(child(path, "defaultMode"), mode, _FILE_MODE_ERROR))
    for item_path, item in objects_at(body, "items", path, errs):
        _key_to_path_errors(item, item_path, errs)


def _validate_volume_source(volume: Mapping[str, Any], path: str, errs: Errors) -> None:
    count = 0
    for source, shown in VOLUME_SOURCES:
        if volume.get(source) is None:
            continue
        if count:
            errs.append(forbidden(child(path, shown), "may not specify more than 1 volume type"))
            continue
        count += 1
        source_path = child(path, source)
        body = mapping_at(volume, source, path, errs)
        if source == "hostPath":
            target = str_at(body, "path", source_path, errs)
            if not target:
                errs.append(required(child(source_path, "path")))
                continue
            if ".." in target.split("/"):
                errs.append(invalid(child(source_path, "path"), target, "must not contain '..'"))
            host_type = str_at(body, "type", source_path, errs)
            if host_type not in HOST_PATH_TYPES:
                errs.append(not_supported(child(source_path, "type"), host_type, HOST_PATH_TYPES))
        elif source == "secret":
            _validate_projection_like(body, "secretName", source_path, errs)
        elif source == "configMap":
            _validate_projection_like(body, "name", source_path, errs)
        elif source == "persistentVolumeClaim":
            if not str_at(body, "claimName", source_path, errs):
                errs.append(required(child(source_path, "claimName")))
        elif source == "nfs":
            if not str_at(body, "server", source_path, errs):
                errs.append(required(child(source_path, "server")))
            nfs_path = str_at(body, "path", source_path, errs)
            if not nfs_path:
                errs.append(required(child(source_path, "path")))
            elif not nfs_path.startswith("/"):
                errs.append(invalid(child(source_path, "path"), nfs_path, "must be an absolute path"))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))


def validate_volumes(spec: Mapping[str, Any], path: str, errs: Errors) -> set[str]:
    """Volume names are unique DNS labels with exactly one source; returns the valid names."""
    valid: set[str] = set()
    seen: set[str] = set()
    for item_path, volume in objects_at(spec, "volumes", path, errs):
        volume_errs: Errors = []
        _validate_volume_source(volume, item_path, volume_errs)
        name = str_at(volume, "name", item_path, volume_errs)
        if not name:
            volume_errs.append(required(child(item_path, "name")))
        else:
            volume_errs.extend(invalid(child(item_path, "name"), name, m) for m in names.dns1123_label_errors(name))
        if name in seen:
            volume_errs.append(duplicate(child(item_path, "name"), name))
        if volume_errs:
            errs.extend(volume_errs)
        else:
            valid.add(name)
        seen.add(name)
    return valid


def _go_toleration(toleration: Mapping[str, Any]) -> GoLiteral:
    seconds = toleration.get("tolerationSeconds")
    shown = "(*int64)(nil)" if seconds is None else f"(*int64)({seconds})"
    return GoLiteral(
        "core.Toleration{"
        f"Key:{go_quote(str(toleration.get('key') or ''))}, "
        f"Operator:{go_quote(str(toleration.get('operator') or ''))}, "
        f"Value:{go_quote(str(toleration.get('value') or ''))}, "
        f"Effect:{go_quote(str(toleration.get('effect') or ''))}, "
        f"TolerationSeconds:{shown}}}"
    )


def validate_tolerations(tolerations: list[tuple[str, dict[str, Any]]], errs: Errors) -> None:
    for item_path, toleration in tolerations:
        toleration_key = str_at(toleration, "key", item_path, errs)
        operator = str_at(toleration, "operator", item_path, errs)
        value = str_at(toleration, "value", item_path, errs)
        effect = str_at(toleration, "effect", item_path, errs)
        if toleration_key:
            errs.extend(invalid(child(item_path, "key"), toleration_key, m)
                        for m in names.qualified_name_errors(toleration_key))
        if not toleration_key and operator != "Exists":
            errs.append(invalid(child(item_path, "operator"), operator, "operator must be Exists when `key` is empty, "
                                'which means "match all values and all keys"'))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(child(item_path, "effect"), effect,
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            messages = names.label_value_errors(value)
            if messages:
                errs.append(invalid(child(item_path, "operator"), value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                errs.append(invalid(child(item_path, "operator"), _go_toleration(toleration),
                                    "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(child(item_path, "operator"), operator, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(child(item_path, "effect"), effect, TAINT_EFFECTS))


def _choice(spec: Mapping[str, Any], name: str, allowed: tuple[str, ...], path: str, errs: Errors) -> None:
    value = str_at(spec, name, path, errs)
    if not value:
        errs.append(required(child(path, name)))
    elif value not in allowed:
        errs.append(not_supported(child(path, name), value, allowed))


def validate_pod_spec(spec: Mapping[str, Any], path: str, *, is_pod: bool = False) -> Errors:
    """``ValidatePodSpec`` for an already defaulted pod spec found at ``path``.

    ``is_pod`` is set for Pods themselves, where host-network ports must always match.
    """
    errs: Errors = []
    volumes = validate_volumes(spec, path, errs)
    containers = objects_at(spec, "containers", path, errs)
    validate_containers(containers, volumes, child(path, "containers"), errs)
    init = objects_at(spec, "initContainers", path, errs)
    validate_init_containers(init, containers, volumes, errs)
    if spec.get("hostNetwork") is True:
        for item_path, container in containers:
            for port_path, port in objects_at(container, "ports", item_path, []):
                host_port = port.get("hostPort") or 0
                if (is_pod or host_port != 0) and host_port != port.get("containerPort"):
                    errs.append(invalid(child(port_path, "hostPort"), host_port,
                                        "must match `containerPort` when `hostNetwork` is true"))
    _choice(spec, "restartPolicy", RESTART_POLICIES, path, errs)
    _choice(spec, "dnsPolicy", DNS_POLICIES, path, errs)
    errs.extend(validate_labels(str_map_at(spec, "nodeSelector", path, errs), child(path, "nodeSelector")))
    for item_path, gate in objects_at(spec, "readinessGates", path, errs):
        condition = str_at(gate, "conditionType", item_path, errs)
        errs.extend(invalid(child(item_path, "conditionType"), condition, m)
                    for m in names.qualified_name_errors(condition))
    seen_gates: set[str] = set()
    for item_path, gate in objects_at(spec, "schedulingGates", path, errs):
        gate_name = str_at(gate, "name", item_path, errs)
        errs.extend(invalid(item_path, gate_name, m) for m in names.qualified_name_errors(gate_name))
        if gate_name in seen_gates:
            errs.append(duplicate(item_path, gate_name))
        seen_gates.add(gate_name)
    for name in ("serviceAccountName", "nodeName", "priorityClassName"):
        value = str_at(spec, name, path, errs)
        if value:
            errs.extend(invalid(child(path, name), value, m) for m in names.dns1123_subdomain_errors(value))
    deadline = int_at(spec, "activeDeadlineSeconds", path, errs)
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(child(path, "activeDeadlineSeconds"), deadline,
                            f"must be between 1 and {MAX_INT32}, inclusive"))
    for name in ("hostname", "subdomain"):
        value = str_at(spec, name, path, errs)
        if value:
            errs.extend(invalid(child(path, name), value, m) for m in names.dns1123_label_errors(value))
    validate_tolerations(objects_at(spec, "tolerations", path, errs), errs)
    if spec.get("preemptionPolicy") is not None:
        _choice(spec, "preemptionPolicy", PREEMPTION_POLICIES, path, errs)
    return errs


def validate_pod_template_spec(template: Mapping[str, Any], path: str) -> Errors:
    """``ValidatePodTemplateSpec``: template labels and annotations (with the deletion-cost
    rule of ``ValidatePodSpecificAnnotations``), then the pod spec."""
    errs: Errors = []
    meta = mapping_at(template, "metadata", path, errs)
    meta_path = child(path, "metadata")
    errs.extend(validate_labels(str_map_at(meta, "labels", meta_path, errs), child(meta_path, "labels")))
    annotations = str_map_at(meta, "annotations", meta_path, errs)
    errs.extend(validate_annotations(annotations, child(meta_path, "annotations")))
    errs.extend(deletion_cost_errors(annotations, meta_path))
    spec = mapping_at(template, "spec", path, errs)
    spec_path = child(path, "spec")
    errs.extend(validate_pod_spec(spec, spec_path))
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(child(spec_path, "ephemeralContainers"),
                              "ephemeral containers not allowed in pod template"))
    return errs

