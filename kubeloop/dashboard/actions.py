"""What the dashboard's pause, resume and undo buttons do, decided without I/O.

The page's buttons (see :mod:`kubeloop.dashboard.actionroutes` for the routes) act with the
dashboard's own client, so the page must prove it may: it presents the cluster's bearer token
(``Authorization: Bearer ...``), which :func:`check_bearer` compares in constant time
(:func:`hmac.compare_digest`) with the token the dashboard's client uses. A dashboard whose
client has no static token (client certificates, exec plugins) cannot check one: its actions
are disabled (403).

Pause and resume set ``spec.paused`` (Deployment) or ``spec.updateStrategy.paused`` (CloneSet),
as ``kubectl rollout pause|resume`` and ``kubectl-kruise rollout pause|resume`` do, answering
``already paused`` / ``already resumed`` when there is nothing to change.

Undo follows ``kubectl rollout undo`` without ``--to-revision`` (upstream:
staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollback.go, ``DeploymentRollbacker.Rollback``,
``deploymentRevision``, ``getDeploymentPatch``, ``equalIgnoreHash``, ``annotationsToSkip``):

- Deployment: the previous revision is the ReplicaSet with the second-highest
  ``deployment.kubernetes.io/revision``; none is ``no rollout history found for deployment
  "NAME"``; a paused Deployment is refused; a template already equal (ignoring
  ``pod-template-hash``) is skipped, with kubectl's message, which names ``--to-revision``'s
  value (0); otherwise a JSON patch replaces ``spec.template`` with the ReplicaSet's template
  minus ``pod-template-hash``, and ``metadata.annotations`` with the Deployment's own
  revision-bookkeeping annotations plus the ReplicaSet's other ones.
- CloneSet (as kubectl does for revision-history workloads, ``StatefulSetRollbacker``): the
  ControllerRevision with the second-highest ``revision``; fewer than two is ``no last revision
  to roll back to``; a template already equal is skipped; otherwise ``spec.template`` is
  replaced by the revision's template.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kubeloop.api.meta import name_of
from kubeloop.controllers.cloneset.revisions import template_from_revision
from kubeloop.controllers.cloneset.spec import is_paused as cloneset_paused
from kubeloop.controllers.deployment.annotations import REVISION, RevisionError, revision_of
from kubeloop.controllers.deployment.objects import is_paused as deployment_paused
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH

Obj = Mapping[str, Any]

DEPLOYMENT = "Deployment"
CLONESET = "CloneSet"
RESOURCE_NAMES = {DEPLOYMENT: "deployment.apps", CLONESET: "cloneset.apps.kruise.io"}
"""How kubectl names each kind in its messages (``deployment.apps/web rolled back``)."""

ANNOTATIONS_TO_SKIP = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
})
"""Kept from the Deployment, never copied from the ReplicaSet (kubectl's ``annotationsToSkip``)."""


class Action(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    UNDO = "undo"


class TokenVerdict(StrEnum):
    OK = "ok"
    MISSING = "missing"
    WRONG = "wrong"
    DISABLED = "disabled"


def check_bearer(expected: str | None, authorization: str | None) -> TokenVerdict:
    """Whether an ``Authorization`` header carries ``expected`` as its bearer token."""
    if not expected:
        return TokenVerdict.DISABLED
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return TokenVerdict.MISSING
    # Constant time: how long the comparison takes says nothing about how much of the token matched.
    if hmac.compare_digest(given.strip().encode(), expected.encode()):
        return TokenVerdict.OK
    return TokenVerdict.WRONG


class ActionError(Exception):
    """The action cannot be done; the message is kubectl's (or says why in its words)."""


@dataclass(frozen=True)
class Plan:
    """What to send: a patch (``None``: nothing to change) of ``patch_type``, and the message to show."""

    patch: dict[str, Any] | list[dict[str, Any]] | None
    patch_type: str
    message: str


def is_paused(kind: str, workload: Obj) -> bool:
    return cloneset_paused(workload) if kind == CLONESET else deployment_paused(workload)


def pause_plan(kind: str, workload: Obj, paused: bool) -> Plan:
    """Pause (``paused``) or resume a workload, as ``kubectl rollout pause|resume`` does."""
    verb = "paused" if paused else "resumed"
    ref = f"{RESOURCE_NAMES[kind]}/{name_of(workload)}"
    if is_paused(kind, workload) == paused:
        return Plan(None, "merge", f"{ref} already {verb}")
    patch = ({"spec": {"updateStrategy": {"paused": paused}}} if kind == CLONESET
             else {"spec": {"paused": paused}})
    return Plan(patch, "merge", f"{ref} {verb}")


def _without_hash(template: Obj) -> dict[str, Any]:
    copy = dict(template)
    metadata = dict(copy.get("metadata") or {})
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k != POD_TEMPLATE_HASH}
    if labels:
        metadata["labels"] = labels
    else:
        metadata.pop("labels", None)
    copy["metadata"] = metadata
    return copy


def _semantic(template: Obj) -> dict[str, Any]:
    # Go's Semantic.DeepEqual cannot tell an absent map from an empty one after decoding: neither do we.
    def prune(value: Any) -> Any:
        if isinstance(value, Mapping):
            pruned = {k: prune(v) for k, v in value.items()}
            return {k: v for k, v in pruned.items() if v not in ({}, [], None)}
        if isinstance(value, list):
            return [prune(v) for v in value]
        return value

    result: dict[str, Any] = prune(template)
    return result


def _previous(candidates: Sequence[tuple[int, Obj]]) -> Obj | None:
    ordered = sorted(candidates, key=lambda pair: pair[0], reverse=True)
    return ordered[1][1] if len(ordered) >= 2 else None


def deployment_undo_plan(deployment: Obj, replica_sets: Sequence[Obj]) -> Plan:
    """``kubectl rollout undo deployment/NAME``: ``replica_sets`` are those the Deployment controls."""
    revisions: list[tuple[int, Obj]] = []
    for rs in replica_sets:
        try:
            revisions.append((revision_of(rs), rs))
        except RevisionError:
            continue  # kubectl skips a ReplicaSet whose revision it cannot read
    previous = _previous(revisions)
    name = name_of(deployment)
    if previous is None:
        raise ActionError(f'no rollout history found for deployment "{name}"')
    if deployment_paused(deployment):
        raise ActionError("you cannot rollback a paused deployment; resume it first with "
                          "'kubectl rollout resume' and try again")
    template = (previous.get("spec") or {}).get("template") or {}
    current = (deployment.get("spec") or {}).get("template") or {}
    ref = f"{RESOURCE_NAMES[DEPLOYMENT]}/{name}"
    if _semantic(_without_hash(template)) == _semantic(_without_hash(current)):
        return Plan(None, "json", f"{ref} skipped rollback (current template already matches revision 0)")
    own = (deployment.get("metadata") or {}).get("annotations") or {}
    annotations = {k: v for k, v in own.items() if k in ANNOTATIONS_TO_SKIP}
    annotations.update({k: v for k, v in ((previous.get("metadata") or {}).get("annotations") or {}).items()
                        if k not in ANNOTATIONS_TO_SKIP})
    patch = [
        {"op": "replace", "path": "/spec/template", "value": _without_hash(template)},
        {"op": "replace", "path": "/metadata/annotations", "value": annotations},
    ]
    return Plan(patch, "json", f"{ref} rolled back")


def cloneset_undo_plan(cloneset: Obj, revisions: Sequence[Obj]) -> Plan:
    """``rollout undo`` for a CloneSet: ``revisions`` are the ControllerRevisions it controls."""
    numbered = [(int(r.get("revision") or 0), r) for r in revisions]
    previous = _previous(numbered)
    if previous is None:
        raise ActionError("no last revision to roll back to")
    template = template_from_revision(previous)
    current = (cloneset.get("spec") or {}).get("template") or {}
    ref = f"{RESOURCE_NAMES[CLONESET]}/{name_of(cloneset)}"
    if _semantic(template) == _semantic(current):
        return Plan(None, "json", f"{ref} skipped rollback (current template already matches revision 0)")
    return Plan([{"op": "replace", "path": "/spec/template", "value": template}], "json", f"{ref} rolled back")


def plan(kind: str, action: Action, workload: Obj, history: Sequence[Obj]) -> Plan:
    """The plan for ``action`` on ``workload`` (``history``: its ReplicaSets or ControllerRevisions)."""
    if action is Action.UNDO:
        return cloneset_undo_plan(workload, history) if kind == CLONESET else deployment_undo_plan(workload, history)
    return pause_plan(kind, workload, action is Action.PAUSE)
