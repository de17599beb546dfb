"""The other core/v1 kinds the server serves: Namespace, Node, Event, ConfigMap, Secret,
PersistentVolumeClaim and ServiceAccount, with the types only they use.

Field names, types, required lists and merge/list extensions follow the Kubernetes 1.28 API
types (facts); the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    CORE,
    META,
    QUANTITY,
    Schema,
    array,
    boolean,
    definition,
    gvk,
    int64,
    integer,
    map_of,
    ref,
    string,
    string_map,
    type_meta_fields,
)

DEFINITIONS: dict[str, Schema] = {
    CORE + "AttachedVolume": definition(
        "A volume attached to a node.",
        {
            "devicePath": string("Where the volume is attached on the node."),
            "name": string("The name of the attached volume."),
        }, ["devicePath", "name"],
    ),
    CORE + "ConfigMap": definition(
        "Non-secret configuration data as key-value pairs.",
        {**type_meta_fields(),
            "binaryData": map_of(string(fmt="byte"), "Binary configuration values by key, base64-encoded."),
            "data": string_map("UTF-8 configuration values by key."),
            "immutable": boolean("When true the data can no longer be changed."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
        }, kinds=[gvk("", "v1", "ConfigMap")],
    ),
    CORE + "ConfigMapNodeConfigSource": definition(
        "A ConfigMap used as node configuration.",
        {
            "kubeletConfigKey": string("The key holding the kubelet configuration."),
            "name": string("Name of the ConfigMap."),
            "namespace": string("Namespace of the ConfigMap."),
            "resourceVersion": string("Resource version of the ConfigMap."),
            "uid": string("UID of the ConfigMap."),
        }, ["kubeletConfigKey", "name", "namespace"],
    ),
    CORE + "ContainerImage": definition(
        "An image present on a node.",
        {
            "names": array(string(), "Names the image is known by."),
            "sizeBytes": int64("The image size in bytes."),
        },
    ),
    CORE + "DaemonEndpoint": definition(
        "A port on which a node daemon listens.",
        {
            "Port": integer("The port number."),
        }, ["Port"],
    ),
    CORE + "Event": definition(
        "A report of something that happened to an object.",
        {**type_meta_fields(),
            "action": string("What was done or failed."),
            "count": integer("How many times the event occurred."),
            "eventTime": ref(META + "MicroTime", "When the event first happened, with microseconds."),
            "firstTimestamp": ref(META + "Time", "When the event was first recorded."),
            "involvedObject": ref(CORE + "ObjectReference", "The object the event is about."),
            "lastTimestamp": ref(META + "Time", "When the event last occurred."),
            "message": string("A human-readable description."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "reason": string("A short machine-readable cause."),
            "related": ref(CORE + "ObjectReference", "A secondary object involved."),
            "reportingComponent": string("The controller that emitted the event."),
            "reportingInstance": string("The instance of that controller."),
            "series": ref(CORE + "EventSeries", "Data about the run this event belongs to."),
            "source": ref(CORE + "EventSource", "The component reporting the event."),
            "type": string("Normal or Warning."),
        }, ["involvedObject", "metadata"], kinds=[gvk("", "v1", "Event")],
    ),
    CORE + "EventSeries": definition(
        "Data about a run of repeated events.",
        {
            "count": integer("Occurrences in the series so far."),
            "lastObservedTime": ref(META + "MicroTime", "When the last occurrence was seen."),
        },
    ),
    CORE + "EventSource": definition(
        "The component that reported an event.",
        {
            "component": string("The reporting component."),
            "host": string("The node the event came from."),
        },
    ),
    CORE + "Namespace": definition(
        "A scope for names of namespaced objects.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(CORE + "NamespaceSpec", "What the namespace needs."),
            "status": ref(CORE + "NamespaceStatus", "The observed state of the namespace (read-only)."),
        }, kinds=[gvk("", "v1", "Namespace")],
    ),
    CORE + "NamespaceCondition": definition(
        "One observed aspect of a namespace's state.",
        {
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation."),
            "reason": string("A machine-readable cause."),
            "status": string("True, False or Unknown."),
            "type": string("The kind of condition."),
        }, ["status", "type"],
    ),
    CORE + "NamespaceSpec": definition(
        "What the namespace needs before it can be removed.",
        {
            "finalizers": array(string(), "Finalizers that must be cleared before the namespace is removed."),
        },
    ),
    CORE + "NamespaceStatus": definition(
        "The observed state of a namespace.",
        {
            "conditions": array(ref(CORE + "NamespaceCondition"),
                "The latest observations of the namespace's state.", strategy="merge", merge_key="type"),
            "phase": string("Active or Terminating."),
        },
    ),
    CORE + "Node": definition(
        "A worker machine pods run on.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(CORE + "NodeSpec", "How the node is configured."),
            "status": ref(CORE + "NodeStatus", "The observed state of the node (read-only)."),
        }, kinds=[gvk("", "v1", "Node")],
    ),
    CORE + "NodeAddress": definition(
        "One address of a node.",
        {
            "address": string("The address."),
            "type": string("Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS."),
        }, ["address", "type"],
    ),
    CORE + "NodeCondition": definition(
        "One observed aspect of a node's state.",
        {
            "lastHeartbeatTime": ref(META + "Time", "When the condition was last reported."),
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation."),
            "reason": string("A machine-readable cause."),
            "status": string("True, False or Unknown."),
            "type": string("The kind of condition (Ready, MemoryPressure, ...)."),
        }, ["status", "type"],
    ),
    CORE + "NodeConfigSource": definition(
        "Where a node's dynamic configuration comes from.",
        {
            "configMap": ref(CORE + "ConfigMapNodeConfigSource", "A ConfigMap holding the configuration."),
        },
    ),
    CORE + "NodeConfigStatus": definition(
        "The state of a node's dynamic configuration.",
        {
            "active": ref(CORE + "NodeConfigSource", "The configuration the node uses."),
            "assigned": ref(CORE + "NodeConfigSource", "The configuration the node should use."),
            "error": string("A problem applying the configuration."),
            "lastKnownGood": ref(CORE + "NodeConfigSource", "The configuration to fall back to."),
        },
    ),
    CORE + "NodeDaemonEndpoints": definition(
        "Ports of the daemons running on a node.",
        {
            "kubeletEndpoint": ref(CORE + "DaemonEndpoint", "Where the kubelet listens."),
        },
    ),
    CORE + "NodeSpec": definition(
        "How a node is configured.",
        {
            "configSource": ref(CORE + "NodeConfigSource", "Deprecated dynamic configuration source."),
            "externalID": string("Deprecated."),
            "podCIDR": string("The pod IP range assigned to the node."),
            "podCIDRs": array(string(), "The pod IP ranges assigned to the node, one per IP family.", strategy="merge"),
            "providerID": string("The node's ID at its cloud provider."),
            "taints": array(ref(CORE + "Taint"), "Taints of the node."),
            "unschedulable": boolean("When true no new pods are placed on the node."),
        },
    ),
    CORE + "NodeStatus": definition(
        "The observed state of a node.",
        {
            "addresses": array(ref(CORE + "NodeAddress"),
                "Addresses the node is reachable at.", strategy="merge", merge_key="type"),
            "allocatable": map_of(ref(QUANTITY), "Resources available to pods."),
            "capacity": map_of(ref(QUANTITY), "Total resources of the node."),
            "conditions": array(ref(CORE + "NodeCondition"),
                "The latest observations of the node's state.", strategy="merge", merge_key="type"),
            "config": ref(CORE + "NodeConfigStatus", "The state of the node's dynamic configuration."),
            "daemonEndpoints": ref(CORE + "NodeDaemonEndpoints", "Ports of daemons on the node."),
            "images": array(ref(CORE + "ContainerImage"), "Images present on the node."),
            "nodeInfo": ref(CORE + "NodeSystemInfo", "Identifiers and versions of the node."),
            "phase": string("Deprecated lifecycle phase."),
            "volumesAttached": array(ref(CORE + "AttachedVolume"), "Volumes attached to the node."),
            "volumesInUse": array(string(), "Volumes in use on the node."),
        },
    ),
    CORE + "NodeSystemInfo": definition(
        "Identifiers and software versions of a node.",
        {
            "architecture": string("The CPU architecture."),
            "bootID": string("The boot ID."),
            "containerRuntimeVersion": string("The container runtime and its version."),
            "kernelVersion": string("The kernel version."),
            "kubeProxyVersion": string("The kube-proxy version."),
            "kubeletVersion": string("The kubelet version."),
            "machineID": string("The machine ID."),
            "operatingSystem": string("The operating system."),
            "osImage": string("The operating system image."),
            "systemUUID": string("The system UUID."),
        },
        ["architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion", "kubeletVersion",
         "machineID", "operatingSystem", "osImage", "systemUUID"],
    ),
    CORE + "ObjectReference": definition(
        "A reference to any object.",
        {
            "apiVersion": string("API version of the referent."),
            "fieldPath": string("A field within the referent, such as a container."),
            "kind": string("Kind of the referent."),
            "name": string("Name of the referent."),
            "namespace": string("Namespace of the referent."),
            "resourceVersion": string("Resource version of the referent, if a specific one is meant."),
            "uid": string("UID of the referent."),
        }, map_type="atomic",
    ),
    CORE + "PersistentVolumeClaim": definition(
        "A user's request for storage.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(CORE + "PersistentVolumeClaimSpec", "The storage requested."),
            "status": ref(CORE + "PersistentVolumeClaimStatus", "The observed state of the claim (read-only)."),
        }, kinds=[gvk("", "v1", "PersistentVolumeClaim")],
    ),
    CORE + "PersistentVolumeClaimCondition": definition(
        "One observed aspect of a claim's state.",
        {
            "lastProbeTime": ref(META + "Time", "When the condition was last checked."),
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation."),
            "reason": string("A machine-readable cause."),
            "status": string("True, False or Unknown."),
            "type": string("The kind of condition."),
        }, ["status", "type"],
    ),
    CORE + "PersistentVolumeClaimSpec": definition(
        "What storage is requested.",
        {
            "accessModes": array(string(), "The access modes the volume must support."),
            "dataSource": ref(CORE + "TypedLocalObjectReference", "An object to fill the new volume from."),
            "dataSourceRef": ref(CORE + "TypedObjectReference",
                "An object, possibly in another namespace, to fill the new volume from."),
            "resources": ref(CORE + "ResourceRequirements",
                "The least storage (and other resources) the volume must have."),
            "selector": ref(META + "LabelSelector", "Labels a pre-provisioned volume must carry."),
            "storageClassName": string("The storage class to provision from."),
            "volumeMode": string("Filesystem (the default) or Block."),
            "volumeName": string("Binds to this specific volume."),
        },
    ),
    CORE + "PersistentVolumeClaimStatus": definition(
        "The observed state of a claim.",
        {
            "accessModes": array(string(), "The access modes of the bound volume."),
            "allocatedResourceStatuses": map_of(string(), "The state of resize operations per resource."),
            "allocatedResources": map_of(ref(QUANTITY), "Resources allocated to the claim."),
            "capacity": map_of(ref(QUANTITY), "The capacity of the bound volume."),
            "conditions": array(ref(CORE + "PersistentVolumeClaimCondition"),
                "The latest observations of the claim's state.", strategy="merge", merge_key="type"),
            "phase": string("Pending, Bound or Lost."),
        },
    ),
    CORE + "Secret": definition(
        "Sensitive data as key-value pairs.",
        {**type_meta_fields(),
            "data": map_of(string(fmt="byte"), "Secret values by key, base64-encoded."),
            "immutable": boolean("When true the data can no longer be changed."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "stringData": string_map("Plain-text values merged into data on write; never read back."),
            "type": string("How the data is used, such as Opaque."),
        }, kinds=[gvk("", "v1", "Secret")],
    ),
    CORE + "ServiceAccount": definition(
        "An identity for processes running in pods.",
        {**type_meta_fields(),
            "automountServiceAccountToken": boolean("Whether pods get the account's token mounted by default."),
            "imagePullSecrets": array(ref(CORE + "LocalObjectReference"),
                "Secrets used to pull images for pods of this account."),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "secrets": array(ref(CORE + "ObjectReference"),
                "Secrets pods running as this account may use.", strategy="merge", merge_key="name"),
        }, kinds=[gvk("", "v1", "ServiceAccount")],
    ),
    CORE + "Taint": definition(
        "A mark on a node that repels pods not tolerating it.",
        {
            "effect": string("NoSchedule, PreferNoSchedule or NoExecute."),
            "key": string("The taint key."),
            "timeAdded": ref(META + "Time", "When a NoExecute taint was added."),
            "value": string("The taint value."),
        }, ["effect", "key"],
    ),
    CORE + "TypedLocalObjectReference": definition(
        "Names an object of a given kind in the same namespace.",
        {
            "apiGroup": string("The group of the referent; the core group when empty."),
            "kind": string("The kind of the referent."),
            "name": string("The name of the referent."),
        }, ["kind", "name"], map_type="atomic",
    ),
    CORE + "TypedObjectReference": definition(
        "Names an object of a given kind, possibly in another namespace.",
        {
            "apiGroup": string("The group of the referent; the core group when empty."),
            "kind": string("The kind of the referent."),
            "name": string("The name of the referent."),
            "namespace": string("The namespace of the referent."),
        }, ["kind", "name"],
    ),
}
