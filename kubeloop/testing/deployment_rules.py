"""Pure rules a Deployment rollout must obey, as the invariant monitor evaluates them.

These restate upstream's rolling-update guarantees (``pkg/controller/deployment/rolling.go``,
``util/deployment_util.go``; test/utils/deployment.go ``checkRollingUpdateStatus``) as checks on one
consistent snapshot of a Deployment, its ReplicaSets and their pods (and, for the "only grows / only
shrinks" rules, the previous state of one ReplicaSet). They are written from the upstream semantics, not
from kubeloop's controller code, so that the monitor does not inherit the controller's bugs: the surge
and unavailability resolution, the template comparison and the completeness test are computed here
again.

Every function is pure: it takes plain dicts and returns numbers, booleans or a list of
human-readable problems (empty when the rule holds).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.api.intstr import IntOrPercentError, scaled_value

Obj = dict[str, Any]

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
DEFAULT_SURGE = "25%"
DEFAULT_UNAVAILABLE = "25%"


@dataclass(frozen=True)
class RolloutBounds:
    """What one generation of a Deployment spec allows: ``R``, ``S`` (maxSurge), ``U`` (maxUnavailable)."""

    replicas: int
    max_surge: int
    max_unavailable: int
    recreate: bool
    paused: bool
    template: Mapping[str, Any]

    @property
    def max_total(self) -> int:
        """``R + S``: the most replicas all ReplicaSets may ask for together."""
        return self.replicas + self.max_surge

    @property
    def min_available(self) -> int:
        """``R - U``: the availability floor of a rolling update."""
        return self.replicas - self.max_unavailable


def bounds_of(deployment: Mapping[str, Any]) -> RolloutBounds:
    """Resolve a Deployment spec the way upstream does.

    maxSurge rounds up, maxUnavailable rounds down, both 0 means maxUnavailable 1 (the
    fencepost), maxUnavailable is clamped to ``R`` and is 0 when ``R`` is 0. Recreate has
    neither (upstream's ``MaxSurge`` and ``MaxUnavailable`` are 0 for it, so its Available
    condition needs every replica). Unparseable values count as 0 (the server rejects them).
    """
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    strategy = spec.get("strategy") or {}
    recreate = strategy.get("type") == "Recreate"
    template = spec.get("template") or {}
    paused = bool(spec.get("paused"))
    if recreate:
        return RolloutBounds(replicas, 0, 0, True, paused, template)
    rolling = strategy.get("rollingUpdate") or {}
    surge = _resolve(rolling.get("maxSurge", DEFAULT_SURGE), replicas, round_up=True)
    unavailable = _resolve(rolling.get("maxUnavailable", DEFAULT_UNAVAILABLE), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    unavailable = 0 if replicas == 0 else min(unavailable, replicas)
    return RolloutBounds(replicas, surge, unavailable, False, paused, template)


def _resolve(value: Any, total: int, *, round_up: bool) -> int:
    try:
        return scaled_value(value, total, round_up)
    except IntOrPercentError:
        return 0


def template_without_hash(template: Mapping[str, Any]) -> Obj:
    """A copy of a pod template without the ``pod-template-hash`` label (an empty label map dropped)."""
    result: Obj = copy.deepcopy(dict(template))
    metadata = dict(result.get("metadata") or {})
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k != POD_TEMPLATE_HASH}
    if labels:
        metadata["labels"] = labels
    else:
        metadata.pop("labels", None)
    if metadata:
        result["metadata"] = metadata
    else:
        result.pop("metadata", None)
    return result


def without_empties(value: Any) -> Any:
    """``value`` with nulls, empty maps and empty lists removed at every depth (``None`` if
    nothing is left): Go's semantic equality does not tell a nil field from an empty one, and
    clients such as kubectl send ``"creationTimestamp": null`` inside templates."""
    if isinstance(value, Mapping):
        kept = {k: v for k, v in ((k, without_empties(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        return [without_empties(v) for v in value] or None
    return value


def same_template(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Templates equal ignoring ``pod-template-hash`` (upstream's ``EqualIgnoreHash``), nulls
    and empty collections counting as absent."""
    return bool(without_empties(template_without_hash(a)) == without_empties(template_without_hash(b)))


def spec_replicas(obj: Mapping[str, Any]) -> int:
    return int((obj.get("spec") or {}).get("replicas", 1))


