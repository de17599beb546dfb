"""The ImagePullJob CRD (``imagepulljobs.apps.kruise.io``), version v1alpha1.

An ImagePullJob asks nodes to fetch an image ahead of need. The CloneSet controller creates one
per changed container image when the ``PreDownloadImageForInPlaceUpdate`` gate is on; kubeloop
runs no puller, so jobs are records that tools and tests can read (their status stays empty).
The schema is our own structural rendering of upstream's fields, with a ``status`` subresource
and upstream's printer columns.
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

IMAGE_PULL_JOB_KIND = "ImagePullJob"
IMAGE_PULL_JOB_PLURAL = "imagepulljobs"

_SPEC: dict[str, Any] = {
    "description": "Which image to pull, on which nodes, how fast and for how long.",
    "type": "object",
    "required": ["image", "completionPolicy"],
    "properties": {
        "image": {"type": "string", "description": "The image to pull, as a pod would name it."},
        "pullSecrets": strings("Names of secrets in the job's namespace for a private registry."),
        "selector": {
            "description": "Nodes to pull on, by name or by label; all nodes when absent.",
            "type": "object",
            "properties": {
                "names": strings("Node names."),
                **LABEL_SELECTOR["properties"],
            },
        },
        "podSelector": described(LABEL_SELECTOR, "Pull on the nodes running pods these labels select."),
        "parallelism": described(INT_OR_STRING, "Nodes pulling at once (a number or a percentage); 1 by default."),
        "pullPolicy": {
            "description": "Retries and the time limit of each node's pull.",
            "type": "object",
            "properties": {
                "timeoutSeconds": described(INT32, "Seconds one pull may take."),
                "backoffLimit": described(INT32, "Retries of a failed pull on a node."),
            },
        },
        "completionPolicy": {
            "description": "When the job counts as finished and when it is deleted afterwards.",
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["Always", "Never"],
                         "description": "Always: finish once every node tried; Never: keep pulling on new nodes."},
                "activeDeadlineSeconds": {"type": "integer", "format": "int64",
                                          "description": "Seconds the job may run (Always only)."},
                "ttlSecondsAfterFinished": described(INT32, "Seconds after finishing before deletion (Always only)."),
            },
        },
        "sandboxConfig": {
            "description": "Metadata of the pull sandbox on the node.",
            "type": "object",
            "properties": {
                "labels": string_map("Labels of the sandbox."),
                "annotations": string_map("Annotations of the sandbox."),
            },
        },
        "imagePullPolicy": {"type": "string", "enum": ["Always", "IfNotPresent"],
                            "description": "Pull even when the node has the image (Always) or not."},
    },
}

_STATUS: dict[str, Any] = {
    "description": "Progress of the pulls, written by the job's puller.",
    "type": "object",
    "properties": {
        "startTime": {"type": "string", "format": "date-time", "description": "When the puller took the job."},
        "completionTime": {"type": "string", "format": "date-time", "description": "When the job finished."},
        "desired": described(INT32, "Nodes the job applies to."),
        "active": described(INT32, "Pulls under way."),
        "succeeded": described(INT32, "Pulls that succeeded."),
        "failed": described(INT32, "Pulls that failed."),
        "message": {"type": "string", "description": "Why the job failed, if it did."},
        "failedNodes": strings("Nodes whose pull failed."),
    },
}

_COLUMNS = [
    column("TOTAL", ".status.desired", "integer", "Nodes the job applies to."),
    column("ACTIVE", ".status.active", "integer", "Pulls under way."),
    column("SUCCEED", ".status.succeeded", "integer", "Pulls that succeeded."),
    column("FAILED", ".status.failed", "integer", "Pulls that failed."),
    column("AGE", ".metadata.creationTimestamp", "date", "Time since the job was created."),
    column("MESSAGE", ".status.message", "string", "Why the job failed, if it did."),
]

IMAGE_PULL_JOB_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{IMAGE_PULL_JOB_PLURAL}.{kruise.GROUP}"},
    "spec": {
        "group": kruise.GROUP,
        "scope": "Namespaced",
        "names": {
            "kind": IMAGE_PULL_JOB_KIND,
            "listKind": f"{IMAGE_PULL_JOB_KIND}List",
            "plural": IMAGE_PULL_JOB_PLURAL,
            "singular": "imagepulljob",
        },
        "versions": [
            {
                "name": kruise.VERSION,
                "served": True,
                "storage": True,
                "additionalPrinterColumns": _COLUMNS,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": top_level_schema(
                        "ImagePullJob asks nodes to pull an image before pods need it.", _SPEC, _STATUS)
                },
            }
        ],
    },
}
"""The CRD object; treat as read-only (copy before changing it)."""
