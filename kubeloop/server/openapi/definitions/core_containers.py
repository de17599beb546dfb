"""Containers (core/v1): the container, its probes, environment, resources and security settings.

Field names, types, required lists and merge/list extensions follow the Kubernetes 1.28 API
types (facts); the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    CORE,
    INT_OR_STRING,
    META,
    QUANTITY,
    Schema,
    array,
    boolean,
    definition,
    int64,
    integer,
    map_of,
    ref,
    string,
)

DEFINITIONS: dict[str, Schema] = {
    CORE + "Capabilities": definition(
        "Linux capabilities to add to or drop from a container.",
        {
            "add": array(string(), "Capabilities to add."),
            "drop": array(string(), "Capabilities to remove."),
        },
    ),
    CORE + "ConfigMapEnvSource": definition(
        "Imports every key of a ConfigMap as environment variables.",
        {
            "name": string("The ConfigMap's name."),
            "optional": boolean("Whether the ConfigMap may be missing."),
        },
    ),
    CORE + "ConfigMapKeySelector": definition(
        "One key of a ConfigMap.",
        {
            "key": string("The key to read."),
            "name": string("The ConfigMap's name."),
            "optional": boolean("Whether the ConfigMap or the key may be missing."),
        }, ["key"], map_type="atomic",
    ),
    CORE + "Container": definition(
        "One container to run in a pod.",
        {
            "args": array(string(),
                "Arguments to the entrypoint; replace the image's CMD. $(VAR) references expand from the "
                "container's environment."),
            "command": array(string(),
                "The entrypoint, run without a shell; replaces the image's ENTRYPOINT. $(VAR) references "
                "expand from the container's environment."),
            "env": array(ref(CORE + "EnvVar"), "Environment variables to set.", strategy="merge", merge_key="name"),
            "envFrom": array(ref(CORE + "EnvFromSource"),
                "Sources of many environment variables; explicit env entries win on duplicate keys."),
            "image": string("The container image to run."),
            "imagePullPolicy": string(
                "Always, Never or IfNotPresent; Always for the latest tag, IfNotPresent otherwise."),
            "lifecycle": ref(CORE + "Lifecycle", "Actions on container start and stop."),
            "livenessProbe": ref(CORE + "Probe", "Restarts the container when it fails."),
            "name": string("The container's name, a DNS label unique within the pod. Cannot be updated."),
            "ports": array(ref(CORE + "ContainerPort"),
                "Ports the container exposes (informational; any port the process listens on is "
                "reachable).",
                strategy="merge", merge_key="containerPort", list_type="map", map_keys=("containerPort", "protocol")),
            "readinessProbe": ref(CORE + "Probe", "Takes the container out of service while it fails."),
            "resizePolicy": array(ref(CORE + "ContainerResizePolicy"),
                "How the container reacts to a resource resize.", list_type="atomic"),
            "resources": ref(CORE + "ResourceRequirements", "Compute resources requested and allowed."),
            "restartPolicy": string("Only for init containers: Always makes it a sidecar that keeps running."),
            "securityContext": ref(CORE + "SecurityContext", "Security settings of the container."),
            "startupProbe": ref(CORE + "Probe", "Holds back the other probes until it succeeds once."),
            "stdin": boolean("Keep a stdin buffer open for the container."),
            "stdinOnce": boolean("Close stdin after the first attach ends."),
            "terminationMessagePath": string(
                "The file whose content becomes the termination message. Defaults to /dev/termination-"
                "log."),
            "terminationMessagePolicy": string(
                "File, or FallbackToLogsOnError to use the log tail when the file is empty."),
            "tty": boolean("Allocate a TTY (needs stdin)."),
            "volumeDevices": array(ref(CORE + "VolumeDevice"),
                "Block devices the container uses.", strategy="merge", merge_key="devicePath"),
            "volumeMounts": array(ref(CORE + "VolumeMount"),
                "Pod volumes to mount into the container's filesystem.", strategy="merge", merge_key="mountPath"),
            "workingDir": string("The working directory; the image's default when empty."),
        }, ["name"],
    ),
    CORE + "ContainerPort": definition(
        "A network port a container exposes.",
        {
            "containerPort": integer("The port on the pod's IP address."),
            "hostIP": string("The host IP the host port binds to."),
            "hostPort": integer("A port on the host to forward to the container port."),
            "name": string("A name for the port, an IANA service name unique within the pod."),
            "protocol": string("TCP (the default), UDP or SCTP."),
        }, ["containerPort"],
    ),
    CORE + "ContainerResizePolicy": definition(
        "How a container reacts when one of its resources is resized.",
        {
            "resourceName": string("The resource (cpu, memory) the policy applies to."),
            "restartPolicy": string("NotRequired or RestartContainer."),
        }, ["resourceName", "restartPolicy"],
    ),
    CORE + "ContainerState": definition(
        "The state of a container; at most one member is set.",
        {
            "running": ref(CORE + "ContainerStateRunning", "Details of a running container."),
            "terminated": ref(CORE + "ContainerStateTerminated", "Details of a terminated container."),
            "waiting": ref(CORE + "ContainerStateWaiting", "Details of a waiting container."),
        },
    ),
    CORE + "ContainerStateRunning": definition(
        "A running container.",
        {
            "startedAt": ref(META + "Time", "When the container last started."),
        },
    ),
    CORE + "ContainerStateTerminated": definition(
        "A container that has exited.",
        {
            "containerID": string("The runtime's ID of the container."),
            "exitCode": integer("The exit status of the last run."),
            "finishedAt": ref(META + "Time", "When the last run ended."),
            "message": string("Details about the end of the container."),
            "reason": string("Why the container ended."),
            "signal": integer("The signal that ended the last run."),
            "startedAt": ref(META + "Time", "When the last run started."),
        }, ["exitCode"],
    ),
    CORE + "ContainerStateWaiting": definition(
        "A container that is not running yet.",
        {
            "message": string("Details about the wait."),
            "reason": string("Why the container is not running yet."),
        },
    ),
    CORE + "ContainerStatus": definition(
        "The observed state of one container of a pod.",
        {
            "allocatedResources": map_of(ref(QUANTITY), "Resources the node allocated to the container."),
            "containerID": string("The runtime's ID of the container."),
            "image": string("The image the container runs."),
            "imageID": string("The resolved image ID."),
            "lastState": ref(CORE + "ContainerState", "The state of the previous run."),
            "name": string("The container's name."),
            "ready": boolean("Whether the container passes its readiness probe."),
            "resources": ref(CORE + "ResourceRequirements", "Resources actually configured for the running container."),
            "restartCount": integer("How many times the container has been restarted."),
            "started": boolean("Whether the container has passed its startup probe."),
            "state": ref(CORE + "ContainerState", "The container's current state."),
        }, ["image", "imageID", "name", "ready", "restartCount"],
    ),
    CORE + "EnvFromSource": definition(
        "A source of many environment variables at once.",
        {
            "configMapRef": ref(CORE + "ConfigMapEnvSource", "The ConfigMap to import."),
            "prefix": string("A prefix added to every imported variable name."),
            "secretRef": ref(CORE + "SecretEnvSource", "The Secret to import."),
        },
    ),
    CORE + "EnvVar": definition(
        "One environment variable of a container.",
        {
            "name": string("The variable's name."),
            "value": string("The value; $(VAR) references expand. Defaults to \"\"."),
            "valueFrom": ref(CORE + "EnvVarSource", "Takes the value from elsewhere; not allowed together with value."),
        }, ["name"],
    ),
    CORE + "EnvVarSource": definition(
        "Where an environment variable's value comes from.",
        {
            "configMapKeyRef": ref(CORE + "ConfigMapKeySelector", "A key of a ConfigMap."),
            "fieldRef": ref(CORE + "ObjectFieldSelector", "A field of the pod."),
            "resourceFieldRef": ref(CORE + "ResourceFieldSelector", "A resource limit or request of a container."),
            "secretKeyRef": ref(CORE + "SecretKeySelector", "A key of a Secret."),
        },
    ),
    CORE + "EphemeralContainer": definition(
        "A debugging container added to a running pod.",
        {
            "args": array(string(),
                "Arguments to the entrypoint; replace the image's CMD. $(VAR) references expand from the "
                "container's environment."),
            "command": array(string(),
                "The entrypoint, run without a shell; replaces the image's ENTRYPOINT. $(VAR) references "
                "expand from the container's environment."),
            "env": array(ref(CORE + "EnvVar"), "Environment variables to set.", strategy="merge", merge_key="name"),
            "envFrom": array(ref(CORE + "EnvFromSource"),
                "Sources of many environment variables; explicit env entries win on duplicate keys."),
            "image": string("The container image to run."),
            "imagePullPolicy": string(
                "Always, Never or IfNotPresent; Always for the latest tag, IfNotPresent otherwise."),
            "lifecycle": ref(CORE + "Lifecycle", "Actions on container start and stop."),
            "livenessProbe": ref(CORE + "Probe", "Restarts the container when it fails."),
            "name": string("The container's name, a DNS label unique within the pod. Cannot be updated."),
            "ports": array(ref(CORE + "ContainerPort"),
                "Ports the container exposes (informational; any port the process listens on is "
                "reachable).",
                strategy="merge", merge_key="containerPort", list_type="map", map_keys=("containerPort", "protocol")),
            "readinessProbe": ref(CORE + "Probe", "Takes the container out of service while it fails."),
            "resizePolicy": array(ref(CORE + "ContainerResizePolicy"),
                "How the container reacts to a resource resize.", list_type="atomic"),
            "resources": ref(CORE + "ResourceRequirements", "Compute resources requested and allowed."),
            "restartPolicy": string("Only for init containers: Always makes it a sidecar that keeps running."),
            "securityContext": ref(CORE + "SecurityContext", "Security settings of the container."),
            "startupProbe": ref(CORE + "Probe", "Holds back the other probes until it succeeds once."),
            "stdin": boolean("Keep a stdin buffer open for the container."),
            "stdinOnce": boolean("Close stdin after the first attach ends."),
            "targetContainerName": string("The container whose namespaces the ephemeral container joins."),
            "terminationMessagePath": string(
                "The file whose content becomes the termination message. Defaults to /dev/termination-"
                "log."),
            "terminationMessagePolicy": string(
                "File, or FallbackToLogsOnError to use the log tail when the file is empty."),
            "tty": boolean("Allocate a TTY (needs stdin)."),
            "volumeDevices": array(ref(CORE + "VolumeDevice"),
                "Block devices the container uses.", strategy="merge", merge_key="devicePath"),
            "volumeMounts": array(ref(CORE + "VolumeMount"),
                "Pod volumes to mount into the container's filesystem.", strategy="merge", merge_key="mountPath"),
            "workingDir": string("The working directory; the image's default when empty."),
        }, ["name"],
    ),
    CORE + "ExecAction": definition(
        "Runs a command inside the container.",
        {
            "command": array(string(),
                "The command and its arguments, run without a shell; exit status 0 means success."),
        },
    ),
    CORE + "GRPCAction": definition(
        "Checks a gRPC health endpoint.",
        {
            "port": integer("The port of the gRPC service."),
            "service": string("The service name passed in the health check request."),
        }, ["port"],
    ),
    CORE + "HTTPGetAction": definition(
        "Performs an HTTP GET request.",
        {
            "host": string("The host to connect to; the pod IP by default."),
            "httpHeaders": array(ref(CORE + "HTTPHeader"), "Extra request headers."),
            "path": string("The path to request."),
            "port": ref(INT_OR_STRING, "The port, by number or container port name."),
            "scheme": string("HTTP (the default) or HTTPS."),
        }, ["port"],
    ),
    CORE + "HTTPHeader": definition(
        "A custom HTTP header.",
        {
            "name": string("The header's name."),
            "value": string("The header's value."),
        }, ["name", "value"],
    ),
    CORE + "Lifecycle": definition(
        "Actions the kubelet runs on container lifecycle events.",
        {
            "postStart": ref(CORE + "LifecycleHandler", "Runs right after the container is created."),
            "preStop": ref(CORE + "LifecycleHandler", "Runs before the container is stopped."),
        },
    ),
    CORE + "LifecycleHandler": definition(
        "One lifecycle action; exactly one member is set.",
        {
            "exec": ref(CORE + "ExecAction", "A command to run."),
            "httpGet": ref(CORE + "HTTPGetAction", "An HTTP request to make."),
            "tcpSocket": ref(CORE + "TCPSocketAction",
                "A TCP connection to open (accepted for compatibility, not run)."),
        },
    ),
    CORE + "LocalObjectReference": definition(
        "Names an object in the same namespace.",
        {
            "name": string("The name of the object."),
        }, map_type="atomic",
    ),
    CORE + "ObjectFieldSelector": definition(
        "Selects a field of the pod.",
        {
            "apiVersion": string("The schema version of fieldPath. Defaults to v1."),
            "fieldPath": string("The path of the field to select."),
        }, ["fieldPath"], map_type="atomic",
    ),
    CORE + "PodSecurityContext": definition(
        "Security settings for every container of the pod.",
        {
            "fsGroup": int64("A group that owns the pod's volumes."),
            "fsGroupChangePolicy": string("OnRootMismatch or Always: when volume ownership is changed."),
            "runAsGroup": int64("GID to run the entrypoints as."),
            "runAsNonRoot": boolean("Refuse to start containers that would run as root."),
            "runAsUser": int64("UID to run the entrypoints as."),
            "seLinuxOptions": ref(CORE + "SELinuxOptions", "SELinux context for all containers."),
            "seccompProfile": ref(CORE + "SeccompProfile", "The seccomp profile for all containers."),
            "supplementalGroups": array(int64(), "Extra groups for the first process of each container."),
            "sysctls": array(ref(CORE + "Sysctl"), "Namespaced kernel parameters to set."),
            "windowsOptions": ref(CORE + "WindowsSecurityContextOptions", "Windows settings for all containers."),
        },
    ),
    CORE + "Probe": definition(
        "A periodic check of a container's health.",
        {
            "exec": ref(CORE + "ExecAction", "A command to run."),
            "failureThreshold": integer("Consecutive failures before the probe counts as failed. Defaults to 3."),
            "grpc": ref(CORE + "GRPCAction", "A gRPC health check."),
            "httpGet": ref(CORE + "HTTPGetAction", "An HTTP request to make."),
            "initialDelaySeconds": integer("Seconds after the start before the first probe."),
            "periodSeconds": integer("Seconds between probes. Defaults to 10."),
            "successThreshold": integer("Consecutive successes needed after a failure. Defaults to 1."),
            "tcpSocket": ref(CORE + "TCPSocketAction", "A TCP connection to open."),
            "terminationGracePeriodSeconds": int64("Grace period when the probe's failure kills the container."),
            "timeoutSeconds": integer("Seconds before a probe times out. Defaults to 1."),
        },
    ),
    CORE + "ResourceClaim": definition(
        "Names a resource claim of the pod.",
        {
            "name": string("The name of an entry of the pod's resourceClaims."),
        }, ["name"],
    ),
    CORE + "ResourceFieldSelector": definition(
        "Selects a resource value of a container.",
        {
            "containerName": string("The container; required for volumes."),
            "divisor": ref(QUANTITY, "The unit the value is expressed in. Defaults to 1."),
            "resource": string("The resource to select, such as limits.cpu."),
        }, ["resource"], map_type="atomic",
    ),
    CORE + "ResourceRequirements": definition(
        "Compute resources a container requests and may use at most.",
        {
            "claims": array(ref(CORE + "ResourceClaim"),
                "Resource claims of the pod this container uses.", list_type="map", map_keys=("name",)),
            "limits": map_of(ref(QUANTITY), "The most of each resource the container may use."),
            "requests": map_of(ref(QUANTITY), "The resources the container needs; the limits when omitted."),
        },
    ),
    CORE + "SELinuxOptions": definition(
        "SELinux labels.",
        {
            "level": string("The SELinux level."),
            "role": string("The SELinux role."),
            "type": string("The SELinux type."),
            "user": string("The SELinux user."),
        },
    ),
    CORE + "SeccompProfile": definition(
        "A seccomp profile.",
        {
            "localhostProfile": string("A profile file on the node, for type Localhost."),
            "type": string("Localhost, RuntimeDefault or Unconfined."),
        }, ["type"],
    ),
    CORE + "SecretEnvSource": definition(
        "Imports every key of a Secret as environment variables.",
        {
            "name": string("The Secret's name."),
            "optional": boolean("Whether the Secret may be missing."),
        },
    ),
    CORE + "SecretKeySelector": definition(
        "One key of a Secret.",
        {
            "key": string("The key to read."),
            "name": string("The Secret's name."),
            "optional": boolean("Whether the Secret or the key may be missing."),
        }, ["key"], map_type="atomic",
    ),
    CORE + "SecurityContext": definition(
        "Security settings of one container.",
        {
            "allowPrivilegeEscalation": boolean("Whether a process may gain more privileges than its parent."),
            "capabilities": ref(CORE + "Capabilities", "Capabilities to add or drop."),
            "privileged": boolean("Run the container privileged."),
            "procMount": string("Default or Unmasked."),
            "readOnlyRootFilesystem": boolean("Mount the root filesystem read-only."),
            "runAsGroup": int64("GID to run the entrypoint as."),
            "runAsNonRoot": boolean("Refuse to start the container if it would run as root."),
            "runAsUser": int64("UID to run the entrypoint as."),
            "seLinuxOptions": ref(CORE + "SELinuxOptions", "The SELinux context."),
            "seccompProfile": ref(CORE + "SeccompProfile", "The seccomp profile."),
            "windowsOptions": ref(CORE + "WindowsSecurityContextOptions", "Windows settings."),
        },
    ),
    CORE + "Sysctl": definition(
        "A kernel parameter to set.",
        {
            "name": string("The parameter's name."),
            "value": string("The parameter's value."),
        }, ["name", "value"],
    ),
    CORE + "TCPSocketAction": definition(
        "Opens a TCP connection.",
        {
            "host": string("The host to connect to; the pod IP by default."),
            "port": ref(INT_OR_STRING, "The port, by number or container port name."),
        }, ["port"],
    ),
    CORE + "VolumeDevice": definition(
        "A raw block device to expose inside a container.",
        {
            "devicePath": string("Where the device appears in the container."),
            "name": string("The claim volume to expose."),
        }, ["devicePath", "name"],
    ),
    CORE + "VolumeMount": definition(
        "Where a volume appears inside a container.",
        {
            "mountPath": string("Where the volume appears in the container."),
            "mountPropagation": string("How mounts propagate between host and container."),
            "name": string("The volume to mount."),
            "readOnly": boolean("Mount read-only."),
            "subPath": string("A path inside the volume to mount instead of its root."),
            "subPathExpr": string("Like subPath, with $(VAR) references expanded."),
        }, ["mountPath", "name"],
    ),
    CORE + "WindowsSecurityContextOptions": definition(
        "Windows-specific security settings.",
        {
            "gmsaCredentialSpec": string("The GMSA credential spec content."),
            "gmsaCredentialSpecName": string("The GMSA credential spec resource to use."),
            "hostProcess": boolean("Run as a Windows host process."),
            "runAsUserName": string("The Windows user to run as."),
        },
    ),
}
