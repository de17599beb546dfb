"""Events the Deployment controller records: reasons and the messages it builds.

Planning functions return :class:`Event` values; the caller records them against the
Deployment at the point the docstring of the planner names (usually after the write succeeded).
"""

from __future__ import annotations

from dataclasses import dataclass

NORMAL = "Normal"
WARNING = "Warning"

SCALING_REPLICA_SET = "ScalingReplicaSet"
REPLICA_SET_CREATE_ERROR = "ReplicaSetCreateError"
SELECTING_ALL = "SelectingAll"
ROLLBACK_DONE = "DeploymentRollback"
ROLLBACK_REVISION_NOT_FOUND = "DeploymentRollbackRevisionNotFound"
ROLLBACK_TEMPLATE_UNCHANGED = "DeploymentRollbackTemplateUnchanged"

SELECTING_ALL_MESSAGE = "This deployment is selecting all pods. A non-empty selector is required."


@dataclass(frozen=True)
class Event:
    """An Event to record against the Deployment."""

    type: str
    reason: str
    message: str
