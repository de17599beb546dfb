"""Strategic-merge metadata of the built-in kinds the embedded server serves.

Restated from the ``patchStrategy`` / ``patchMergeKey`` tags of ``k8s.io/api`` (core/v1,
apps/v1) and ``metav1.ObjectMeta``; the same data is in the OpenAPI document as
``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``. Types are built bottom-up
so that the pod template is one schema shared by Pods, ReplicaSets and Deployments.

Kinds without any tagged field of their own (ConfigMap, Secret, Event, Lease, Scale, ...) still
get a schema: strategic merge works for every built-in type, and their metadata has merge
lists (``ownerReferences``, ``finalizers``). Custom resources have none (:func:`patch_schema_for`
returns ``None``): kube-apiserver answers their strategic merge patches with 415.
"""

from __future__ import annotations

from kubeloop.server.patch.schema import FieldMeta, PatchSchema, merge_list, nested, obj, retain_keys

OBJECT_META = obj(
    ownerReferences=merge_list("uid"),
    finalizers=merge_list(),
)

_CONTAINER_FIELDS = {
    "ports": merge_list("containerPort"),
    "env": merge_list("name"),
    "volumeMounts": merge_list("mountPath"),
    "volumeDevices": merge_list("devicePath"),
}
CONTAINER = PatchSchema(_CONTAINER_FIELDS, "struct")
# EphemeralContainer inlines EphemeralContainerCommon, which repeats the container tags.
EPHEMERAL_CONTAINER = PatchSchema(_CONTAINER_FIELDS, "struct")

POD_SPEC = obj(
    volumes=merge_list("name", retain_keys=True),
    initContainers=merge_list("name", CONTAINER),
    containers=merge_list("name", CONTAINER),
    ephemeralContainers=merge_list("name", EPHEMERAL_CONTAINER),
    imagePullSecrets=merge_list("name"),
    hostAliases=merge_list("ip"),
    topologySpreadConstraints=merge_list("topologyKey"),
    schedulingGates=merge_list("name"),
    resourceClaims=merge_list("name", retain_keys=True),
)

POD_STATUS = obj(
    conditions=merge_list("type"),
    podIPs=merge_list("ip"),
    hostIPs=merge_list("ip"),
    resourceClaimStatuses=merge_list("name", retain_keys=True),
)

POD_TEMPLATE_SPEC = obj(metadata=nested(OBJECT_META), spec=nested(POD_SPEC))

_CONDITIONS_STATUS = obj(conditions=merge_list("type"))


def _kind(**fields: FieldMeta) -> PatchSchema:
    """A top-level kind: metadata plus the given fields."""
    return PatchSchema({"metadata": nested(OBJECT_META), **fields})


POD = _kind(spec=nested(POD_SPEC), status=nested(POD_STATUS))

DEPLOYMENT = _kind(
    spec=nested(obj(template=nested(POD_TEMPLATE_SPEC), strategy=retain_keys())),
    status=nested(_CONDITIONS_STATUS),
)

REPLICA_SET = _kind(spec=nested(obj(template=nested(POD_TEMPLATE_SPEC))), status=nested(_CONDITIONS_STATUS))

NODE = _kind(
    spec=nested(obj(podCIDRs=merge_list())),
    status=nested(obj(conditions=merge_list("type"), addresses=merge_list("type"))),
)

NAMESPACE = _kind(status=nested(_CONDITIONS_STATUS))

PERSISTENT_VOLUME_CLAIM = _kind(status=nested(_CONDITIONS_STATUS))

SERVICE_ACCOUNT = _kind(secrets=merge_list("name"))

SERVICE = _kind(spec=nested(obj(ports=merge_list("port"))), status=nested(_CONDITIONS_STATUS))

# Kinds whose only tagged fields are in their metadata. ControllerRevision ``data`` is raw JSON
# (``runtime.RawExtension``): it merges like a plain map.
METADATA_ONLY = _kind()

_SCHEMAS: dict[tuple[str, str], PatchSchema] = {
    ("", "Pod"): POD,
    ("apps", "Deployment"): DEPLOYMENT,
    ("apps", "ReplicaSet"): REPLICA_SET,
    ("apps", "ControllerRevision"): METADATA_ONLY,
    ("", "Node"): NODE,
    ("", "Namespace"): NAMESPACE,
    ("", "PersistentVolumeClaim"): PERSISTENT_VOLUME_CLAIM,
    ("", "ServiceAccount"): SERVICE_ACCOUNT,
    ("", "Service"): SERVICE,
    ("", "Endpoints"): METADATA_ONLY,
    ("discovery.k8s.io", "EndpointSlice"): METADATA_ONLY,
    ("", "Event"): METADATA_ONLY,
    ("events.k8s.io", "Event"): METADATA_ONLY,
    ("", "ConfigMap"): METADATA_ONLY,
    ("", "Secret"): METADATA_ONLY,
    ("coordination.k8s.io", "Lease"): METADATA_ONLY,
    ("autoscaling", "Scale"): METADATA_ONLY,
    # CRDs are a built-in type of the apiextensions server; their fields carry no merge tags.
    ("apiextensions.k8s.io", "CustomResourceDefinition"): METADATA_ONLY,
}


def patch_schema_for(group: str, kind: str) -> PatchSchema | None:
    """The strategic-merge schema of a built-in kind, ``None`` for kinds without one (custom
    resources), which kube-apiserver serves without strategic merge (415)."""
    return _SCHEMAS.get((group, kind))


def kinds_with_schema() -> list[tuple[str, str]]:
    """Every ``(group, kind)`` that has a schema, for discovery and tests."""
    return sorted(_SCHEMAS)
