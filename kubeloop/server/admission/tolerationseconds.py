"""The DefaultTolerationSeconds admission plugin (upstream's
``plugin/pkg/admission/defaulttolerationseconds``).

Every pod written through the main endpoint (create and update, never a subresource) tolerates
the ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable`` NoExecute taints for
300 seconds, unless it already tolerates them: a toleration counts when its key is that taint's
or empty (any key) and its effect is NoExecute or empty (any effect), whatever its operator.
The missing ones are appended, not-ready first.
"""

from __future__ import annotations

from typing import Any

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def default_toleration(taint_key: str) -> dict[str, Any]:
    return {"key": taint_key, "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}


def _tolerates(tolerations: list[Any], taint_key: str) -> bool:
    for toleration in tolerations:
        if not isinstance(toleration, dict):
            continue
        key = toleration.get("key") or ""
        effect = toleration.get("effect") or ""
        if key in ("", taint_key) and effect in ("", "NoExecute"):
            return True
    return False


def add_default_tolerations(pod: dict[str, Any]) -> None:
    """Append the not-ready and unreachable tolerations ``pod`` lacks (in place)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    current = spec.get("tolerations")
    tolerations: list[Any] = current if isinstance(current, list) else []
    missing = [default_toleration(k) for k in (NOT_READY_TAINT, UNREACHABLE_TAINT) if not _tolerates(tolerations, k)]
    if missing and (current is None or isinstance(current, list)):
        spec["tolerations"] = [*tolerations, *missing]
