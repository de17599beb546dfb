"""The CloneSet CRD (``clonesets.apps.kruise.io``), version v1alpha1 only.

A structural ``apiextensions.k8s.io/v1`` schema of the fields the CloneSet controller serves,
with our own descriptions. Int-or-percent fields carry ``x-kubernetes-int-or-string``; the pod
template and the volumeClaimTemplates keep unknown fields (their shape is the core API's and is
checked by admission). Subresources: ``status`` and ``scale`` (so ``kubectl scale`` works).
"""

from __future__ import annotations

from typing import Any

from kubeloop.api import kruise
from kubeloop.server.crds.schema import (
    INT32,
    INT_OR_STRING,
    LABEL_SELECTOR,
    column,
    described,
    string_map,
    strings,
    top_level_schema,
)


def _lifecycle_hook(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "type": "object",
        "properties": {
            "labelsHandler": string_map("Labels whose presence (with these values) holds the pod."),
            "finalizersHandler": strings("Finalizers whose presence holds the pod."),
            "markPodNotReady": {
                "type": "boolean",
                "description": "Also mark the pod not ready (KruisePodReady) while it is held.",
            },
        },
    }


_SPEC: dict[str, Any] = {
    "description": "The desired state of the CloneSet.",
    "type": "object",
    "required": ["selector", "template"],
    "properties": {
        "replicas": described(INT32, "How many pods to run (default 1)."),
        "selector": described(LABEL_SELECTOR, "Selects the pods of this CloneSet; must match the template labels."),
        "template": {
            "description": "The pod template every pod is created from.",
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        },
        "volumeClaimTemplates": {
            "description": "PVCs created for each pod, named <template>-<cloneset>-<instance id>.",
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
        "revisionHistoryLimit": described(INT32, "How many unused ControllerRevisions to keep (default 10)."),
        "minReadySeconds": described(INT32, "Seconds a pod must be ready before it counts as available."),
        "progressDeadlineSeconds": described(
            INT32, "Seconds after which a rollout without progress is reported as ProgressDeadlineExceeded."
        ),
        "lifecycle": {
            "description": "Hooks that hold pods before deletion, before in-place update or before Normal.",
            "type": "object",
            "properties": {
                "preDelete": _lifecycle_hook("Holds a pod chosen for deletion in PreparingDelete."),
                "inPlaceUpdate": _lifecycle_hook("Holds a pod chosen for in-place update in PreparingUpdate."),
                "preNormal": _lifecycle_hook("Keeps a new pod in PreparingNormal until all hooks are present."),
            },
        },
        "scaleStrategy": {
            "description": "How the CloneSet scales.",
            "type": "object",
            "properties": {
                "podsToDelete": strings("Names of pods to delete first."),
                "maxUnavailable": described(
                    INT_OR_STRING, "Upper bound of unavailable pods while scaling up (number or percent)."
                ),
                "disablePVCReuse": {
                    "type": "boolean",
                    "description": "Do not give PVCs of vanished pods to their replacements.",
                },
            },
        },
        "updateStrategy": {
            "description": "How the CloneSet moves pods to a new template.",
            "type": "object",
            "properties": {
                "type": {"type": "string", "description": "ReCreate, InPlaceIfPossible or InPlaceOnly."},
                "partition": described(INT_OR_STRING, "Pods (number or percent) kept on the old revisions."),
                "maxUnavailable": described(INT_OR_STRING, "Pods that may be unavailable during the update."),
                "maxSurge": described(INT_OR_STRING, "Pods that may exist above replicas during the update."),
                "paused": {"type": "boolean", "description": "Stop updating pods (scaling goes on)."},
                "priorityStrategy": {
                    "description": "Which pods to update first: by label weights or by ordered label keys.",
                    "type": "object",
                    "properties": {
                        "weightPriority": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["weight", "matchSelector"],
                                "properties": {
                                    "weight": described(INT32, "Weight added when the selector matches (0-100)."),
                                    "matchSelector": described(LABEL_SELECTOR, "Pods this weight applies to."),
                                },
                            },
                        },
                        "orderPriority": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["orderedKey"],
                                "properties": {
                                    "orderedKey": {
                                        "type": "string",
                                        "description": "Label key whose trailing number orders the pods.",
                                    }
                                },
                            },
                        },
                    },
                },
                "scatterStrategy": {
                    "description": "Label pairs whose pods are spread across the update order.",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["key", "value"],
                        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
                "inPlaceUpdateStrategy": {
                    "description": "Settings of in-place updates.",
                    "type": "object",
                    "properties": {
                        "gracePeriodSeconds": described(
                            INT32, "Seconds between marking a pod not ready and changing its images."
                        )
                    },
                },
            },
        },
    },
}

