"""What makes validating an update cheap must not change its answer.

- the pod spec's immutability check compares without copying: it must not change the pods it reads;
- label maps' errors are remembered: the same errors as checking them, in a fresh list each time.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import metadata
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


@pytest.mark.parametrize("labels", [
    {},
    {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
    {"bad key!": "x", "app": "-bad value-"},
    {"example.com/" + "k" * 70: "v" * 70},
])
def test_remembered_label_errors_are_the_errors(labels: dict[str, str]) -> None:
    path = "metadata.labels"
    expected = metadata._label_errors(labels, path)
    first = metadata.validate_labels(labels, path)
    assert first == expected
    first.append(metadata.invalid(path, "x", "changed by a caller"))
    assert metadata.validate_labels(labels, path) == expected
    assert metadata.validate_labels(labels, "spec.template.metadata.labels") == metadata._label_errors(
        labels, "spec.template.metadata.labels")


def test_label_maps_of_other_values_are_not_remembered() -> None:
    with pytest.raises((TypeError, AttributeError)):
        metadata.validate_labels({"app": ["web"]}, "spec.selector")  # type: ignore[dict-item]