def revision_of(obj: Mapping[str, Any]) -> int | None:
    """The revision annotation as an int; ``None`` when absent or not a number."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def creation_order(rs: Mapping[str, Any]) -> tuple[str, str]:
    metadata = rs.get("metadata") or {}
    return str(metadata.get("creationTimestamp") or ""), str(metadata.get("name") or "")


def new_replica_set(replica_sets: Iterable[Mapping[str, Any]], template: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The oldest ReplicaSet whose template equals ``template`` ignoring the hash (I5)."""
    matching = sorted((rs for rs in replica_sets if same_template((rs.get("spec") or {}).get("template") or {},
                                                                   template)), key=creation_order)
    return matching[0] if matching else None


def is_complete(deployment: Mapping[str, Any]) -> bool:
    """Upstream's ``DeploymentComplete`` plus the generation check (I7)."""
    status = deployment.get("status") or {}
    replicas = spec_replicas(deployment)
    generation = int((deployment.get("metadata") or {}).get("generation") or 0)
    return (status.get("updatedReplicas", 0) == replicas and status.get("replicas", 0) == replicas
            and status.get("availableReplicas", 0) == replicas
            and int(status.get("observedGeneration") or 0) >= generation)


def status_problems(kind: str, status: Mapping[str, Any], generation: int) -> list[str]:
    """Status bookkeeping (I10): counters ordered, observedGeneration not ahead of generation."""
    problems = []
    replicas = int(status.get("replicas") or 0)
    ready = int(status.get("readyReplicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    if not available <= ready <= replicas:
        problems.append(f"{kind} status counters out of order: available {available}, ready {ready}, "
                        f"replicas {replicas}")
    updated = status.get("updatedReplicas")
    if updated is not None and int(updated) > replicas:
        problems.append(f"{kind} status updatedReplicas {updated} > replicas {replicas}")
    labelled = status.get("fullyLabeledReplicas")
    if labelled is not None and int(labelled) > replicas:
        problems.append(f"{kind} status fullyLabeledReplicas {labelled} > replicas {replicas}")
    if int(status.get("unavailableReplicas") or 0) < 0:
        problems.append(f"{kind} status unavailableReplicas is negative")
    observed = int(status.get("observedGeneration") or 0)
    if observed > generation:
        problems.append(f"{kind} status observedGeneration {observed} > generation {generation}")
    return problems


def available_condition_problem(status: Mapping[str, Any], bounds: RolloutBounds) -> str | None:
    """The Available condition must say whether ``availableReplicas >= R - U`` of the observed spec."""
    condition = next((c for c in status.get("conditions") or () if c.get("type") == "Available"), None)
    if condition is None:
        return None
    expected = "True" if int(status.get("availableReplicas") or 0) >= bounds.min_available else "False"
    if condition.get("status") != expected:
        return (f"Available condition is {condition.get('status')} ({condition.get('reason')}) with "
                f"{status.get('availableReplicas', 0)} available and minAvailable {bounds.min_available}")
    return None


def controller_ref_problems(obj: Mapping[str, Any], owner_uid: str) -> list[str]:
    """I11: exactly one controller reference, to ``owner_uid``, blocking owner deletion."""
    refs = [r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")]
    name = (obj.get("metadata") or {}).get("name")
    if len(refs) != 1:
        return [f"{name} has {len(refs)} controller references"]
    if refs[0].get("uid") != owner_uid:
        return [f"{name} is controlled by {refs[0].get('uid')}, not {owner_uid}"]
    if refs[0].get("blockOwnerDeletion") is not True:
        return [f"{name}'s controller reference does not block owner deletion"]
    return []


def hash_label_problems(rs: Mapping[str, Any], deployment_name: str) -> list[str]:
    """A ReplicaSet the Deployment created: named ``<deployment>-<hash>``, the hash on its labels,
    selector and template labels alike (upstream ``sync.go`` ``getNewReplicaSet``)."""
    metadata = rs.get("metadata") or {}
    spec = rs.get("spec") or {}
    name = str(metadata.get("name") or "")
    values = {
        "labels": (metadata.get("labels") or {}).get(POD_TEMPLATE_HASH),
        "selector": ((spec.get("selector") or {}).get("matchLabels") or {}).get(POD_TEMPLATE_HASH),
        "template labels": (((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(
            POD_TEMPLATE_HASH),
    }
    problems = [f"{name} has no pod-template-hash in its {where}" for where, value in values.items() if not value]
    if len(set(values.values())) > 1:
        problems.append(f"{name} has differing pod-template-hash values {values}")
    hash_value = values["selector"]
    if hash_value and name != f"{deployment_name}-{hash_value}":
        problems.append(f"{name} is not named {deployment_name}-{hash_value}")
    return problems


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: Mapping[str, Any]) -> bool:
    """Neither finished nor being deleted: what a ReplicaSet counts in ``status.replicas``."""
    return not is_terminal(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp")


def is_ready(pod: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())
