"""The API side of image pre-download: creating a CloneSet's ImagePullJobs, labelling its
revisions, deleting the jobs once the rollout is over.

The decisions are :mod:`.predownload`'s; this class performs them during a reconcile (only
with the ``PreDownloadImageForInPlaceUpdate`` gate on), as upstream does, after the revisions
are known and before pods are scaled or updated. Failures are reported (event or log) and never
stop the reconcile: pre-download is an optimisation.

ImagePullJobs are not cached (the CRD may not be installed): the jobs of a CloneSet are listed
only when its revisions have converged and this process has not yet seen them gone, so a
settled CloneSet costs no request per reconcile.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import name_of, namespace_of, object_key, resource_version_of, uid_of
from kubeloop.client import (
    CONTROLLER_REVISIONS,
    ApiClient,
    ApiException,
    Resource,
    is_already_exists,
    is_not_found,
)
from kubeloop.runtime.events import NORMAL, EventRecorder
from kubeloop.runtime.expectations import ResourceVersionExpectations

from .options import CloneSetFeatureGates
from .predownload import (
    CREATED_LABEL,
    IGNORED_LABEL,
    IMAGE_PULL_JOB_KIND,
    IMAGE_PULL_JOB_PLURAL,
    jobs_controlled_by,
    plan_pre_download,
    revision_label_patch,
    should_pre_download,
)

log = logging.getLogger(__name__)

IMAGE_PULL_JOBS = Resource(kruise.GROUP, kruise.VERSION, IMAGE_PULL_JOB_PLURAL, IMAGE_PULL_JOB_KIND, True,
                           frozenset({"status"}))
"""The ImagePullJob resource of ``apps.kruise.io/v1alpha1``."""


class ImagePullJobs:
    """Creates and deletes one process's ImagePullJobs for the CloneSets it reconciles."""

    def __init__(self, client: ApiClient, recorder: EventRecorder, versions: ResourceVersionExpectations,
                 gates: CloneSetFeatureGates) -> None:
        self._client = client
        self._recorder = recorder
        self._versions = versions
        self._gates = gates
        self._cleaned: set[str] = set()
        """Keys of CloneSets whose jobs this process deleted (or found none of) since their
        revisions converged; a new job takes the key out again."""

    async def sync(self, cs: Mapping[str, Any], current_revision: Mapping[str, Any],
                   update_revision: Mapping[str, Any], label_selector: str) -> None:
        """Pre-download for a new update revision, or clean up once the revisions agree."""
        key = object_key(cs)
        if name_of(current_revision) != name_of(update_revision):
            if should_pre_download(cs, name_of(current_revision), name_of(update_revision)):
                await self._pre_download(cs, current_revision, update_revision)
        elif key not in self._cleaned and await self._delete_jobs(cs, label_selector):
            self._cleaned.add(key)

    def forget(self, key: str) -> None:
        """The CloneSet is gone: drop what was remembered about it."""
        self._cleaned.discard(key)

    async def _pre_download(self, cs: Mapping[str, Any], current_revision: Mapping[str, Any],
                            update_revision: Mapping[str, Any]) -> None:
        plan = plan_pre_download(cs, current_revision, update_revision, self._gates)
        if plan.action == "none":
            return
        if plan.action == "error":
            log.warning("cloneset %s: not pre-downloading images: %s", object_key(cs), plan.reason)
            return
        if plan.action == "ignore":
            log.debug("cloneset %s: no ImagePullJob for %s: %s", object_key(cs), name_of(update_revision),
                      plan.reason)
            await self._label(cs, update_revision, IGNORED_LABEL)
            return
        self._cleaned.discard(object_key(cs))
        for job in plan.jobs:
            name = name_of(job)
            try:
                await self._client.create(IMAGE_PULL_JOBS, job, namespace=namespace_of(cs))
            except ApiException as exc:
                if not is_already_exists(exc):
                    # Upstream reports this as a Normal event and still labels the revision.
                    self._recorder.event(cs, NORMAL, "FailedCreateImagePullJob",
                                         f"failed to create ImagePullJob {name}: {exc}")
                continue
            self._recorder.event(cs, NORMAL, "CreatedImagePullJob",
                                 f"created ImagePullJob {name} for image: {job['spec']['image']}")
        await self._label(cs, update_revision, CREATED_LABEL)

    async def _label(self, cs: Mapping[str, Any], revision: Mapping[str, Any], key: str) -> None:
        try:
            written = await self._client.patch(CONTROLLER_REVISIONS, name_of(revision), revision_label_patch(key),
                                               namespace=namespace_of(revision))
        except ApiException as exc:
            log.warning("cloneset %s: cannot label revision %s %s: %s", object_key(cs), name_of(revision), key, exc)
            return
        if resource_version_of(written) != resource_version_of(revision):
            self._versions.expect(uid_of(written), resource_version_of(written))

    async def _delete_jobs(self, cs: Mapping[str, Any], label_selector: str) -> bool:
        """Delete the CloneSet's jobs; whether none is left (no ImagePullJob API counts as none)."""
        try:
            listed = await self._client.list(IMAGE_PULL_JOBS, namespace=namespace_of(cs), label_selector=label_selector)
        except ApiException as exc:
            if is_not_found(exc):
                return True
            log.warning("cloneset %s: cannot list ImagePullJobs: %s", object_key(cs), exc)
            return False
        done = True
        for job in jobs_controlled_by(cs, listed.get("items") or []):
            try:
                await self._client.delete(IMAGE_PULL_JOBS, name_of(job), namespace=namespace_of(cs))
            except ApiException as exc:
                if not is_not_found(exc):
                    log.warning("cloneset %s: cannot delete ImagePullJob %s: %s", object_key(cs), name_of(job), exc)
                    done = False
                continue
            log.info("cloneset %s: deleted ImagePullJob %s", object_key(cs), name_of(job))
        return done
