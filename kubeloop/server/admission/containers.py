"""Containers of a pod spec: their defaults and per-container validation.

Covers what upstream checks for each regular or init container: name and image, ports,
environment variables, volume mounts against the pod's volumes, probes and lifecycle hooks,
pull and termination-message policies, and resource requirements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import duplicate, forbidden, invalid, not_found, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    child,
    int_at,
    mapping_at,
    objects_at,
    str_at,
)
from kubeloop.server.admission.metadata import nonnegative
from kubeloop.server.admission.resources import validate_resources
from kubeloop.server.admission.syntax import (
    config_map_key_errors,
    env_var_name_errors,
    port_name_errors,
    port_number_errors,
)

TERMINATION_MESSAGE_PATH = "/dev/termination-log"
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
HTTP_SCHEMES = ("HTTP", "HTTPS")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_ENV_FIELD_PATHS = (
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
    "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
)
_ENV_FIELD_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['[^']*'\]$")
_HEADER_NAME = re.compile(r"^[-A-Za-z0-9]+$")

# ---------------------------------------------------------------------------------- defaults


def default_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` or untagged images, ``IfNotPresent`` otherwise (digests too)."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag:
        tag = "" if digest else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _default_http_get(action: Any) -> None:
    if isinstance(action, dict):
        if not action.get("path"):
            action["path"] = "/"
        if not action.get("scheme"):
            action["scheme"] = "HTTP"


def _default_probe(probe: dict[str, Any]) -> None:
    for name, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if not probe.get(name):
            probe[name] = value
    _default_http_get(probe.get("httpGet"))
    grpc = probe.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


def default_container(container: dict[str, Any]) -> None:
    """Per-container defaults (``SetDefaults_Container`` and the generated field defaults)."""
    if not container.get("imagePullPolicy"):
        image = container.get("image")
        container["imagePullPolicy"] = default_pull_policy(image if isinstance(image, str) else "")
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = TERMINATION_MESSAGE_PATH
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    if container.get("resources") is None:
        # ResourceRequirements is a struct, not a pointer, so it always serialises as {}.
        container["resources"] = {}
    for port in _dicts(container.get("ports")):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in _dicts(container.get("env")):
        field_ref = _dig_dict(env, "valueFrom", "fieldRef")
        if field_ref is not None and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"
    for probe_name in _PROBES:
        probe = container.get(probe_name)
        if isinstance(probe, dict):
            _default_probe(probe)
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if isinstance(handler, dict):
                _default_http_get(handler.get("httpGet"))


def default_requests_from_limits(container: dict[str, Any]) -> None:
    """Pods (not templates): a resource with a limit and no request requests its limit."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    limits = resources.get("limits")
    if not isinstance(limits, dict) or not limits:
        return
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        requests = resources["requests"] = {}
    for name, value in limits.items():
        requests.setdefault(name, value)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dig_dict(obj: dict[str, Any], *path: str) -> dict[str, Any] | None:
    current: Any = obj
    for part in path:
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current if isinstance(current, dict) else None


# -------------------------------------------------------------------------------- validation


def _validate_ports(container: Mapping[str, Any], path: str, errs: Errors) -> None:
    seen: set[str] = set()
    for port_path, port in objects_at(container, "ports", path, errs):
        name = str_at(port, "name", port_path, errs)
        if name:
            messages = port_name_errors(name)
            if messages:
                errs.extend(invalid(child(port_path, "name"), name, m) for m in messages)
            elif name in seen:
                errs.append(duplicate(child(port_path, "name"), name))
            else:
                seen.add(name)
        container_port = int_at(port, "containerPort", port_path, errs) or 0
        if container_port == 0:
            errs.append(required(child(port_path, "containerPort")))
        else:
            errs.extend(invalid(child(port_path, "containerPort"), container_port, m)
                        for m in port_number_errors(container_port))
        host_port = int_at(port, "hostPort", port_path, errs) or 0
        if host_port:
            errs.extend(invalid(child(port_path, "hostPort"), host_port, m) for m in port_number_errors(host_port))
        protocol = str_at(port, "protocol", port_path, errs)
        if not protocol:
            errs.append(required(child(port_path, "protocol")))
        elif protocol not in PORT_PROTOCOLS:
            errs.append(not_supported(child(port_path, "protocol"), protocol, PORT_PROTOCOLS))


