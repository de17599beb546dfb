"""A workload controller never creates a pod its own selector would not match.

Such a pod is lost to its owner the moment it exists: the owner's next sync does not count it
(a ReplicaSet releases it, a CloneSet never adopts it), finds a replica missing and creates
another, without bound. Admission refuses a selector that does not match the template, but an
object written around it (an older store, a direct write to storage, a webhook that was off)
reaches the controller all the same: issue #18 saw a CloneSet with an unlabelled template make
624 ownerless pods in 53 s.

kube-controller-manager's pod control refuses a template without labels (``RealPodControl``'s
``createPods`` in pkg/controller/controller_utils.go, ``unable to create pods, no labels``);
:func:`creation_refusal` adds the selector check, in the same words as apps validation
(``selector does not match template labels``). The caller records a ``FailedCreate`` Warning
with the text, marks its failure condition, and retries with back-off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.labels import Selector

NO_LABELS = "unable to create pods, no labels"
NOT_MATCHING = "unable to create pods, selector does not match template labels"


def creation_refusal(selector: Selector, labels: Any) -> str | None:
    """Why a pod with ``labels`` must not be created under ``selector``; ``None`` when it may."""
    if not isinstance(labels, Mapping) or not labels:
        return NO_LABELS
    if not all(isinstance(value, str) for value in labels.values()) or not selector.matches(labels):
        return NOT_MATCHING
    return None
