"""The KruisePodReadinessGate option: the readiness gate on new pods and its initial condition."""

from __future__ import annotations

from typing import Any

from cloneset_pods import NOW, make_cloneset

from kubeloop.api import kruise
from kubeloop.api.meta import format_time
from kubeloop.controllers.cloneset.lifecycle import with_initial_kruise_pod_ready, with_not_ready_key
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.scale import new_pod


def gate_types(pod: dict[str, Any]) -> list[str]:
    return [g["conditionType"] for g in pod["spec"]["readinessGates"]]


def test_new_pods_get_kruise_pod_ready_only_with_the_gate() -> None:
    cs = make_cloneset(1)
    off = new_pod(cs, "rev", "abcde", now=NOW, gates=CloneSetFeatureGates())
    on = new_pod(cs, "rev", "abcde", now=NOW, gates=CloneSetFeatureGates(kruise_pod_readiness_gate=True))
    assert gate_types(off) == [kruise.INPLACE_UPDATE_READY]
    assert gate_types(on) == [kruise.INPLACE_UPDATE_READY, kruise.KRUISE_POD_READY]


def test_template_gate_is_not_duplicated() -> None:
    cs = make_cloneset(1)
    cs["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": kruise.KRUISE_POD_READY}]
    pod = new_pod(cs, "rev", "abcde", now=NOW, gates=CloneSetFeatureGates(kruise_pod_readiness_gate=True))
    assert gate_types(pod) == [kruise.KRUISE_POD_READY, kruise.INPLACE_UPDATE_READY]


def test_initial_condition_is_true_once() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"readinessGates": [{"conditionType": kruise.KRUISE_POD_READY}]}}
    initial = with_initial_kruise_pod_ready(pod, NOW)
    assert initial is not None
    assert initial["status"]["conditions"] == [
        {"type": kruise.KRUISE_POD_READY, "status": "True", "lastTransitionTime": format_time(NOW)}
    ]
    assert "status" not in pod
    assert with_initial_kruise_pod_ready(initial, NOW) is None
    # Then markPodNotReady can turn it False (and back).
    held = with_not_ready_key(initial, "preDeleteHook", add=True, now=NOW)
    assert held is not None and held["status"]["conditions"][0]["status"] == "False"


def test_no_initial_condition_without_gate_or_while_deleting() -> None:
    assert with_initial_kruise_pod_ready({"metadata": {}, "spec": {}}, NOW) is None
    deleting = {"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"},
                "spec": {"readinessGates": [{"conditionType": kruise.KRUISE_POD_READY}]}}
    assert with_initial_kruise_pod_ready(deleting, NOW) is None
