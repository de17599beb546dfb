"""Image pre-download for in-place updates (the ``PreDownloadImageForInPlaceUpdate`` gate).

When a CloneSet gets a new update revision that its pods will take in place over several
batches, upstream asks the nodes to pull the new images early: one ImagePullJob per changed
container image, owned by the CloneSet and aimed at the nodes of its pods that are not yet on
the update revision. The update revision is then labelled, "created" or "ignored", so that the
decision is taken once per revision. Once every pod is on one revision the CloneSet's jobs are
deleted.

This module holds that logic as pure functions over the CloneSet and its two revisions; the
reconcile (:mod:`.sync`) performs the writes. The CloneSet annotations tune the jobs:

- ``apps.kruise.io/image-predownload-parallelism``: nodes pulling at once (1 by default);
- ``apps.kruise.io/image-predownload-timeout-seconds``: each pull's time limit (300 s);
- ``apps.kruise.io/image-predownload-min-updated-ready-pods``: wait until this many (or this
  percentage of) pods are updated and ready before pre-downloading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from kubeloop.api import kruise
from kubeloop.api.intstr import IntOrPercentError, IntOrString, is_int_string, scaled_value
from kubeloop.api.meta import labels_of, name_of, namespace_of, new_controller_ref

from .diffs import PartitionError, int_or_percent_or_zero, partition_replicas
from .inplace import calculate_in_place_update_spec
from .options import CloneSetFeatureGates
from .revisions import template_from_revision
from .spec import max_unavailable_of, partition_of, replicas_of, update_strategy_type

Obj = dict[str, Any]

IMAGE_PULL_JOB_KIND: Final = "ImagePullJob"
IMAGE_PULL_JOB_PLURAL: Final = "imagepulljobs"

PARALLELISM_ANNOTATION: Final = "apps.kruise.io/image-predownload-parallelism"
TIMEOUT_SECONDS_ANNOTATION: Final = "apps.kruise.io/image-predownload-timeout-seconds"
MIN_UPDATED_READY_PODS_ANNOTATION: Final = "apps.kruise.io/image-predownload-min-updated-ready-pods"

CREATED_LABEL: Final = "apps.kruise.io/pre-predownload-created"
"""Revision label: its jobs were created (upstream's key, doubled "pre" included)."""
IGNORED_LABEL: Final = "apps.kruise.io/image-predownload-ignored"
"""Revision label: pre-download does not apply to it."""

MINIMUM_REPLICAS: Final = 3
"""CloneSets with at most this many replicas are not worth pre-downloading for."""
DEFAULT_TIMEOUT_SECONDS: Final = 300
DEFAULT_PARALLELISM: Final = 1
JOB_BACKOFF_LIMIT: Final = 1
JOB_TTL_SECONDS_AFTER_FINISHED: Final = 600

_INT32_MAX: Final = 2**31 - 1
_GO_INT: Final = re.compile(r"^[+-]?[0-9]+$")


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def min_updated_ready_pods(cs: Mapping[str, Any]) -> int:
    """The annotation's threshold resolved against ``spec.replicas`` (rounded up); 0 when
    absent or unreadable (upstream logs the error and goes on with 0)."""
    text = _annotations(cs).get(MIN_UPDATED_READY_PODS_ANNOTATION)
    if not isinstance(text, str):
        return 0
    value: IntOrString = int(text) if is_int_string(text) else text
    try:
        return scaled_value(value, replicas_of(cs), round_up=True)
    except IntOrPercentError:
        return 0


def should_pre_download(cs: Mapping[str, Any], current_revision: str, update_revision: str) -> bool:
    """Whether this reconcile considers pre-downloading for ``update_revision``: the revisions
    differ and enough pods are updated and ready. The ready count is the status's, taken as
    0 when the status still names another update revision (a fresh rollout)."""
    if current_revision == update_revision:
        return False
    status = cs.get("status") or {}
    updated_ready = int(status.get("updatedReadyReplicas") or 0)
    if status.get("updateRevision") != update_revision:
        updated_ready = 0
    return min_updated_ready_pods(cs) <= updated_ready


@dataclass(frozen=True)
class PreDownloadPlan:
    """What to do for an update revision.

    ``none``: it was decided before (labelled); ``ignore``: label it ignored (``reason`` says
    why); ``create``: create ``jobs`` then label it created; ``error``: the partition cannot be
    read, leave it for the next reconcile.
    """

    action: Literal["none", "ignore", "create", "error"]
    reason: str = ""
    jobs: list[Obj] = field(default_factory=list)


def changed_images(current_revision: Mapping[str, Any], update_revision: Mapping[str, Any]) -> dict[str, str]:
    """Container name -> image, for the update revision's containers that are new or whose
    image differs from the current revision's container of the same name."""
    def containers(revision: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        spec = template_from_revision(revision).get("spec") or {}
        return [c for c in spec.get("containers") or () if isinstance(c, Mapping)]

    old = {str(c.get("name")): c.get("image") for c in containers(current_revision)}
    return {str(c.get("name")): str(c.get("image")) for c in containers(update_revision)
            if str(c.get("name")) not in old or old[str(c.get("name"))] != c.get("image")}


def plan_pre_download(cs: Mapping[str, Any], current_revision: Mapping[str, Any],
                      update_revision: Mapping[str, Any], gates: CloneSetFeatureGates) -> PreDownloadPlan:
    """Upstream's decision for ``update_revision``, in upstream's order of checks."""
    labels = labels_of(update_revision)
    if CREATED_LABEL in labels or IGNORED_LABEL in labels:
        return PreDownloadPlan("none")
    strategy = update_strategy_type(cs)
    if strategy == kruise.RECREATE:
        return PreDownloadPlan("ignore", "the update strategy is ReCreate")
    replicas = replicas_of(cs)
    if replicas <= MINIMUM_REPLICAS:
        return PreDownloadPlan("ignore", f"replicas {replicas} <= {MINIMUM_REPLICAS}")
    try:
        partition = partition_replicas(partition_of(cs), replicas)
    except PartitionError as exc:
        return PreDownloadPlan("error", f"invalid partition: {exc}")
    max_unavailable = int_or_percent_or_zero(max_unavailable_of(cs), replicas, round_up=False)
    if partition == 0 and max_unavailable >= replicas:
        return PreDownloadPlan("ignore", "every pod is updated in one batch")
    in_place = calculate_in_place_update_spec(
        current_revision, update_revision, gates=gates,
        ignore_volume_claim_template_hash=strategy == kruise.IN_PLACE_ONLY,
    )
    if in_place is None:
        return PreDownloadPlan("ignore", "the revision cannot be applied in place")
    jobs = [image_pull_job(cs, update_revision, container, image)
            for container, image in sorted(changed_images(current_revision, update_revision).items())]
    return PreDownloadPlan("create", jobs=jobs)


def _int_annotation(cs: Mapping[str, Any], key: str, default: int, *, int32: bool) -> int:
    text = _annotations(cs).get(key)
    if not isinstance(text, str) or _GO_INT.match(text) is None:
        return default
    value = int(text)
    if int32 and not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        return default
    return value


def image_pull_job(cs: Mapping[str, Any], update_revision: Mapping[str, Any], container: str, image: str) -> Obj:
    """The ImagePullJob pulling ``image`` (of ``container``) for ``update_revision``.

    Named ``<revision>-<container>``, controlled by the CloneSet, labelled with the template's
    labels plus the revision hash (so the CloneSet's selector matches it, as it does everything
    the CloneSet owns), and aimed at the nodes of the CloneSet's pods not yet on the revision.
    """
    spec = cs.get("spec") or {}
    template = spec.get("template") or {}
    template_meta = template.get("metadata") or {}
    revision_hash = str(labels_of(update_revision).get(kruise.REVISION_HASH_LABEL, ""))
    labels = {**(template_meta.get("labels") or {}), kruise.REVISION_HASH_LABEL: revision_hash}
    selector: Obj = {key: value for key, value in (spec.get("selector") or {}).items()
                     if key in ("matchLabels", "matchExpressions")}
    selector["matchExpressions"] = [*selector.get("matchExpressions", ()), {
        "key": kruise.CONTROLLER_REVISION_HASH_LABEL, "operator": "NotIn",
        "values": [name_of(update_revision), revision_hash],
    }]
    sandbox: Obj = {"labels": dict(labels)}
    if template_meta.get("annotations"):
        sandbox["annotations"] = dict(template_meta["annotations"])
    job_spec: Obj = {
        "image": image,
        "podSelector": selector,
        "parallelism": _int_annotation(cs, PARALLELISM_ANNOTATION, DEFAULT_PARALLELISM, int32=False),
        "pullPolicy": {
            "backoffLimit": JOB_BACKOFF_LIMIT,
            "timeoutSeconds": _int_annotation(cs, TIMEOUT_SECONDS_ANNOTATION, DEFAULT_TIMEOUT_SECONDS, int32=True),
        },
        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": JOB_TTL_SECONDS_AFTER_FINISHED},
        "sandboxConfig": sandbox,
    }
    secrets = [str(s.get("name")) for s in (template.get("spec") or {}).get("imagePullSecrets") or ()
               if isinstance(s, Mapping) and s.get("name")]
    if secrets:
        job_spec["pullSecrets"] = secrets
    return {
        "apiVersion": kruise.API_VERSION,
        "kind": IMAGE_PULL_JOB_KIND,
        "metadata": {
            "name": f"{name_of(update_revision)}-{container}",
            "namespace": namespace_of(cs),
            "labels": labels,
            "ownerReferences": [new_controller_ref(cs, kruise.API_VERSION, kruise.CLONESET_KIND)],
        },
        "spec": job_spec,
    }


def revision_label_patch(key: str) -> Obj:
    """The merge patch labelling a revision with ``key: "true"``."""
    return {"metadata": {"labels": {key: "true"}}}


def jobs_controlled_by(cs: Mapping[str, Any], jobs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The jobs whose controller reference is this CloneSet (by UID)."""
    uid = (cs.get("metadata") or {}).get("uid")
    owned = []
    for job in jobs:
        refs = (job.get("metadata") or {}).get("ownerReferences") or ()
        if any(isinstance(r, Mapping) and r.get("controller") and r.get("uid") == uid for r in refs):
            owned.append(job)
    return owned
