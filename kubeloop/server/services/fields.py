"""Field selectors of Services: ``spec.clusterIP`` and ``spec.type`` beside the name and
namespace, as upstream's ``ServiceSelectableFields``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def service_fields(service: Mapping[str, Any]) -> dict[str, str]:
    spec = service.get("spec")
    if not isinstance(spec, Mapping):
        spec = {}
    return {"spec.clusterIP": str(spec.get("clusterIP") or ""), "spec.type": str(spec.get("type") or "")}
