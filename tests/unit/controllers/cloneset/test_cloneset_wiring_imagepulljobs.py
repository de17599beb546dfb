"""The API side of image pre-download: which requests a reconcile makes, against a fake API."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import orjson
from cloneset_pods import make_cloneset
from test_cloneset_wiring_sync import CapturingRecorder

from kubeloop.api import kruise
from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, Request
from kubeloop.controllers.cloneset.imagepulljobs import ImagePullJobs
from kubeloop.controllers.cloneset.options import DEFAULT_GATES
from kubeloop.controllers.cloneset.predownload import CREATED_LABEL, IGNORED_LABEL, image_pull_job
from kubeloop.controllers.cloneset.revisions import new_revision
from kubeloop.runtime.expectations import ResourceVersionExpectations

Obj = dict[str, Any]
GATES = dataclasses.replace(DEFAULT_GATES, pre_download_image_for_in_place_update=True)
JOBS_PATH = "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs"
REVISIONS_PATH = "/apis/apps/v1/namespaces/default/controllerrevisions"


def status(code: int, reason: str) -> MockResponse:
    return MockResponse.json({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                              "code": code, "message": reason}, status=code)


class FakeApi:
    """Answers job and revision requests from canned tables and records what was asked."""

    def __init__(self, *, create: MockResponse | None = None, jobs: list[Obj] | None = None) -> None:
        self.create = create
        self.jobs = jobs
        self.calls: list[tuple[str, str]] = []
        self.bodies: list[Any] = []

    def __call__(self, request: Request) -> MockResponse:
        self.calls.append((request.method, request.path))
        self.bodies.append(orjson.loads(request.body) if request.body else None)
        if request.path.startswith(REVISIONS_PATH) and request.method == "PATCH":
            patch = orjson.loads(request.body or b"{}")
            return MockResponse.json({"metadata": {"name": request.path.rsplit("/", 1)[-1], "uid": "rev-uid",
                                                   "resourceVersion": "8", **patch["metadata"]}})
        if request.path == JOBS_PATH and request.method == "POST":
            return self.create or MockResponse.json(orjson.loads(request.body or b"{}"), status=201)
        if request.path == JOBS_PATH and request.method == "GET":
            if self.jobs is None:
                return status(404, "NotFound")
            return MockResponse.json({"kind": "ImagePullJobList", "metadata": {}, "items": self.jobs})
        if request.path.startswith(JOBS_PATH + "/") and request.method == "DELETE":
            return MockResponse.json({"kind": "Status", "status": "Success"})
        raise AssertionError(f"unexpected API call {request.method} {request.path}")


def setup(api: FakeApi) -> tuple[ImagePullJobs, CapturingRecorder, ResourceVersionExpectations]:
    client = ApiClient(ClientConfig("https://k8s.example:6443", qps=0), transport=MockTransport(api))
    recorder = CapturingRecorder()
    versions = ResourceVersionExpectations()
    return ImagePullJobs(client, recorder, versions, GATES), recorder, versions


def rollout(strategy: str = kruise.IN_PLACE_IF_POSSIBLE) -> tuple[Obj, Obj, Obj]:
    cs = make_cloneset(5, partition=1, strategy_type=strategy)
    cs["metadata"]["uid"] = "cs-uid"
    current = new_revision(cs, 1, None)
    new = copy.deepcopy(cs)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "img:2"
    update = new_revision(new, 2, None)
    for revision in (current, update):
        revision["metadata"].update(uid="rev-uid", resourceVersion="7")
    return new, current, update


async def test_jobs_are_created_then_the_revision_labelled() -> None:
    api = FakeApi()
    jobs, recorder, versions = setup(api)
    cs, current, update = rollout()
    await jobs.sync(cs, current, update, "app=cs")
    assert api.calls == [("POST", JOBS_PATH), ("PATCH", f"{REVISIONS_PATH}/{update['metadata']['name']}")]
    assert api.bodies[0]["spec"]["image"] == "img:2"
    assert api.bodies[1] == {"metadata": {"labels": {CREATED_LABEL: "true"}}}
    assert [reason for _, reason, _ in recorder.events] == ["CreatedImagePullJob"]
    assert not versions.satisfied("rev-uid", "7") and versions.satisfied("rev-uid", "8")


async def test_a_failed_creation_is_reported_and_the_revision_still_labelled() -> None:
    api = FakeApi(create=status(404, "NotFound"))
    jobs, recorder, _ = setup(api)
    cs, current, update = rollout()
    await jobs.sync(cs, current, update, "app=cs")
    assert [method for method, _ in api.calls] == ["POST", "PATCH"]
    assert [reason for _, reason, _ in recorder.events] == ["FailedCreateImagePullJob"]


async def test_an_existing_job_is_no_failure() -> None:
    api = FakeApi(create=status(409, "AlreadyExists"))
    jobs, recorder, _ = setup(api)
    cs, current, update = rollout()
    await jobs.sync(cs, current, update, "app=cs")
    assert [method for method, _ in api.calls] == ["POST", "PATCH"]
    assert recorder.events == []


async def test_an_ignored_revision_is_labelled_without_jobs() -> None:
    api = FakeApi()
    jobs, _, _ = setup(api)
    cs, current, update = rollout(kruise.RECREATE)
    await jobs.sync(cs, current, update, "app=cs")
    assert api.calls == [("PATCH", f"{REVISIONS_PATH}/{update['metadata']['name']}")]
    assert api.bodies[0] == {"metadata": {"labels": {IGNORED_LABEL: "true"}}}


async def test_a_labelled_revision_or_too_few_ready_pods_make_no_request() -> None:
    api = FakeApi()
    jobs, _, _ = setup(api)
    cs, current, update = rollout()
    labelled = copy.deepcopy(update)
    labelled["metadata"]["labels"][CREATED_LABEL] = "true"
    await jobs.sync(cs, current, labelled, "app=cs")
    waiting = copy.deepcopy(cs)
    waiting["metadata"]["annotations"] = {"apps.kruise.io/image-predownload-min-updated-ready-pods": "1"}
    await jobs.sync(waiting, current, update, "app=cs")
    assert api.calls == []


async def test_converged_revisions_delete_our_jobs_once() -> None:
    cs, current, update = rollout()
    ours = image_pull_job(cs, update, "c", "img:2")
    foreign = copy.deepcopy(ours)
    foreign["metadata"].update(name="other", ownerReferences=[{"uid": "x", "controller": True}])
    api = FakeApi(jobs=[ours, foreign])
    jobs, _, _ = setup(api)
    await jobs.sync(cs, update, update, "app=cs")
    await jobs.sync(cs, update, update, "app=cs")
    assert api.calls == [("GET", JOBS_PATH), ("DELETE", f"{JOBS_PATH}/{ours['metadata']['name']}")]
    # A new rollout's jobs make the next convergence look again; a forgotten CloneSet too.
    api.jobs = []
    await jobs.sync(cs, current, update, "app=cs")
    await jobs.sync(cs, update, update, "app=cs")
    jobs.forget("default/cs")
    await jobs.sync(cs, update, update, "app=cs")
    assert [method for method, _ in api.calls[2:]] == ["POST", "PATCH", "GET", "GET"]


async def test_without_the_image_pull_job_api_there_is_nothing_to_delete() -> None:
    api = FakeApi(jobs=None)
    jobs, _, _ = setup(api)
    cs, _, update = rollout()
    await jobs.sync(cs, update, update, "app=cs")
    await jobs.sync(cs, update, update, "app=cs")
    assert api.calls == [("GET", JOBS_PATH)]
