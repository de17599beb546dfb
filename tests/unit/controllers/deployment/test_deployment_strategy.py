"""maxSurge / maxUnavailable resolution and the new ReplicaSet size (upstream
``deployment/util/deployment_util.go`` ``ResolveFenceposts``, ``MaxSurge``, ``MaxUnavailable``, ``MinAvailable``,
``NewRSNewReplicas``)."""

from __future__ import annotations

from typing import Any

import pytest
from deployment_builders import deployment, replica_set

from kubeloop.api.intstr import IntOrPercentError
from kubeloop.controllers.deployment.strategy import (
    UnsupportedStrategyError,
    max_surge,
    max_unavailable,
    min_available,
    new_replica_set_replicas,
    resolve_fenceposts,
)


@pytest.mark.parametrize(
    ("strategy", "replicas", "new_size", "surge", "expected"),
    [
        ("RollingUpdate", 1, 5, 1, 5),  # 5 pods already >= 1 + 1: keep the current size
        ("RollingUpdate", 6, 2, 10, 6),  # room 16 - 5 = 11, capped at 6 - 2 = 4 more
        ("Recreate", 3, 1, 1, 3),  # always the full size
    ],
)
def test_new_replica_set_replicas(strategy: str, replicas: int, new_size: int, surge: int, expected: int) -> None:
    d = deployment(replicas, strategy="RollingUpdate", max_surge=surge, max_unavailable=1)
    d["spec"]["strategy"]["type"] = strategy
    others = [replica_set("other", 5)]
    assert new_replica_set_replicas(d, others, replica_set("new", new_size)) == expected


def test_new_replica_set_replicas_rejects_unknown_strategy_and_bad_surge() -> None:
    with pytest.raises(UnsupportedStrategyError):
        new_replica_set_replicas(deployment(3, strategy="BlueGreen"), [], replica_set("new", 0))
    with pytest.raises(IntOrPercentError):
        new_replica_set_replicas(deployment(3, max_surge="lots"), [], replica_set("new", 0))


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("0%", "0%", 0, (0, 1)),
        ("39%", "39%", 10, (4, 3)),  # 3.9 rounds up for surge, down for unavailable
        (None, "39%", 10, (0, 3)),
        ("39%", None, 10, (4, 0)),
        (None, None, 10, (0, 1)),  # both zero: one pod may be unavailable
        (3, "25%", 10, (3, 2)),
        ("25%", "25%", 1, (1, 0)),
        (0, "10%", 3, (0, 1)),
    ],
)
def test_resolve_fenceposts(surge: Any, unavailable: Any, desired: int, expected: tuple[int, int]) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize(("surge", "unavailable"), [("oops", "39%"), ("55%", "urg"), ("5.5%", 1)])
def test_resolve_fenceposts_rejects_malformed_values(surge: Any, unavailable: Any) -> None:
    with pytest.raises(IntOrPercentError):
        resolve_fenceposts(surge, unavailable, 10)


@pytest.mark.parametrize(
    ("replicas", "unavailable", "expected"),
    [(10, 5, 5), (10, 10, 10), (5, 10, 5), (0, 10, 0), (10, "50%", 5), (10, "100%", 10), (5, "100%", 5)],
)
def test_max_unavailable(replicas: int, unavailable: Any, expected: int) -> None:
    assert max_unavailable(deployment(replicas, max_surge=1, max_unavailable=unavailable)) == expected


@pytest.mark.parametrize(
    ("replicas", "unavailable", "expected"),
    [(10, 5, 5), (10, 10, 0), (5, 10, 0), (0, 10, 0), (10, "60%", 4), (10, "100%", 0), (5, "100%", 0)],
)
def test_min_available(replicas: int, unavailable: Any, expected: int) -> None:
    assert min_available(deployment(replicas, max_surge=1, max_unavailable=unavailable)) == expected


def test_recreate_has_no_budgets() -> None:
    recreate = deployment(10, strategy="Recreate")
    assert (max_surge(recreate), max_unavailable(recreate), min_available(recreate)) == (0, 0, 0)


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [(10, "25%", "25%", (3, 2)), (1, "25%", "25%", (1, 0)), (3, 0, "10%", (0, 1)), (10, "oops", 2, (0, 0))],
)
def test_budgets_of_a_deployment(replicas: int, surge: Any, unavailable: Any, expected: tuple[int, int]) -> None:
    d = deployment(replicas, max_surge=surge, max_unavailable=unavailable)
    assert (max_surge(d), max_unavailable(d)) == expected
