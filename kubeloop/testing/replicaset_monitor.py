"""A monitor for ReplicaSets running without a Deployment (the ReplicaSet controller alone).

It shares :class:`~kubeloop.testing.monitor.DeploymentMonitor`'s machinery (one consistent
snapshot per event, applied in resourceVersion order) and checks what the ReplicaSet
controller must keep true on its own; see :class:`ReplicaSetMonitor`.
"""

from __future__ import annotations

from kubeloop.client import ApiClient
from kubeloop.testing import deployment_rules as rules
from kubeloop.testing.deployment_rules import Obj
from kubeloop.testing.monitor import DEFAULT_HOLD_SECONDS, TRAIL_LENGTH, DeploymentMonitor, QueuedEvent, brief


class ReplicaSetMonitor(DeploymentMonitor):
    """Watches the ReplicaSets and pods of a namespace when no Deployment is involved (the
    ReplicaSet controller alone); records violations of what it must keep true:

    - I10 status bookkeeping of every ReplicaSet;
    - I11 every pod it creates carries exactly one controller reference, to its ReplicaSet,
      blocking owner deletion, and the ReplicaSet's template labels;
    - a pod is created for a ReplicaSet only while it has fewer active pods than
      ``spec.replicas`` (it never overshoots, counting the new pod).
    """

    def __init__(self, client: ApiClient, namespace: str = "default", *,
                 hold: float = DEFAULT_HOLD_SECONDS) -> None:
        super().__init__(client, "", namespace, hold=hold)

    def _apply(self, item: QueuedEvent) -> None:
        self.events += 1
        meta = item.obj.get("metadata") or {}
        label = f"{item.type} {item.kind} {meta.get('name')} rv={item.rv}"
        self.trail = [*self.trail[-(TRAIL_LENGTH - 1):], f"{label} {brief(item.kind, item.obj)}"]
        store = self._store(item.kind)
        if store is None:
            return
        name = str(meta.get("name"))
        previous = store.get(name)
        if item.type == "DELETED":
            store.pop(name, None)
            return
        store[name] = item.obj
        if item.kind == "ReplicaSet":
            generation = int(meta.get("generation") or 0)
            for problem in rules.status_problems("ReplicaSet " + name, item.obj.get("status") or {}, generation):
                self._record("I10", problem, label)
        elif item.type == "ADDED" and previous is None:
            self._check_new_pod(item.obj, label)

    def _check_new_pod(self, pod: Obj, label: str) -> None:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        rs = self.replica_sets.get(str((ref or {}).get("name")))
        if ref is None or ref.get("kind") != "ReplicaSet" or rs is None or rs["metadata"].get("uid") != ref.get("uid"):
            return
        if pod["metadata"].get("generateName") != f"{rs['metadata']['name']}-":
            # Not one of the controller's own creations (an adopted pod, made by hand).
            return
        for problem in rules.controller_ref_problems(pod, str(rs["metadata"]["uid"])):
            self._record("I11", problem, label)
        template_labels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        labels = pod["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in template_labels.items()):
            self._record("I11", f"pod {pod['metadata']['name']} lacks its template's labels", label)
        active = sum(1 for other in self.pods.values() if rules.is_active(other)
                     and any(r.get("controller") and r.get("uid") == rs["metadata"]["uid"]
                             for r in other["metadata"].get("ownerReferences") or ()))
        if active > rules.spec_replicas(rs):
            self._record("RS", f"pod {pod['metadata']['name']} makes {active} active pods for "
                               f"{rs['metadata']['name']} of {rules.spec_replicas(rs)} replicas", label)
