"""Feature gates of the CloneSet controller.

OpenKruise changes a few behaviours behind feature gates. We default every gate as upstream
does (v1.8) and let the controller's caller switch them, so that both behaviours can be
tested and run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CloneSetFeatureGates:
    """Switches for upstream's behaviour-changing gates (defaults as upstream's defaults)."""

    partition_rollback: bool = False
    """``CloneSetPartitionRollback``: raising the partition moves updated pods back to the
    current revision. Off: pods only ever move forward to the update revision."""

    preparing_update_as_update: bool = False
    """``PreparingUpdateAsUpdate``: when scaling, a pod in ``PreparingUpdate`` counts as being
    on the update revision (so replacements get the current revision)."""

    short_hash: bool = False
    """``CloneSetShortHash``: the ``controller-revision-hash`` label holds only the hash, not
    ``<cloneset>-<hash>``."""

    recreate_pod_when_change_vct: bool = False
    """``RecreatePodWhenChangeVCTInCloneSetGate``: a revision whose volumeClaimTemplates hash
    differs from the pod's revision cannot be applied in place (except under InPlaceOnly)."""

    scaling_exclude_preparing_delete: bool = False
    """Controller-wide flag ``--cloneset-scaling-exclude-preparing-delete``: leave pods in
    ``PreparingDelete`` out of the scale arithmetic (a CloneSet label can also ask for it)."""

    in_place_update_env_from_metadata: bool = True
    """``InPlaceUpdateEnvFromMetadata``: a changed label or annotation that a container reads
    through an env ``fieldRef`` is applied in place (and that container restarted)."""

    kruise_pod_readiness_gate: bool = False
    """``KruisePodReadinessGate``: new pods get the ``KruisePodReady`` readiness gate (upstream's
    pod webhook injects it), so a lifecycle hook's ``markPodNotReady`` takes the pod out of
    service. Off: only pods whose template carries that gate are affected."""

    pre_download_image_for_in_place_update: bool = False
    """``PreDownloadImageForInPlaceUpdate``: when a new revision can be applied in place, create
    an ImagePullJob per changed image so nodes fetch it before the pods are updated."""


DEFAULT_GATES = CloneSetFeatureGates()


@dataclass(frozen=True)
class CloneSetBehaviour:
    """Behaviours that changed between upstream releases without a feature gate."""

    normal_requires_scheduling: bool = False
    """Without a preNormal hook, move a pod from ``PreparingNormal`` to ``Normal`` only once it
    has a node (upstream after v1.8; v1.8.4 moves it at once)."""


DEFAULT_BEHAVIOUR = CloneSetBehaviour()
