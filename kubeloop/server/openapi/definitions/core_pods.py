"""Pods and pod templates (core/v1): the pod, its spec and status, and its scheduling rules.

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
    CORE + "Affinity": definition(
        "Scheduling preferences and requirements of a pod.",
        {
            "nodeAffinity": ref(CORE + "NodeAffinity", "Node affinity rules."),
            "podAffinity": ref(CORE + "PodAffinity", "Rules to co-locate the pod with other pods."),
            "podAntiAffinity": ref(CORE + "PodAntiAffinity", "Rules to keep the pod apart from other pods."),
        },
    ),
    CORE + "ClaimSource": definition(
        "Where a pod's resource claim comes from (exactly one field set).",
        {
            "resourceClaimName": string("An existing ResourceClaim in the pod's namespace."),
            "resourceClaimTemplateName": string("A template from which a claim is created for this pod."),
        },
    ),
    CORE + "HostAlias": definition(
        "Extra entries for the pod's hosts file.",
        {
            "hostnames": array(string(), "Host names for that IP."),
            "ip": string("The IP address of the entry."),
        },
    ),
    CORE + "HostIP": definition(
        "An IP address of the pod's host.",
        {
            "ip": string("The IP address."),
        },
    ),
    CORE + "NodeAffinity": definition(
        "Node selection rules for a pod.",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": array(ref(CORE + "PreferredSchedulingTerm"),
                "Weighted rules the scheduler prefers to satisfy."),
            "requiredDuringSchedulingIgnoredDuringExecution": ref(CORE + "NodeSelector",
                "Rules a node must satisfy for the pod to be placed there."),
        },
    ),
    CORE + "NodeSelector": definition(
        "Node selector terms, any of which may match.",
        {
            "nodeSelectorTerms": array(ref(CORE + "NodeSelectorTerm"),
                "The terms; a node matches when any term matches."),
        }, ["nodeSelectorTerms"], map_type="atomic",
    ),
    CORE + "NodeSelectorRequirement": definition(
        "A requirement on one node label or field.",
        {
            "key": string("The label key."),
            "operator": string("In, NotIn, Exists, DoesNotExist, Gt or Lt."),
            "values": array(string(), "The values to compare with."),
        }, ["key", "operator"],
    ),
    CORE + "NodeSelectorTerm": definition(
        "Requirements that must all hold for a node.",
        {
            "matchExpressions": array(ref(CORE + "NodeSelectorRequirement"), "Requirements on node labels."),
            "matchFields": array(ref(CORE + "NodeSelectorRequirement"), "Requirements on node fields."),
        }, map_type="atomic",
    ),
    CORE + "Pod": definition(
        "A group of containers scheduled together on one node.",
        {**type_meta_fields(),
            "metadata": ref(META + "ObjectMeta",
                "Standard object metadata: name, namespace, labels, annotations and so on."),
            "spec": ref(CORE + "PodSpec", "The desired behaviour of the pod."),
            "status": ref(CORE + "PodStatus", "The most recently observed state of the pod (read-only)."),
        }, kinds=[gvk("", "v1", "Pod")],
    ),
    CORE + "PodAffinity": definition(
        "Rules placing a pod near other pods.",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": array(ref(CORE + "WeightedPodAffinityTerm"),
                "Weighted terms the scheduler prefers to satisfy."),
            "requiredDuringSchedulingIgnoredDuringExecution": array(ref(CORE + "PodAffinityTerm"),
                "Terms that must all hold for the pod to be placed."),
        },
    ),
    CORE + "PodAffinityTerm": definition(
        "Pods (by label and namespace) and the topology within which they count.",
        {
            "labelSelector": ref(META + "LabelSelector", "Selects the pods the term is about."),
            "namespaceSelector": ref(META + "LabelSelector", "Selects the namespaces the selected pods may live in."),
            "namespaces": array(string(), "Namespaces the selected pods may live in; the pod's own when empty."),
            "topologyKey": string("The node label whose equal values count as the same place."),
        }, ["topologyKey"],
    ),
    CORE + "PodAntiAffinity": definition(
        "Rules keeping a pod away from other pods.",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": array(ref(CORE + "WeightedPodAffinityTerm"),
                "Weighted terms the scheduler prefers to satisfy."),
            "requiredDuringSchedulingIgnoredDuringExecution": array(ref(CORE + "PodAffinityTerm"),
                "Terms that must all hold for the pod to be placed."),
        },
    ),
    CORE + "PodCondition": definition(
        "One observed aspect of a pod's state.",
        {
            "lastProbeTime": ref(META + "Time", "When the condition was last checked."),
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation."),
            "reason": string("A machine-readable cause."),
            "status": string("True, False or Unknown."),
            "type": string(
                "The kind of condition (PodScheduled, Initialized, ContainersReady, Ready, or a readiness"
                " gate)."),
        }, ["status", "type"],
    ),
    CORE + "PodDNSConfig": definition(
        "DNS settings of a pod beyond those of its DNS policy.",
        {
            "nameservers": array(string(), "Extra name server addresses."),
            "options": array(ref(CORE + "PodDNSConfigOption"), "Extra resolver options."),
            "searches": array(string(), "Extra search domains."),
        },
    ),
    CORE + "PodDNSConfigOption": definition(
        "One resolver option.",
        {
            "name": string("The option's name."),
            "value": string("The option's value."),
        },
    ),
    CORE + "PodIP": definition(
        "One IP address of a pod.",
        {
            "ip": string("The IP address."),
        },
    ),
    CORE + "PodOS": definition(
        "The operating system a pod needs.",
        {
            "name": string("linux or windows."),
        }, ["name"],
    ),
    CORE + "PodReadinessGate": definition(
        "An extra condition that must be true for the pod to be ready.",
        {
            "conditionType": string("The pod condition type that must be True."),
        }, ["conditionType"],
    ),
    CORE + "PodResourceClaim": definition(
        "A dynamic resource claim the pod uses.",
        {
            "name": string("The claim's name within the pod."),
            "source": ref(CORE + "ClaimSource", "Where the claim comes from."),
        }, ["name"],
    ),
    CORE + "PodResourceClaimStatus": definition(
        "The claim generated for one of the pod's resource claims.",
        {
            "name": string("The claim's name within the pod."),
            "resourceClaimName": string("The ResourceClaim generated for it."),
        }, ["name"],
    ),
    CORE + "PodSchedulingGate": definition(
        "A gate that holds the pod back from scheduling while present.",
        {
            "name": string("The gate's name."),
        }, ["name"],
    ),
    CORE + "PodSpec": definition(
        "The desired state of a pod.",
        {
            "activeDeadlineSeconds": int64("Seconds the pod may be active before it is failed."),
            "affinity": ref(CORE + "Affinity", "Scheduling constraints."),
            "automountServiceAccountToken": boolean("Whether the service account token is mounted automatically."),
            "containers": array(ref(CORE + "Container"),
                "The app containers of the pod; at least one. Containers cannot be added or removed "
                "later.", strategy="merge", merge_key="name"),
            "dnsConfig": ref(CORE + "PodDNSConfig", "DNS settings beyond those of the DNS policy."),
            "dnsPolicy": string("ClusterFirst (the default), ClusterFirstWithHostNet, Default or None."),
            "enableServiceLinks": boolean("Inject service information as environment variables. Defaults to true."),
            "ephemeralContainers": array(ref(CORE + "EphemeralContainer"),
                "Debugging containers added to the running pod through its ephemeralcontainers "
                "subresource.", strategy="merge", merge_key="name"),
            "hostAliases": array(ref(CORE + "HostAlias"),
                "Extra hosts-file entries.", strategy="merge", merge_key="ip"),
            "hostIPC": boolean("Use the node's IPC namespace."),
            "hostNetwork": boolean("Use the node's network namespace."),
            "hostPID": boolean("Use the node's process ID namespace."),
            "hostUsers": boolean("Whether the pod uses the node's user namespace. Defaults to true."),
            "hostname": string("The pod's host name; the pod name by default."),
            "imagePullSecrets": array(ref(CORE + "LocalObjectReference"),
                "Secrets used to pull the pod's images.", strategy="merge", merge_key="name"),
            "initContainers": array(ref(CORE + "Container"),
                "Containers run one after another, each to completion, before the app containers start.",
                strategy="merge", merge_key="name"),
            "nodeName": string("The node the pod is bound to; set by the scheduler when empty."),
            "nodeSelector": string_map("Labels a node must carry for the pod to be placed on it."),
            "os": ref(CORE + "PodOS", "The operating system the pod's containers need."),
            "overhead": map_of(ref(QUANTITY), "Resources the pod's sandbox uses beyond its containers."),
            "preemptionPolicy": string("PreemptLowerPriority (the default) or Never."),
            "priority": integer("The pod's priority, resolved from priorityClassName."),
            "priorityClassName": string("The PriorityClass giving the pod its priority."),
            "readinessGates": array(ref(CORE + "PodReadinessGate"),
                "Extra conditions that must be True for the pod to be ready."),
            "resourceClaims": array(ref(CORE + "PodResourceClaim"),
                "Dynamic resource claims the containers may use.",
                strategy="merge,retainKeys", merge_key="name", list_type="map", map_keys=("name",)),
            "restartPolicy": string(
                "Always (the default), OnFailure or Never: when containers of the pod are restarted."),
            "runtimeClassName": string("The RuntimeClass to run the pod with."),
            "schedulerName": string("The scheduler responsible for the pod; default-scheduler when empty."),
            "schedulingGates": array(ref(CORE + "PodSchedulingGate"),
                "While any gate is present the pod is not scheduled.",
                strategy="merge", merge_key="name", list_type="map", map_keys=("name",)),
            "securityContext": ref(CORE + "PodSecurityContext", "Security settings for all containers of the pod."),
            "serviceAccount": string("Deprecated alias of serviceAccountName."),
            "serviceAccountName": string("The ServiceAccount the pod runs as."),
            "setHostnameAsFQDN": boolean("Set the pod's host name to its fully qualified domain name."),
            "shareProcessNamespace": boolean("Let containers of the pod see each other's processes."),
            "subdomain": string(
                "A subdomain giving the pod the name <hostname>.<subdomain>.<namespace>.svc.<cluster "
                "domain>."),
            "terminationGracePeriodSeconds": int64(
                "Seconds between the stop signal and the kill on deletion. Defaults to 30."),
            "tolerations": array(ref(CORE + "Toleration"), "Taints the pod tolerates."),
            "topologySpreadConstraints": array(ref(CORE + "TopologySpreadConstraint"),
                "How the pod's replicas spread across topology domains.",
                strategy="merge", merge_key="topologyKey",
                list_type="map", map_keys=("topologyKey", "whenUnsatisfiable")),
            "volumes": array(ref(CORE + "Volume"),
                "Volumes the pod's containers can mount.", strategy="merge,retainKeys", merge_key="name"),
        }, ["containers"],
    ),
    CORE + "PodStatus": definition(
        "The observed state of a pod.",
        {
            "conditions": array(ref(CORE + "PodCondition"),
                "The latest observations of the pod's state.", strategy="merge", merge_key="type"),
            "containerStatuses": array(ref(CORE + "ContainerStatus"), "Statuses of the app containers."),
            "ephemeralContainerStatuses": array(ref(CORE + "ContainerStatus"), "Statuses of the ephemeral containers."),
            "hostIP": string("The IP of the node the pod runs on."),
            "hostIPs": array(ref(CORE + "HostIP"),
                "The IPs of the node the pod runs on.", strategy="merge", merge_key="ip", list_type="atomic"),
            "initContainerStatuses": array(ref(CORE + "ContainerStatus"), "Statuses of the init containers."),
            "message": string("Why the pod is in its condition, for humans."),
            "nominatedNodeName": string("A node the scheduler means to place the pod on after preempting others."),
            "phase": string("Pending, Running, Succeeded, Failed or Unknown."),
            "podIP": string("The pod's IP address."),
            "podIPs": array(ref(CORE + "PodIP"),
                "The pod's IP addresses, one per IP family.", strategy="merge", merge_key="ip"),
            "qosClass": string("Guaranteed, Burstable or BestEffort."),
            "reason": string("A brief machine-readable cause, such as Evicted."),
            "resize": string("The state of a pending resource resize."),
            "resourceClaimStatuses": array(ref(CORE + "PodResourceClaimStatus"),
                "The claims generated for the pod's resource claims.",
                strategy="merge,retainKeys", merge_key="name", list_type="map", map_keys=("name",)),
            "startTime": ref(META + "Time", "When the kubelet accepted the pod."),
        },
    ),
    CORE + "PodTemplateSpec": definition(
        "A pod blueprint: metadata and spec of the pods a workload creates.",
        {
            "metadata": ref(META + "ObjectMeta", "Labels and annotations of the created pods."),
            "spec": ref(CORE + "PodSpec", "The spec of the created pods."),
        },
    ),
    CORE + "PreferredSchedulingTerm": definition(
        "A weighted node selector term.",
        {
            "preference": ref(CORE + "NodeSelectorTerm", "The node selector term."),
            "weight": integer("Weight in the range 1-100."),
        }, ["preference", "weight"],
    ),
    CORE + "Toleration": definition(
        "Lets a pod be placed on nodes with a matching taint.",
        {
            "effect": string("The taint effect tolerated; all effects when empty."),
            "key": string("The taint key tolerated; all keys when empty (with operator Exists)."),
            "operator": string("Exists or Equal (the default)."),
            "tolerationSeconds": int64("How long a NoExecute taint is tolerated."),
            "value": string("The taint value to match with operator Equal."),
        },
    ),
    CORE + "TopologySpreadConstraint": definition(
        "How evenly matching pods must spread across a topology.",
        {
            "labelSelector": ref(META + "LabelSelector", "Selects the pods counted."),
            "matchLabelKeys": array(string(),
                "Pod label keys whose values are added to the selector.", list_type="atomic"),
            "maxSkew": integer("The largest allowed difference in matching pods between domains."),
            "minDomains": integer("The least number of eligible domains."),
            "nodeAffinityPolicy": string("Honor or Ignore the pod's node affinity when counting."),
            "nodeTaintsPolicy": string("Honor or Ignore node taints when counting."),
            "topologyKey": string("The node label defining the domains."),
            "whenUnsatisfiable": string("DoNotSchedule or ScheduleAnyway."),
        }, ["maxSkew", "topologyKey", "whenUnsatisfiable"],
    ),
    CORE + "WeightedPodAffinityTerm": definition(
        "A pod affinity term with a weight.",
        {
            "podAffinityTerm": ref(CORE + "PodAffinityTerm", "The affinity term."),
            "weight": integer("Weight in the range 1-100."),
        }, ["podAffinityTerm", "weight"],
    ),
}