def _validate_key_selector(selector: Mapping[str, Any], path: str, errs: Errors) -> None:
    name = str_at(selector, "name", path, errs)
    errs.extend(invalid(child(path, "name"), name, m) for m in names.dns1123_subdomain_errors(name))
    selector_key = str_at(selector, "key", path, errs)
    if not selector_key:
        errs.append(required(child(path, "key")))
    else:
        errs.extend(invalid(child(path, "key"), selector_key, m) for m in config_map_key_errors(selector_key))


def _validate_field_ref(ref: Mapping[str, Any], path: str, errs: Errors) -> None:
    if not str_at(ref, "apiVersion", path, errs):
        errs.append(required(child(path, "apiVersion")))
        return
    field_path = str_at(ref, "fieldPath", path, errs)
    if not field_path:
        errs.append(required(child(path, "fieldPath")))
    elif field_path not in _ENV_FIELD_PATHS and not _ENV_FIELD_SUBSCRIPT.match(field_path):
        errs.append(not_supported(child(path, "fieldPath"), field_path, sorted(_ENV_FIELD_PATHS)))


def _validate_env(container: Mapping[str, Any], path: str, errs: Errors) -> None:
    for env_path, env in objects_at(container, "env", path, errs):
        name = str_at(env, "name", env_path, errs)
        if not name:
            errs.append(required(child(env_path, "name")))
        else:
            errs.extend(invalid(child(env_path, "name"), name, m) for m in env_var_name_errors(name))
        if env.get("valueFrom") is None:
            continue
        source_path = child(env_path, "valueFrom")
        source = mapping_at(env, "valueFrom", env_path, errs)
        sources = 0
        if source.get("fieldRef") is not None:
            sources += 1
            _validate_field_ref(mapping_at(source, "fieldRef", source_path, errs), child(source_path, "fieldRef"), errs)
        if source.get("resourceFieldRef") is not None:
            sources += 1
            ref = mapping_at(source, "resourceFieldRef", source_path, errs)
            if not str_at(ref, "resource", child(source_path, "resourceFieldRef"), errs):
                errs.append(required(child(child(source_path, "resourceFieldRef"), "resource")))
        for selector_name in ("configMapKeyRef", "secretKeyRef"):
            if source.get(selector_name) is not None:
                sources += 1
                _validate_key_selector(
                    mapping_at(source, selector_name, source_path, errs), child(source_path, selector_name), errs
                )
        if sources == 0:
            errs.append(invalid(source_path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                "`configMapKeyRef` or `secretKeyRef`"))
        elif str_at(env, "value", env_path, errs):
            errs.append(invalid(source_path, "", "may not be specified when `value` is not empty"))
        elif sources > 1:
            errs.append(invalid(source_path, "", "may not have more than one field specified at a time"))


def _validate_mounts(container: Mapping[str, Any], volumes: set[str], path: str, errs: Errors) -> None:
    mount_points: set[str] = set()
    for mount_path_, mount in objects_at(container, "volumeMounts", path, errs):
        name = str_at(mount, "name", mount_path_, errs)
        if not name:
            errs.append(required(child(mount_path_, "name")))
        if name not in volumes:
            errs.append(not_found(child(mount_path_, "name"), name))
        mount_point = str_at(mount, "mountPath", mount_path_, errs)
        if not mount_point:
            errs.append(required(child(mount_path_, "mountPath")))
        if mount_point in mount_points:
            errs.append(invalid(child(mount_path_, "mountPath"), mount_point, "must be unique"))
        mount_points.add(mount_point)
        sub_path = str_at(mount, "subPath", mount_path_, errs)
        sub_path_expr = str_at(mount, "subPathExpr", mount_path_, errs)
        # Upstream reports these on the list path, not the item's.
        if sub_path:
            errs.extend(local_descending_path_errors(sub_path, child(path, "volumeMounts.subPath")))
        if sub_path_expr:
            if sub_path:
                errs.append(invalid(child(mount_path_, "subPathExpr"), sub_path_expr,
                                    "subPathExpr and subPath are mutually exclusive"))
            errs.extend(local_descending_path_errors(sub_path_expr, child(path, "volumeMounts.subPathExpr")))


