"""Pause, resume and undo decided without I/O (kubeloop.dashboard.actions)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.dashboard.actions import (
    Action,
    ActionError,
    TokenVerdict,
    check_bearer,
    cloneset_undo_plan,
    deployment_undo_plan,
    plan,
)
from tests.unit.dashboard.builders import cloneset, controller_revision, deployment, replica_set


@pytest.mark.parametrize(("expected", "header", "verdict"), [
    ("s3cret", "Bearer s3cret", TokenVerdict.OK),
    ("s3cret", "bearer  s3cret ", TokenVerdict.OK),
    ("s3cret", "Bearer s3cre", TokenVerdict.WRONG),
    ("s3cret", "Bearer s3cret2", TokenVerdict.WRONG),
    ("s3cret", "Basic s3cret", TokenVerdict.MISSING),
    ("s3cret", "Bearer ", TokenVerdict.MISSING),
    ("s3cret", None, TokenVerdict.MISSING),
    (None, "Bearer s3cret", TokenVerdict.DISABLED),
    ("", "Bearer ", TokenVerdict.DISABLED),
])
def test_check_bearer(expected: str | None, header: str | None, verdict: TokenVerdict) -> None:
    assert check_bearer(expected, header) is verdict


@pytest.mark.parametrize(("kind", "workload", "action", "patch", "message"), [
    ("Deployment", deployment("web"), Action.PAUSE, {"spec": {"paused": True}}, "deployment.apps/web paused"),
    ("Deployment", deployment("web"), Action.RESUME, None, "deployment.apps/web already resumed"),
    ("CloneSet", cloneset("cs"), Action.PAUSE, {"spec": {"updateStrategy": {"paused": True}}},
     "cloneset.apps.kruise.io/cs paused"),
])
def test_pause_and_resume(kind: str, workload: dict[str, Any], action: Action, patch: Any, message: str) -> None:
    decided = plan(kind, action, workload, [])
    assert (decided.patch, decided.patch_type, decided.message) == (patch, "merge", message)
    workload = copy.deepcopy(workload)
    (workload["spec"]["updateStrategy"] if kind == "CloneSet" else workload["spec"])["paused"] = True
    # Once paused, resuming changes something and pausing again does not.
    resumed = plan(kind, Action.RESUME, workload, [])
    assert resumed.patch is not None and resumed.message.endswith(" resumed")
    again = plan(kind, Action.PAUSE, workload, [])
    assert again.patch is None and again.message.endswith(" already paused")


def rolled_deployment() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    web = deployment("web", image="app:3", revision="3")
    web["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
    old = replica_set(web, "aaa", 1, image="app:1", replicas=0)
    previous = replica_set(web, "bbb", 2, image="app:2", replicas=0)
    previous["metadata"]["annotations"]["kubernetes.io/change-cause"] = "set image app:2"
    previous["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "4"
    current = replica_set(web, "ccc", 3, image="app:3", replicas=4)
    return web, [old, current, previous]


def test_deployment_undo_restores_the_previous_template_minus_its_hash() -> None:
    web, replica_sets = rolled_deployment()
    before = copy.deepcopy(replica_sets)
    decided = deployment_undo_plan(web, replica_sets)
    assert decided.patch_type == "json" and decided.message == "deployment.apps/web rolled back"
    assert decided.patch == [
        {"op": "replace", "path": "/spec/template",
         "value": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "app:2"}]}}},
        {"op": "replace", "path": "/metadata/annotations",
         # the Deployment's own bookkeeping stays; the ReplicaSet's other annotations come along
         "value": {"deployment.kubernetes.io/revision": "3",
                   "kubectl.kubernetes.io/last-applied-configuration": "{}",
                   "kubernetes.io/change-cause": "set image app:2"}},
    ]
    assert replica_sets == before  # cache entries are never modified


def test_deployment_undo_refusals_and_skips() -> None:
    web, replica_sets = rolled_deployment()
    with pytest.raises(ActionError, match=r'^no rollout history found for deployment "web"$'):
        deployment_undo_plan(web, replica_sets[1:2])
    paused = copy.deepcopy(web)
    paused["spec"]["paused"] = True
    with pytest.raises(ActionError, match=r"^you cannot rollback a paused deployment; resume it first"):
        deployment_undo_plan(paused, replica_sets)
    same = copy.deepcopy(web)
    same["spec"]["template"]["spec"]["containers"][0]["image"] = "app:2"
    skipped = deployment_undo_plan(same, replica_sets)
    assert skipped.patch is None
    assert skipped.message == "deployment.apps/web skipped rollback (current template already matches revision 0)"


def test_cloneset_undo() -> None:
    cs = cloneset("cs")  # its template runs app:2
    revisions = [controller_revision(cs, "cs-1", 1, "app:1"), controller_revision(cs, "cs-3", 3, "app:3"),
                 controller_revision(cs, "cs-2", 2, "app:2")]
    skipped = cloneset_undo_plan(cs, revisions)  # the previous revision (2) is what runs already
    assert skipped.patch is None and "skipped rollback" in skipped.message
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = "app:3"
    decided = cloneset_undo_plan(cs, revisions)
    assert decided.patch == [{"op": "replace", "path": "/spec/template",
                              "value": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "app:2"}]}}}]
    assert decided.message == "cloneset.apps.kruise.io/cs rolled back"
    with pytest.raises(ActionError, match=r"^no last revision to roll back to$"):
        cloneset_undo_plan(cs, revisions[:1])


async def test_action_routes_refuse_before_touching_the_cluster() -> None:
    from typing import cast

    from aiohttp.test_utils import TestClient, TestServer

    from kubeloop.client import ApiClient
    from kubeloop.dashboard.app import dashboard_app
    from kubeloop.dashboard.feed import DashboardFeed
    from kubeloop.dashboard.model import ClusterModel

    class NoCluster:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the cluster was reached ({name}) before the token was checked")

    url = "/api/workloads/Deployment/default/web/undo"
    for token, header, status, words in [
        ("s3cret", None, 401, "needs the cluster's bearer token"),
        ("s3cret", "Bearer nope", 401, "does not match"),
        (None, "Bearer s3cret", 403, "actions are disabled"),
    ]:
        app = dashboard_app(DashboardFeed(ClusterModel()), client=cast(ApiClient, NoCluster()), action_token=token)
        http: TestClient[Any, Any] = TestClient(TestServer(app))
        await http.start_server()
        try:
            answer = await http.post(url, headers={"Authorization": header} if header else {})
            assert answer.status == status and words in (await answer.json())["message"]
            assert (answer.headers.get("WWW-Authenticate") is not None) == (status == 401)
        finally:
            await http.close()
