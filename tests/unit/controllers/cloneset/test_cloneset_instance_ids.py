"""Instance ids of new pods under every state the informers can show after pods are deleted.

The CloneSet e2e scenario ``test_e17_pvc_reuse_then_disable`` deletes every pod of a CloneSet
with PVCs, with ``disablePVCReuse`` off and then on. Between the deletion and the replacement
the controller's caches can show each old pod active (deletion not seen yet), terminating,
finished or gone, in any mix, and the CloneSet with either setting (its watch is separate from
the pods'). This table runs the reconcile's pure path for every such mix -- the active /
inactive split, :func:`~kubeloop.controllers.cloneset.scale.pvc_cleanup` when reuse is
disabled, then :func:`~kubeloop.controllers.cloneset.scaleplan.plan_scale` -- and checks the
ids of the pods it creates against upstream's rules (kruise v1.8.4
``cloneset_controller.go`` ``cleanupPVCs``, ``sync/cloneset_scale.go`` ``getOrGenAvailableIDs``):

- reuse disabled: no new pod gets an id of an old pod, whatever its state; each PVC without an
  active pod is handed to its inactive pod or, with no pod left, deleted;
- reuse enabled: the ids of PVCs without an *active* pod come first (also those of terminating
  pods: upstream lists only active pods there, so such a creation meets ``AlreadyExists`` until
  the old pod is gone and is retried), fresh ids after them.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.api.pods import is_pod_active
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.scale import pvc_cleanup
from kubeloop.controllers.cloneset.scaleplan import plan_scale

Obj = dict[str, Any]
OLD_IDS = ("id-a", "id-b", "id-c", "id-d")
STATES = ("active", "terminating", "finished", "gone")
TEMPLATES = ("data-vol1", "data-vol2")


def cloneset(disable_reuse: bool) -> Obj:
    cs = make_cloneset(len(OLD_IDS), name="e2e")
    cs["spec"]["scaleStrategy"]["disablePVCReuse"] = disable_reuse
    cs["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": t}, "spec": {}} for t in TEMPLATES]
    return cs


def old_pod(instance_id: str, state: str) -> Obj:
    pod = make_pod(f"e2e-{instance_id}", labels={kruise.INSTANCE_ID_LABEL: instance_id},
                   phase="Succeeded" if state == "finished" else None)
    if state == "terminating":
        pod["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z"
    return pod


def claim(template: str, instance_id: str) -> Obj:
    return {"metadata": {"name": f"{template}-e2e-{instance_id}", "labels": {kruise.INSTANCE_ID_LABEL: instance_id}}}


def created_ids(cs: Obj, owned: list[Obj], claims: list[Obj]) -> tuple[list[str], Any]:
    """The reconcile's pure path: the ids of the pods the Scale step creates, and the cleanup."""
    active = [p for p in owned if is_pod_active(p)]
    inactive = [p for p in owned if not is_pod_active(p)]
    cleanup = None
    if cs["spec"]["scaleStrategy"]["disablePVCReuse"]:
        cleanup = pvc_cleanup(active, inactive, claims)
        claims = [dict(c) for c in cleanup.keep]
    plan = plan_scale(cs, cs, active, claims, "rev", "rev", now=NOW, gates=CloneSetFeatureGates(),
                      rng=random.Random(0))
    ids = [c.pod["metadata"]["labels"][kruise.INSTANCE_ID_LABEL] for c in plan.creations]
    return ids, cleanup


MIXES = list(itertools.product(STATES, repeat=len(OLD_IDS)))


@pytest.mark.parametrize("disable_reuse", [True, False])
def test_new_ids_for_every_mix_of_old_pod_states(disable_reuse: bool) -> None:
    cs = cloneset(disable_reuse)
    for mix in MIXES:
        states = dict(zip(OLD_IDS, mix))
        owned = [old_pod(i, s) for i, s in states.items() if s != "gone"]
        claims = [claim(t, i) for i in OLD_IDS for t in TEMPLATES]
        ids, cleanup = created_ids(cs, owned, claims)
        live = {i for i, s in states.items() if s == "active"}
        without_active_pod = sorted(set(OLD_IDS) - live)
        assert len(ids) == len(without_active_pod), mix
        assert not set(ids) & live, mix
        if disable_reuse:
            assert cleanup is not None
            assert not set(ids) & set(OLD_IDS), mix
            handed = {(c["metadata"]["name"], p["metadata"]["name"]) for c, p in cleanup.reown}
            assert handed == {(f"{t}-e2e-{i}", f"e2e-{i}") for i, s in states.items()
                              if s in ("terminating", "finished") for t in TEMPLATES}, mix
            assert {c["metadata"]["name"] for c in cleanup.delete} == {
                f"{t}-e2e-{i}" for i, s in states.items() if s == "gone" for t in TEMPLATES}, mix
            assert {c["metadata"]["name"] for c in cleanup.keep} == {
                f"{t}-e2e-{i}" for i in live for t in TEMPLATES}, mix
        else:
            assert sorted(ids) == without_active_pod, mix


def test_claims_of_a_new_id_are_created_with_its_pod() -> None:
    cs = cloneset(disable_reuse=True)
    owned = [old_pod("id-a", "terminating")]
    claims = [claim(t, "id-a") for t in TEMPLATES]
    active = [p for p in owned if is_pod_active(p)]
    cleanup = pvc_cleanup(active, owned, claims)
    plan = plan_scale(cs, cs, active, [dict(c) for c in cleanup.keep], "rev", "rev", now=NOW,
                      gates=CloneSetFeatureGates(), rng=random.Random(0))
    for creation in plan.creations:
        instance_id = creation.pod["metadata"]["labels"][kruise.INSTANCE_ID_LABEL]
        assert sorted(c["metadata"]["name"] for c in creation.pvcs) == [f"{t}-e2e-{instance_id}" for t in TEMPLATES]
        volumes = {v["persistentVolumeClaim"]["claimName"] for v in creation.pod["spec"]["volumes"]
                   if "persistentVolumeClaim" in v}
        assert volumes == {f"{t}-e2e-{instance_id}" for t in TEMPLATES}
