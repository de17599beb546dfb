"""When kube-controller-manager's leader Lease says it runs, and which kubeloop controllers clash with it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.controllers.coexistence import conflicting, lease_holder, refusal

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


def lease(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "kube-controller-manager", "namespace": "kube-system"}, "spec": spec}


@pytest.mark.parametrize(("obj", "holder"), [
    (None, None),
    (lease(), None),
    (lease(holderIdentity=""), None),
    # renewed 5 s ago for 15 s: held
    (lease(holderIdentity="cp-1_abc", renewTime="2026-05-01T11:59:55.000000Z", leaseDurationSeconds=15), "cp-1_abc"),
    # renewed 20 s ago for 15 s: expired, a new leader may take it
    (lease(holderIdentity="cp-1_abc", renewTime="2026-05-01T11:59:40.000000Z", leaseDurationSeconds=15), None),
    # exactly at expiry: expired (a candidate may take over at renewTime + duration)
    (lease(holderIdentity="cp-1_abc", renewTime="2026-05-01T11:59:45Z", leaseDurationSeconds=15), None),
    # never renewed: acquireTime counts
    (lease(holderIdentity="cp-1_abc", acquireTime="2026-05-01T11:59:58.5Z", leaseDurationSeconds=15), "cp-1_abc"),
    # held with unreadable times: held (refusing is the safe side)
    (lease(holderIdentity="cp-1_abc", renewTime="yesterday", leaseDurationSeconds=15), "cp-1_abc"),
    (lease(holderIdentity="cp-1_abc"), "cp-1_abc"),
])
def test_lease_holder(obj: dict[str, Any] | None, holder: str | None) -> None:
    assert lease_holder(obj, NOW) == holder


def test_conflicting_names_the_controllers_kube_controller_manager_also_runs() -> None:
    assert conflicting(["cloneset", "endpoint", "clusterroleaggregation", "endpointslice"]) == []
    assert conflicting(["cloneset", "garbagecollector", "replicaset", "deployment"]) == [
        "garbagecollector", "replicaset", "deployment"]


def test_refusal_says_why_and_how_to_override() -> None:
    text = refusal(["cloneset", "deployment"], "cp-1_abc")
    assert "kube-system/kube-controller-manager" in text and "'cp-1_abc'" in text
    assert "deployment controller" in text and "cloneset" not in text.split("fight")[0]
    assert "--force" in text
