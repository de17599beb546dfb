"""The cluster-scoped configuration objects kube-apiserver creates at start.

As upstream's post-start hooks: ``scheduling/bootstrap-system-priority-classes`` (the two
``system-`` PriorityClasses, ``pkg/registry/scheduling/rest``) and the APF configuration
controller's mandatory objects (``exempt`` and ``catch-all`` FlowSchemas and priority levels,
``k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap``). Each is created only when missing, so a
user's later changes to it survive restarts (upstream re-applies the mandatory flow-control
specs; that controller does not run here).
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.admission import flowcontrol, scheduling


def mandatory_objects() -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(group, version, resource, body)`` of each object, in creation order."""
    objects: list[tuple[str, str, str, dict[str, Any]]] = [
        ("scheduling.k8s.io", "v1", "priorityclasses", body) for body in scheduling.system_priority_classes()]
    for body in flowcontrol.mandatory_objects():
        resource = "flowschemas" if body["kind"] == "FlowSchema" else "prioritylevelconfigurations"
        objects.append((flowcontrol.GROUP, "v1", resource, body))
    return objects