def local_descending_path_errors(target: str, path: str) -> Errors:
    """A relative path that never climbs out with ``..``."""
    errs: Errors = []
    if target.startswith("/"):
        errs.append(invalid(path, target, "must be a relative path"))
    if ".." in target.split("/"):
        errs.append(invalid(path, target, "must not contain '..'"))
    return errs


def _validate_port_num_or_name(port: Any, path: str, errs: Errors) -> None:
    if isinstance(port, bool) or port is None:
        errs.append(invalid(path, 0, "must be between 1 and 65535, inclusive"))
    elif isinstance(port, int):
        errs.extend(invalid(path, port, m) for m in port_number_errors(port))
    elif isinstance(port, str):
        errs.extend(invalid(path, port, m) for m in port_name_errors(port))


def validate_handler(handler: Mapping[str, Any], path: str, errs: Errors) -> None:
    """Exactly one of exec, httpGet, tcpSocket, grpc (probes and lifecycle hooks)."""
    count = 0
    for kind in _HANDLERS:
        if handler.get(kind) is None:
            continue
        kind_path = child(path, kind)
        if count:
            errs.append(forbidden(kind_path, "may not specify more than 1 handler type"))
            continue
        count += 1
        action = mapping_at(handler, kind, path, errs)
        if kind == "exec":
            if not action.get("command"):
                errs.append(required(child(kind_path, "command")))
        elif kind == "httpGet":
            if not str_at(action, "path", kind_path, errs):
                errs.append(required(child(kind_path, "path")))
            _validate_port_num_or_name(action.get("port"), child(kind_path, "port"), errs)
            scheme = str_at(action, "scheme", kind_path, errs)
            if scheme not in HTTP_SCHEMES:
                errs.append(not_supported(child(kind_path, "scheme"), scheme, HTTP_SCHEMES))
            for _, header in objects_at(action, "httpHeaders", kind_path, errs):
                header_name = str_at(header, "name", kind_path, errs)
                if not _HEADER_NAME.match(header_name):
                    errs.append(invalid(child(kind_path, "httpHeaders"), header_name, names.regex_error(
                        "a valid HTTP header must consist of alphanumeric characters or '-'",
                        "[-A-Za-z0-9]+", "X-Header-Name")))
        else:
            _validate_port_num_or_name(action.get("port"), child(kind_path, "port"), errs)
    if count == 0:
        errs.append(required(path, "must specify a handler type"))


def _validate_probe(container: Mapping[str, Any], probe_name: str, path: str, errs: Errors) -> None:
    if container.get(probe_name) is None:
        return
    probe_path = child(path, probe_name)
    probe = mapping_at(container, probe_name, path, errs)
    validate_handler(probe, probe_path, errs)
    for name in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs.extend(nonnegative(int_at(probe, name, probe_path, errs), child(probe_path, name)))
    grace = int_at(probe, "terminationGracePeriodSeconds", probe_path, errs)
    if grace is not None and grace <= 0:
        errs.append(invalid(child(probe_path, "terminationGracePeriodSeconds"), grace, "must be greater than 0"))
    success = int_at(probe, "successThreshold", probe_path, []) or 0
    if probe_name in ("livenessProbe", "startupProbe") and success != 1:
        errs.append(invalid(child(probe_path, "successThreshold"), success, "must be 1"))
    if probe_name == "readinessProbe" and grace is not None:
        errs.append(invalid(child(probe_path, "terminationGracePeriodSeconds"), grace,
                            "must not be set for readinessProbes"))


