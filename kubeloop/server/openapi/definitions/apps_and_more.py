"""apps/v1 (Deployment, ReplicaSet, ControllerRevision), autoscaling/v1 Scale,
coordination.k8s.io/v1 Lease and events.k8s.io/v1 Event.

Field names, types, required lists and merge/list extensions follow the Kubernetes 1.28 API
types (facts); the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    APPS,
    AUTOSCALING,
    COORDINATION,
    CORE,
    EVENTS,
    INT_OR_STRING,
    META,
    RAW_EXTENSION,
    Schema,
    array,
    boolean,
    definition,
    gvk,
    int64,
    integer,
    ref,
    string,
    type_meta_fields,
    with_patch,
)

DEFINITIONS: dict[str, Schema] = {
    APPS + "ControllerRevision": definition(
        "An immutable snapshot of a workload's template at one revision, kept so the workload can roll back to it.",
        {**type_meta_fields(),
            "data": ref(RAW_EXTENSION, "The serialized state of the revision (any JSON object)."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "revision": int64("The revision number this snapshot represents."),
        }, ["revision"], kinds=[gvk("apps", "v1", "ControllerRevision")],
    ),
    APPS + "Deployment": definition(
        "Declares a set of identical pods and rolls them from one template to the next through ReplicaSets.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(APPS + "DeploymentSpec", "The desired behaviour of the Deployment."),
            "status": ref(APPS + "DeploymentStatus", "The most recently observed state of the Deployment (read-only)."),
        }, kinds=[gvk("apps", "v1", "Deployment")],
    ),
    APPS + "DeploymentCondition": definition(
        "One observed aspect of a Deployment's state.",
        {
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "lastUpdateTime": ref(META + "Time", "When the condition was last refreshed."),
            "message": string("A human-readable explanation of the last transition."),
            "reason": string("A one-word machine-readable cause of the last transition."),
            "status": string("True, False or Unknown."),
            "type": string("The kind of condition (Available, Progressing, ReplicaFailure)."),
        }, ["status", "type"],
    ),
    APPS + "DeploymentSpec": definition(
        "What the Deployment should run and how it replaces old pods.",
        {
            "minReadySeconds": integer(
                "How long a new pod must be ready, without any container crashing, before it counts as "
                "available. Defaults to 0."),
            "paused": boolean("When true the controller stops rolling out template changes."),
            "progressDeadlineSeconds": integer(
                "Seconds a rollout may go without progress before it is reported as failed. Defaults to "
                "600."),
            "replicas": integer("How many pods should run. Defaults to 1."),
            "revisionHistoryLimit": integer("How many old ReplicaSets to keep for rollback. Defaults to 10."),
            "selector": ref(META + "LabelSelector",
                "Selects the pods this Deployment manages; must match the template labels. Immutable in "
                "apps/v1."),
            "strategy": with_patch(ref(APPS + "DeploymentStrategy",
                "How existing pods are replaced by new ones."), "retainKeys"),
            "template": ref(CORE + "PodTemplateSpec", "The pods to create."),
        }, ["selector", "template"],
    ),
    APPS + "DeploymentStatus": definition(
        "What the Deployment controller last observed.",
        {
            "availableReplicas": integer("Pods that have been ready for at least minReadySeconds."),
            "collisionCount": integer("Counts hash collisions of the template; mixed into new ReplicaSet names."),
            "conditions": array(ref(APPS + "DeploymentCondition"),
                "The latest observations of the Deployment's state.", strategy="merge", merge_key="type"),
            "observedGeneration": int64("The generation the controller last acted on."),
            "readyReplicas": integer("Pods targeted by this Deployment that are ready."),
            "replicas": integer("Pods (not terminating) targeted by this Deployment."),
            "terminatingReplicas": integer("Pods of this Deployment being deleted but not yet gone."),
            "unavailableReplicas": integer("Pods still needed for the Deployment to be fully available."),
            "updatedReplicas": integer("Pods (not terminating) that run the current template."),
        },
    ),
    APPS + "DeploymentStrategy": definition(
        "How old pods give way to new ones.",
        {
            "rollingUpdate": ref(APPS + "RollingUpdateDeployment",
                "Parameters of a rolling update; only with type RollingUpdate."),
            "type": string("Recreate or RollingUpdate (the default)."),
        },
    ),
    APPS + "ReplicaSet": definition(
        "Keeps a given number of pods matching a selector running.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(APPS + "ReplicaSetSpec", "The desired behaviour of the ReplicaSet."),
            "status": ref(APPS + "ReplicaSetStatus", "The most recently observed state of the ReplicaSet (read-only)."),
        }, kinds=[gvk("apps", "v1", "ReplicaSet")],
    ),
    APPS + "ReplicaSetCondition": definition(
        "One observed aspect of a ReplicaSet's state.",
        {
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation of the last transition."),
            "reason": string("A one-word machine-readable cause of the last transition."),
            "status": string("True, False or Unknown."),
            "type": string("The kind of condition."),
        }, ["status", "type"],
    ),
    APPS + "ReplicaSetSpec": definition(
        "How many pods the ReplicaSet keeps and what they look like.",
        {
            "minReadySeconds": integer(
                "How long a new pod must be ready before it counts as available. Defaults to 0."),
            "replicas": integer("How many pods should run. Defaults to 1."),
            "selector": ref(META + "LabelSelector",
                "Selects the pods counted against replicas; must match the template labels."),
            "template": ref(CORE + "PodTemplateSpec", "The pods to create when too few exist."),
        }, ["selector"],
    ),
    APPS + "ReplicaSetStatus": definition(
        "What the ReplicaSet controller last observed.",
        {
            "availableReplicas": integer("Pods that have been ready for at least minReadySeconds."),
            "conditions": array(ref(APPS + "ReplicaSetCondition"),
                "The latest observations of the ReplicaSet's state.", strategy="merge", merge_key="type"),
            "fullyLabeledReplicas": integer("Pods whose labels match all of the template's labels."),
            "observedGeneration": int64("The generation the controller last acted on."),
            "readyReplicas": integer("Pods that are ready."),
            "replicas": integer("The most recently observed number of pods."),
            "terminatingReplicas": integer("Pods of this ReplicaSet being deleted but not yet gone."),
        }, ["replicas"],
    ),
    APPS + "RollingUpdateDeployment": definition(
        "Bounds on a rolling update, as pod counts or percentages of the desired replicas.",
        {
            "maxSurge": ref(INT_OR_STRING,
                "How many pods may exist above the desired count during the update (count or percentage, "
                "rounded up). Defaults to 25%."),
            "maxUnavailable": ref(INT_OR_STRING,
                "How many pods may be unavailable during the update (count or percentage, rounded down). "
                "Defaults to 25%."),
        },
    ),
    AUTOSCALING + "Scale": definition(
        "The replica count of a scalable resource, read and written through its scale subresource.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(AUTOSCALING + "ScaleSpec", "The requested size."),
            "status": ref(AUTOSCALING + "ScaleStatus", "The current size (read-only)."),
        }, kinds=[gvk("autoscaling", "v1", "Scale")],
    ),
    AUTOSCALING + "ScaleSpec": definition(
        "The requested size.",
        {
            "replicas": integer("The desired number of instances."),
        },
    ),
    AUTOSCALING + "ScaleStatus": definition(
        "The observed size.",
        {
            "replicas": integer("The observed number of instances."),
            "selector": string("The label selector of the instances, in string form."),
        }, ["replicas"],
    ),
    COORDINATION + "Lease": definition(
        "A lease used for leader election and heartbeats.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(COORDINATION + "LeaseSpec", "The lease's holder and timing."),
        }, kinds=[gvk("coordination.k8s.io", "v1", "Lease")],
    ),
    COORDINATION + "LeaseSpec": definition(
        "Who holds the lease and for how long.",
        {
            "acquireTime": ref(META + "MicroTime", "When the current holder acquired the lease."),
            "holderIdentity": string("The identity of the current holder."),
            "leaseDurationSeconds": integer(
                "How long candidates wait after the last renewal before taking the lease over."),
            "leaseTransitions": integer("How many times the lease changed hands."),
            "renewTime": ref(META + "MicroTime", "When the holder last renewed the lease."),
        },
    ),
    EVENTS + "Event": definition(
        "A report of something that happened to an object (events.k8s.io form).",
        {**type_meta_fields(),
            "action": string("What was done or failed."),
            "deprecatedCount": integer("The core/v1 count."),
            "deprecatedFirstTimestamp": ref(META + "Time", "The core/v1 firstTimestamp."),
            "deprecatedLastTimestamp": ref(META + "Time", "The core/v1 lastTimestamp."),
            "deprecatedSource": ref(CORE + "EventSource", "The reporting component, in the core/v1 form."),
            "eventTime": ref(META + "MicroTime", "When the event first happened."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "note": string("A human-readable description."),
            "reason": string("A short machine-readable cause."),
            "regarding": ref(CORE + "ObjectReference", "The object the event is about."),
            "related": ref(CORE + "ObjectReference", "A secondary object involved."),
            "reportingController": string("The controller that emitted the event."),
            "reportingInstance": string("The instance of that controller."),
            "series": ref(EVENTS + "EventSeries", "Data about the run this event belongs to."),
            "type": string("Normal or Warning."),
        }, ["eventTime"], kinds=[gvk("events.k8s.io", "v1", "Event")],
    ),
    EVENTS + "EventSeries": definition(
        "Data about a run of repeated events.",
        {
            "count": integer("Occurrences in the series so far."),
            "lastObservedTime": ref(META + "MicroTime", "When the last occurrence was seen."),
        }, ["count", "lastObservedTime"],
    ),
}
