"""Compute resource requirements of containers: names, quantities, requests against limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import invalid, required
from kubeloop.server.admission.fields import Errors, child, key, mapping_at
from kubeloop.server.admission.quantity import QuantityError, parse_quantity, quantity_text

# Resource names without a "/" that are standard at all, and those a container may request.
_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "services.nodeports",
    "services.loadbalancers", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
})


def _resource_name_errors(name: str, path: str) -> Errors:
    errs = [invalid(path, name, m) for m in names.qualified_name_errors(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not name.startswith("hugepages-"):
            errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
        if name not in _CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    return errs


def _overcommit_allowed(name: str) -> bool:
    # Native resources (no "/" or a kubernetes.io/ prefix) other than hugepages may overcommit;
    # extended resources may not.
    native = "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")
    return native and not name.startswith("hugepages-")


def validate_resources(container: Mapping[str, Any], path: str, errs: Errors) -> None:
    """Resource names, non-negative quantities, and requests never above (or, for extended
    resources, different from) their limits."""
    res_path = child(path, "resources")
    resources = mapping_at(container, "resources", path, errs)
    parsed: dict[str, dict[str, Any]] = {"limits": {}, "requests": {}}
    for section in ("limits", "requests"):
        section_path = child(res_path, section)
        for name, raw in mapping_at(resources, section, res_path, errs).items():
            item_path = key(section_path, name)
            errs.extend(_resource_name_errors(name, item_path))
            try:
                amount = parse_quantity(raw)
            except QuantityError as exc:
                errs.append(invalid(item_path, raw, str(exc)))
                continue
            if amount < 0:
                errs.append(invalid(item_path, quantity_text(raw), "must be greater than or equal to 0"))
            parsed[section][name] = (amount, quantity_text(raw))
    lim_path = child(res_path, "limits")
    req_path = child(res_path, "requests")
    for name, (amount, text) in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None:
            if amount != limit[0] and not _overcommit_allowed(name):
                errs.append(invalid(req_path, text, f"must be equal to {name} limit of {limit[1]}"))
            elif amount > limit[0]:
                errs.append(invalid(req_path, text, f"must be less than or equal to {name} limit of {limit[1]}"))
        elif not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
