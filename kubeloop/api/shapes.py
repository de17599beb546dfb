"""The shapes of the objects every layer reads, as ``TypedDict``s (``total=False``).

Objects stay the plain JSON dicts decoded from the wire: nothing is converted, validated or
copied into these types at run time. They only tell mypy what is inside a dict where a helper
hands one out (an owner reference, a condition, a pod's status), so a misspelt field or a
wrong type is a type error, not a silent ``None``. Every key is optional (``total=False``)
because objects on the wire may omit any of them; readers still tolerate malformed values
(:mod:`kubeloop.api.meta`, :mod:`kubeloop.api.pods`), so a key typed ``str`` here means "a
``str`` when well formed".

Field names and types follow ``k8s.io/api`` v0.33 (``core/v1/types.go``, ``meta/v1/types.go``,
``apps/v1/types.go``); only the fields kubeloop reads are listed. As kopf's ``bodies.py``,
one module of shapes at the bottom layer, imported by the client, the runtime, the
controllers, the kubelet and the server alike.
"""

from __future__ import annotations

from typing import Any, TypedDict


class OwnerReference(TypedDict, total=False):
    """``metav1.OwnerReference``."""

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ManagedFieldsEntry(TypedDict, total=False):
    """``metav1.ManagedFieldsEntry``."""

    manager: str
    operation: str
    apiVersion: str
    time: str
    fieldsType: str
    fieldsV1: dict[str, Any]
    subresource: str


class ObjectMeta(TypedDict, total=False):
    """``metav1.ObjectMeta``."""

    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    deletionGracePeriodSeconds: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    finalizers: list[str]
    managedFields: list[ManagedFieldsEntry]


class Condition(TypedDict, total=False):
    """A status condition: ``metav1.Condition`` and the per-kind ones (``PodCondition``,
    ``DeploymentCondition``, ``ReplicaSetCondition``) share these fields."""

    type: str
    status: str
    reason: str
    message: str
    lastTransitionTime: str
    lastUpdateTime: str
    lastProbeTime: str | None
    observedGeneration: int


class LabelSelectorRequirement(TypedDict, total=False):
    """``metav1.LabelSelectorRequirement``."""

    key: str
    operator: str
    values: list[str]


class LabelSelector(TypedDict, total=False):
    """``metav1.LabelSelector``."""

    matchLabels: dict[str, str]
    matchExpressions: list[LabelSelectorRequirement]


class ObjectReference(TypedDict, total=False):
    """``corev1.ObjectReference`` (an Event's ``involvedObject``, an address's ``targetRef``)."""

    apiVersion: str
    kind: str
    namespace: str
    name: str
    uid: str
    resourceVersion: str
    fieldPath: str


class ContainerPort(TypedDict, total=False):
    """``corev1.ContainerPort``."""

    name: str
    containerPort: int
    protocol: str
    hostPort: int


class Container(TypedDict, total=False):
    """``corev1.Container``: the fields the controllers and the kubelet read."""

    name: str
    image: str
    imagePullPolicy: str
    command: list[str]
    args: list[str]
    env: list[dict[str, Any]]
    ports: list[ContainerPort]
    resources: dict[str, Any]
    readinessProbe: dict[str, Any]
    livenessProbe: dict[str, Any]
    startupProbe: dict[str, Any]
    lifecycle: dict[str, Any]
    restartPolicy: str


class PodReadinessGate(TypedDict, total=False):
    """``corev1.PodReadinessGate``."""

    conditionType: str


class PodSpec(TypedDict, total=False):
    """``corev1.PodSpec``: the fields the controllers and the kubelet read."""

    nodeName: str
    schedulerName: str
    containers: list[Container]
    initContainers: list[Container]
    readinessGates: list[PodReadinessGate]
    restartPolicy: str
    terminationGracePeriodSeconds: int
    hostname: str
    subdomain: str
    priority: int
    nodeSelector: dict[str, str]
    tolerations: list[dict[str, Any]]
    volumes: list[dict[str, Any]]


class ContainerStatus(TypedDict, total=False):
    """``corev1.ContainerStatus``."""

    name: str
    ready: bool
    started: bool
    restartCount: int
    image: str
    imageID: str
    containerID: str
    state: dict[str, Any]
    lastState: dict[str, Any]


class PodIP(TypedDict, total=False):
    """``corev1.PodIP`` / ``HostIP``."""

    ip: str


class PodStatus(TypedDict, total=False):
    """``corev1.PodStatus``."""

    phase: str
    conditions: list[Condition]
    message: str
    reason: str
    nominatedNodeName: str
    hostIP: str
    hostIPs: list[PodIP]
    podIP: str
    podIPs: list[PodIP]
    startTime: str
    initContainerStatuses: list[ContainerStatus]
    containerStatuses: list[ContainerStatus]
    qosClass: str


class PodTemplateSpec(TypedDict, total=False):
    """``corev1.PodTemplateSpec``."""

    metadata: ObjectMeta
    spec: PodSpec


class KubeObject(TypedDict, total=False):
    """Any object: its type and metadata (the rest is per kind)."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta


class Pod(KubeObject, total=False):
    """``corev1.Pod``."""

    spec: PodSpec
    status: PodStatus


__all__ = [
    "Condition",
    "Container",
    "ContainerPort",
    "ContainerStatus",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "Pod",
    "PodIP",
    "PodReadinessGate",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
]
