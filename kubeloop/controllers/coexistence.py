"""Whether kube-controller-manager already runs the controllers kubeloop is asked to start.

kubeloop's ReplicaSet, Deployment and garbage collector controllers do what
kube-controller-manager's do, on the same objects: in a cluster whose own manager runs, two
controllers would fight over every ReplicaSet (one creating the pods the other deletes) and
two garbage collectors would race. kube-controller-manager holds the Lease
``kube-system/kube-controller-manager`` while it leads (``--leader-elect``, on by default; the
lock of kubernetes ``cmd/kube-controller-manager/app/controllermanager.go``), so a held Lease is
the sign it runs. A Lease is held when it names a holder and its last renewal plus its duration
lies in the future (client-go ``tools/leaderelection``: a candidate may take over only after
``renewTime + leaseDurationSeconds``).

The functions here are pure; ``kubeloop controllers`` reads the Lease and asks them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

KCM_LEASE_NAMESPACE = "kube-system"
KCM_LEASE_NAME = "kube-controller-manager"

KCM_CONTROLLERS = ("replicaset", "deployment", "garbagecollector")
"""kubeloop controllers whose kube-controller-manager counterpart acts on the same objects."""


def conflicting(names: Iterable[str]) -> list[str]:
    """The names among ``names`` that kube-controller-manager also runs, in the order given."""
    return [name for name in names if name in KCM_CONTROLLERS]


def _parse_time(text: str) -> datetime | None:
    # MicroTime ("2026-01-02T03:04:05.123456Z") or Time ("2026-01-02T03:04:05Z").
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def lease_holder(lease: Mapping[str, Any] | None, now: datetime) -> str | None:
    """The holder of ``lease`` if it is held at ``now`` (an aware datetime), else None.

    Not held: no Lease, no ``holderIdentity``, or ``renewTime`` (``acquireTime`` when never
    renewed) plus ``leaseDurationSeconds`` not after ``now``. A held Lease whose times cannot
    be read counts as held: refusing needlessly is safer than fighting.
    """
    if not lease:
        return None
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity")
    if not holder:
        return None
    stamp = spec.get("renewTime") or spec.get("acquireTime")
    duration = spec.get("leaseDurationSeconds")
    if not isinstance(stamp, str) or not isinstance(duration, int):
        return str(holder)
    renewed = _parse_time(stamp)
    if renewed is None:
        return str(holder)
    return str(holder) if renewed + timedelta(seconds=duration) > now else None


def refusal(names: Iterable[str], holder: str) -> str:
    """Why ``kubeloop controllers`` does not start, and how to make it."""
    clash = ", ".join(conflicting(names))
    return (f"kube-controller-manager runs in this cluster (it holds the Lease {KCM_LEASE_NAMESPACE}/{KCM_LEASE_NAME}, "
            f"holder {holder!r}); kubeloop's {clash} controller(s) would fight it over the same objects. "
            "Run only the controllers it does not have (e.g. --controllers cloneset), or pass --force "
            "if you have stopped its counterparts (kube-controller-manager --controllers=-replicaset,...).")