_STATUS: dict[str, Any] = {
    "description": "The observed state of the CloneSet.",
    "type": "object",
    "required": ["availableReplicas", "readyReplicas", "replicas", "updatedReadyReplicas", "updatedReplicas"],
    "properties": {
        "observedGeneration": {
            "type": "integer",
            "format": "int64",
            "description": "The generation the status was computed for.",
        },
        "replicas": described(INT32, "Pods of the CloneSet."),
        "readyReplicas": described(INT32, "Pods that are ready."),
        "availableReplicas": described(INT32, "Pods ready for at least minReadySeconds."),
        "updatedReplicas": described(INT32, "Pods on the update revision."),
        "updatedReadyReplicas": described(INT32, "Pods on the update revision that are ready."),
        "updatedAvailableReplicas": described(INT32, "Pods on the update revision that are available."),
        "expectedUpdatedReplicas": described(
            INT32, "Pods that should be on the update revision (replicas - partition)."
        ),
        "updateRevision": {"type": "string", "description": "The revision of the current template."},
        "currentRevision": {"type": "string", "description": "The revision all pods were on last."},
        "collisionCount": described(INT32, "Hash collisions met when naming revisions."),
        "labelSelector": {"type": "string", "description": "The selector as a string, for the scale subresource."},
        "conditions": {
            "description": "Latest observations of the CloneSet's state.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "status"],
                "properties": {
                    "type": {"type": "string"},
                    "status": {"type": "string"},
                    "reason": {"type": "string"},
                    "message": {"type": "string"},
                    "lastTransitionTime": {"type": "string", "format": "date-time"},
                    "lastUpdateTime": {"type": "string", "format": "date-time"},
                },
            },
        },
    },
}


_COLUMNS = [
    column("DESIRED", ".spec.replicas", "integer", "Pods wanted."),
    column("UPDATED", ".status.updatedReplicas", "integer", "Pods on the update revision."),
    column("UPDATED_READY", ".status.updatedReadyReplicas", "integer", "Updated pods that are ready."),
    column("UPDATED_AVAILABLE", ".status.updatedAvailableReplicas", "integer", "Updated pods that are available."),
    column("READY", ".status.readyReplicas", "integer", "Pods that are ready."),
    column("TOTAL", ".status.replicas", "integer", "All pods of the CloneSet."),
    column("AGE", ".metadata.creationTimestamp", "date", "Time since the CloneSet was created."),
    column("CONTAINERS", ".spec.template.spec.containers[*].name", "string", "Container names.", 1),
    column("IMAGES", ".spec.template.spec.containers[*].image", "string", "Container images.", 1),
    column("SELECTOR", ".status.labelSelector", "string", "The pod selector.", 1),
]

CLONESET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{kruise.CLONESET_PLURAL}.{kruise.GROUP}"},
    "spec": {
        "group": kruise.GROUP,
        "scope": "Namespaced",
        "names": {
            "kind": kruise.CLONESET_KIND,
            "listKind": f"{kruise.CLONESET_KIND}List",
            "plural": kruise.CLONESET_PLURAL,
            "singular": "cloneset",
            "shortNames": ["clone"],
        },
        "versions": [
            {
                "name": kruise.VERSION,
                "served": True,
                "storage": True,
                "additionalPrinterColumns": _COLUMNS,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.labelSelector",
                    },
                },
                "schema": {
                    "openAPIV3Schema": top_level_schema(
                        "CloneSet runs a set of identical pods it owns directly, updating them "
                        "in place or by recreation.", _SPEC, _STATUS)
                },
            }
        ],
    },
}
"""The CRD object; treat as read-only (copy before changing it)."""
