"""Well-known names of OpenKruise's ``apps.kruise.io`` API used by the CloneSet.

Both the CloneSet controller and the embedded API server's CloneSet admission need these
strings; they live here, in the bottom layer, so that neither imports the other. The values are
facts of the upstream API (label, annotation and condition names), not behaviour.
"""

from __future__ import annotations

from typing import Final

GROUP: Final = "apps.kruise.io"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
CLONESET_KIND: Final = "CloneSet"
CLONESET_PLURAL: Final = "clonesets"

# Pod and PVC labels written by the controller.
INSTANCE_ID_LABEL: Final = "apps.kruise.io/cloneset-instance-id"
CONTROLLER_REVISION_HASH_LABEL: Final = "controller-revision-hash"
POD_TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
SPECIFIED_DELETE_LABEL: Final = "apps.kruise.io/specified-delete"

# Lifecycle: a pod label holding the state and an annotation with the time it was written.
LIFECYCLE_STATE_LABEL: Final = "lifecycle.apps.kruise.io/state"
LIFECYCLE_TIMESTAMP_ANNOTATION: Final = "lifecycle.apps.kruise.io/timestamp"
STATE_PREPARING_NORMAL: Final = "PreparingNormal"
STATE_NORMAL: Final = "Normal"
STATE_PREPARING_UPDATE: Final = "PreparingUpdate"
STATE_UPDATING: Final = "Updating"
STATE_UPDATED: Final = "Updated"
STATE_PREPARING_DELETE: Final = "PreparingDelete"

# In-place update bookkeeping on the pod (the unprefixed keys are legacy names still read).
INPLACE_UPDATE_STATE_ANNOTATION: Final = "apps.kruise.io/inplace-update-state"
INPLACE_UPDATE_STATE_ANNOTATION_OLD: Final = "inplace-update-state"
INPLACE_UPDATE_GRACE_ANNOTATION: Final = "apps.kruise.io/inplace-update-grace"
INPLACE_UPDATE_GRACE_ANNOTATION_OLD: Final = "inplace-update-grace"
RUNTIME_CONTAINERS_META_ANNOTATION: Final = "apps.kruise.io/runtime-containers-meta"

# Readiness gates / pod condition types.
INPLACE_UPDATE_READY: Final = "InPlaceUpdateReady"
KRUISE_POD_READY: Final = "KruisePodReady"


# ControllerRevision metadata.
REVISION_HASH_LABEL: Final = "controller.kubernetes.io/hash"
VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION: Final = "kruise.io/cloneset-volumeclaimtemplate-hash"

# CloneSet label switching "exclude PreparingDelete pods from the scale arithmetic" on.
SCALING_EXCLUDE_PREPARING_DELETE_LABEL: Final = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"

# Container env variables of the launch-priority feature.
CONTAINER_PRIORITY_ENV: Final = "KRUISE_CONTAINER_PRIORITY"
CONTAINER_BARRIER_ENV: Final = "KRUISE_CONTAINER_BARRIER"
# Pod annotation asking for containers to start in spec order, and the value that does so.
CONTAINER_LAUNCH_PRIORITY_ANNOTATION: Final = "apps.kruise.io/container-launch-priority"
CONTAINER_LAUNCH_ORDERED: Final = "Ordered"
# The barrier env points into the ConfigMap ``<pod name><suffix>``, key ``<prefix><priority>``.
BARRIER_CONFIGMAP_SUFFIX: Final = "-barrier"
BARRIER_KEY_PREFIX: Final = "p_"
# Name of OpenKruise's mutating pod webhook (it appears in the messages of its rejections).
POD_MUTATING_WEBHOOK: Final = "mpod.kb.io"

# Update strategy types accepted for v1alpha1.
RECREATE: Final = "ReCreate"
IN_PLACE_IF_POSSIBLE: Final = "InPlaceIfPossible"
IN_PLACE_ONLY: Final = "InPlaceOnly"

DEFAULT_MAX_UNAVAILABLE: Final = "20%"
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
MAX_INT32: Final = 2**31 - 1

# CloneSet condition types and Progressing reasons.
CONDITION_FAILED_SCALE: Final = "FailedScale"
CONDITION_FAILED_UPDATE: Final = "FailedUpdate"
CONDITION_PROGRESSING: Final = "Progressing"
REASON_AVAILABLE: Final = "CloneSetAvailable"
REASON_PAUSED: Final = "CloneSetPaused"
REASON_PARTITION_AVAILABLE: Final = "ProgressPartitionAvailable"
REASON_UPDATED: Final = "CloneSetUpdated"
REASON_DEADLINE_EXCEEDED: Final = "ProgressDeadlineExceeded"
