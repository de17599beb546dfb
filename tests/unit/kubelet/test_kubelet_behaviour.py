"""The ``sim.kubeloop.io/*`` annotations, read into a pod's behaviour."""

from typing import Any

import pytest

from kubeloop.kubelet.behaviour import BehaviourDefaults, PodBehaviour, pod_behaviour

DEFAULTS = BehaviourDefaults(start_delay=2.0, ready_delay=3.0, termination_delay=1.0)


def pod(annotations: dict[str, Any] | None) -> dict[str, Any]:
    return {"metadata": {"name": "p", "annotations": annotations} if annotations is not None else {"name": "p"}}


@pytest.mark.parametrize(
    ("annotations", "expected", "ignored"),
    [
        (None, PodBehaviour(2.0, 3.0, 1.0), []),
        ({}, PodBehaviour(2.0, 3.0, 1.0), []),
        ({"sim.kubeloop.io/start-delay": "0.25"}, PodBehaviour(0.25, 3.0, 1.0), []),
        ({"sim.kubeloop.io/ready-delay": "10"}, PodBehaviour(2.0, 10.0, 1.0), []),
        ({"sim.kubeloop.io/termination-delay": "0"}, PodBehaviour(2.0, 3.0, 0.0), []),
        ({"sim.kubeloop.io/never-ready": "true"}, PodBehaviour(2.0, 3.0, 1.0, never_ready=True), []),
        ({"sim.kubeloop.io/never-ready": "True"}, PodBehaviour(2.0, 3.0, 1.0, never_ready=True), []),
        ({"sim.kubeloop.io/never-ready": "false"}, PodBehaviour(2.0, 3.0, 1.0), []),
        ({"sim.kubeloop.io/crash-loop": "true"}, PodBehaviour(2.0, 3.0, 1.0, crash_loop=True), []),
        ({"sim.kubeloop.io/image-pull-error": "true"}, PodBehaviour(2.0, 3.0, 1.0, image_pull_error=True), []),
        # Bad values fall back to the default and are reported, never raised.
        ({"sim.kubeloop.io/start-delay": "-1"}, PodBehaviour(2.0, 3.0, 1.0), ["sim.kubeloop.io/start-delay=-1"]),
        ({"sim.kubeloop.io/ready-delay": "soon"}, PodBehaviour(2.0, 3.0, 1.0), ["sim.kubeloop.io/ready-delay=soon"]),
        ({"sim.kubeloop.io/ready-delay": "nan"}, PodBehaviour(2.0, 3.0, 1.0), ["sim.kubeloop.io/ready-delay=nan"]),
        ({"sim.kubeloop.io/crash-loop": "yes"}, PodBehaviour(2.0, 3.0, 1.0), ["sim.kubeloop.io/crash-loop=yes"]),
        # Other annotations are none of the kubelet's business.
        ({"example.com/start-delay": "9"}, PodBehaviour(2.0, 3.0, 1.0), []),
    ],
)
def test_pod_behaviour(annotations: dict[str, Any] | None, expected: PodBehaviour, ignored: list[str]) -> None:
    assert pod_behaviour(pod(annotations), DEFAULTS) == (expected, ignored)


def test_pod_behaviour_does_not_modify_the_pod() -> None:
    original = pod({"sim.kubeloop.io/start-delay": "bad"})
    snapshot = {"metadata": {"name": "p", "annotations": {"sim.kubeloop.io/start-delay": "bad"}}}
    pod_behaviour(original, DEFAULTS)
    assert original == snapshot