def _validate_lifecycle(container: Mapping[str, Any], path: str, errs: Errors) -> None:
    lifecycle_path = child(path, "lifecycle")
    lifecycle = mapping_at(container, "lifecycle", path, errs)
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            validate_handler(mapping_at(lifecycle, hook, lifecycle_path, errs), child(lifecycle_path, hook), errs)


def validate_container_common(container: Mapping[str, Any], volumes: set[str], path: str, errs: Errors) -> None:
    """The checks every container kind shares (``validateContainerCommon``)."""
    name = str_at(container, "name", path, errs)
    if not name:
        errs.append(required(child(path, "name")))
    else:
        errs.extend(invalid(child(path, "name"), name, m) for m in names.dns1123_label_errors(name))
    if not str_at(container, "image", path, errs):
        errs.append(required(child(path, "image")))
    policy = str_at(container, "terminationMessagePolicy", path, errs)
    if not policy:
        errs.append(required(child(path, "terminationMessagePolicy")))
    elif policy not in TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(child(path, "terminationMessagePolicy"), policy, TERMINATION_MESSAGE_POLICIES))
    _validate_ports(container, path, errs)
    _validate_env(container, path, errs)
    _validate_mounts(container, volumes, path, errs)
    pull = str_at(container, "imagePullPolicy", path, errs)
    if not pull:
        errs.append(required(child(path, "imagePullPolicy")))
    elif pull not in PULL_POLICIES:
        errs.append(not_supported(child(path, "imagePullPolicy"), pull, PULL_POLICIES))
    validate_resources(container, path, errs)


def validate_containers(containers: list[tuple[str, dict[str, Any]]], volumes: set[str], path: str,
                        errs: Errors) -> None:
    """Regular containers: at least one, unique names, probes and hooks, no restartPolicy."""
    if not containers:
        errs.append(required(path))
        return
    seen: set[str] = set()
    for item_path, container in containers:
        validate_container_common(container, volumes, item_path, errs)
        name = str_at(container, "name", item_path, [])
        if name in seen:
            errs.append(duplicate(child(item_path, "name"), name))
        seen.add(name)
        if container.get("lifecycle") is not None:
            _validate_lifecycle(container, item_path, errs)
        for probe_name in _PROBES:
            _validate_probe(container, probe_name, item_path, errs)
        if container.get("restartPolicy") is not None:
            errs.append(forbidden(child(item_path, "restartPolicy"), "may not be set for non-init containers"))


def validate_init_containers(init: list[tuple[str, dict[str, Any]]], regular: list[tuple[str, dict[str, Any]]],
                             volumes: set[str], errs: Errors) -> None:
    """Init containers: names unique across both lists; probes and hooks only when restartable."""
    seen = {str_at(c, "name", "", []) for _, c in regular}
    for item_path, container in init:
        validate_container_common(container, volumes, item_path, errs)
        restart_always = False
        if container.get("restartPolicy") is not None:
            policy = str_at(container, "restartPolicy", item_path, errs)
            if policy != "Always":
                errs.append(not_supported(child(item_path, "restartPolicy"), policy, ["Always"]))
            restart_always = policy == "Always"
        name = str_at(container, "name", item_path, [])
        if name in seen:
            errs.append(duplicate(child(item_path, "name"), name))
        elif name:
            seen.add(name)
        if restart_always:
            if container.get("lifecycle") is not None:
                _validate_lifecycle(container, item_path, errs)
            for probe_name in _PROBES:
                _validate_probe(container, probe_name, item_path, errs)
        else:
            for field_name in ("lifecycle", *_PROBES):
                if container.get(field_name) is not None:
                    errs.append(forbidden(child(item_path, field_name),
                                          "may not be set for init containers without restartPolicy=Always"))


def image_whitespace_errors(containers: list[tuple[str, dict[str, Any]]]) -> Errors:
    """Pods only (not templates): images may not have leading or trailing whitespace."""
    errs: Errors = []
    for item_path, container in containers:
        image = container.get("image")
        if isinstance(image, str) and image != image.strip():
            errs.append(invalid(child(item_path, "image"), image, "must not have leading or trailing whitespace"))
    return errs

