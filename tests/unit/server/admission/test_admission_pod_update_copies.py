"""The pod spec's immutability check compares without copying: it must not change the pods it reads."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission.pods import validate_pod_update


def pod(image: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2", "uid": "u"},
            "spec": {"containers": [{"name": "c", "image": image}, {"name": "d", "image": "busybox"}],
                     "initContainers": [{"name": "i", "image": image}], **spec}}


@pytest.mark.parametrize(("new", "refused"), [
    (pod("nginx:2"), False),
    (pod("nginx:2", activeDeadlineSeconds=5), False),
    (pod("nginx:2", hostname="other"), True),
])
def test_the_check_leaves_both_pods_as_they_were(new: dict[str, Any], refused: bool) -> None:
    old = pod("nginx:1", activeDeadlineSeconds=10)
    sent, stored = copy.deepcopy(new), copy.deepcopy(old)
    errors = validate_pod_update(new, old)
    assert bool([e for e in errors if e.field == "spec"]) is refused
    assert new == sent
    assert old == stored
