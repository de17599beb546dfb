"""Pod facts read once per pod version, and the controller paths that rely on them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubeloop.api.labels import selector_from_label_selector
from kubeloop.api.meta import format_time
from kubeloop.controllers.replicaset.controller import ReplicaSetController
from kubeloop.controllers.replicaset.podfacts import PodFactsCache, pod_facts
from kubeloop.controllers.replicaset.status import ReplicaCounts, count_replicas
from kubeloop.runtime.handlers import Request
from tests.unit.controllers.controller_fakes import FakeApi, FakeQueue, FakeRecorder, cache

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True, "name": "rs", "uid": "rs-uid"}


def make_pod(name: str = "p", *, rv: str = "1", phase: str = "Running", ready: bool | None = True,
             since: str | None = None, deleting: bool = False, owned: bool = True,
             labels: dict[str, str] | None = None, node: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv,
                 "labels": labels if labels is not None else {"app": "web", "extra": "yes"}}
    if owned:
        meta["ownerReferences"] = [dict(OWNER)]
    if deleting:
        meta["deletionTimestamp"] = "2024-06-01T11:00:00Z"
    conditions: list[Obj] = []
    if ready is not None:
        condition: Obj = {"type": "Ready", "status": "True" if ready else "False"}
        if since is not None:
            condition["lastTransitionTime"] = since
        conditions.append(condition)
    return {"metadata": meta, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": conditions}}


@pytest.mark.parametrize(
    ("pod", "active", "terminating", "ready", "ready_since"),
    [
        (make_pod(), True, False, True, None),
        (make_pod(ready=False, since="2024-06-01T10:00:00Z"), True, False, False, None),
        (make_pod(since="2024-06-01T10:00:00Z"), True, False, True, datetime(2024, 6, 1, 10, tzinfo=UTC)),
        (make_pod(since="not a time"), True, False, True, None),
        (make_pod(ready=None), True, False, False, None),
        (make_pod(deleting=True), False, True, True, None),
        (make_pod(phase="Succeeded", deleting=True), False, False, True, None),
        (make_pod(phase="Failed"), False, False, True, None),
    ],
)
def test_pod_facts_table(pod: Obj, active: bool, terminating: bool, ready: bool,
                         ready_since: datetime | None) -> None:
    facts = pod_facts(pod)
    assert (facts.active, facts.terminating, facts.ready, facts.ready_since) == (active, terminating, ready,
                                                                                 ready_since)
    assert facts.controller_uid == "rs-uid"
    assert pod_facts(make_pod(owned=False)).controller_uid is None


def test_counts_from_facts_agree_with_counting_the_pods() -> None:
    recent, old = format_time(NOW - timedelta(seconds=30)), format_time(NOW - timedelta(hours=1))
    pods = [make_pod("a", since=recent), make_pod("b", since=old), make_pod("c", ready=False),
            make_pod("d", labels={"app": "web"}, since=old), make_pod("e"), make_pod("f", ready=None)]
    template_labels = {"app": "web", "extra": "yes"}
    for min_ready in (0, 60):
        rs = {"spec": {"minReadySeconds": min_ready, "template": {"metadata": {"labels": template_labels}}}}
        expected = count_replicas(rs, pods, NOW, [])
        facts = [pod_facts(pod) for pod in pods]
        assert expected == ReplicaCounts(
            replicas=len(pods),
            fully_labeled=sum(f.fully_labeled(template_labels) for f in facts),
            ready=sum(f.ready for f in facts),
            available=sum(f.available(min_ready, NOW) for f in facts),
            terminating=0,
        )
    assert count_replicas(rs, pods, NOW, []).available == 2  # b and d, ready for an hour


def test_the_cache_reads_a_pod_once_per_resource_version() -> None:
    facts = PodFactsCache()
    first = facts.facts(make_pod(rv="1"))
    assert facts.facts(make_pod(rv="1")) is first
    changed = facts.facts(make_pod(rv="2", ready=False))
    assert changed is not first and not changed.ready and len(facts) == 1
    facts.forget(make_pod(rv="2"))
    assert len(facts) == 0
    unversioned = make_pod(rv="")
    assert facts.facts(unversioned) == pod_facts(unversioned) and len(facts) == 0


def test_selector_matches_are_remembered_per_selector_object() -> None:
    facts = PodFactsCache()
    web = selector_from_label_selector({"matchLabels": {"app": "web"}})
    db = selector_from_label_selector({"matchLabels": {"app": "db"}})
    pod = make_pod()
    assert facts.matches(web, pod) and not facts.matches(db, pod) and facts.matches(web, pod)
    relabelled = make_pod(rv="2", labels={"app": "db"})
    assert not facts.matches(web, relabelled) and facts.matches(db, relabelled)


def replica_set() -> Obj:
    return {
        "metadata": {"name": "rs", "namespace": "default", "uid": "rs-uid", "generation": 1, "resourceVersion": "5"},
        "spec": {"replicas": 2, "minReadySeconds": 0, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web", "extra": "yes"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }


def build(pods: list[Obj]) -> tuple[ReplicaSetController, FakeApi, FakeQueue]:
    api, queue = FakeApi(), FakeQueue()
    rsc = ReplicaSetController(api, cache(replica_set()), cache(*pods), FakeRecorder(), terminating_replicas=True)
    return rsc, api, queue


def test_a_pod_update_that_changes_nothing_the_sync_reads_enqueues_nothing() -> None:
    rsc, _, queue = build([])
    pending = make_pod(ready=False)
    rsc.on_pod_update(pending, make_pod(rv="2", ready=False, node="node-1"), queue)
    assert queue.added == []
    rsc.on_pod_update(pending, make_pod(rv="3", ready=True, node="node-1"), queue)
    assert queue.added == [Request("default", "rs")]
    queue.added.clear()
    rsc.on_pod_update(pending, make_pod(rv="4", ready=False, labels={"app": "web"}), queue)
    assert queue.added == [Request("default", "rs")]


async def test_a_sync_counts_owned_pods_and_skips_an_unchanged_status() -> None:
    pods = [make_pod("a"), make_pod("b", ready=False, labels={"app": "web"}), make_pod("c", deleting=True)]
    rsc, api, _ = build(pods)
    await rsc.reconcile(Request("default", "rs"))
    assert api.verbs() == [("update_status", "replicasets")]
    status = api.bodies[-1]["status"]
    assert (status["replicas"], status["fullyLabeledReplicas"], status["readyReplicas"],
            status["availableReplicas"], status["terminatingReplicas"]) == (2, 1, 1, 1, 1)
    written = {**replica_set(), "status": status}
    rsc.replica_sets.indexer.upsert(written)
    api.calls.clear()
    await rsc.reconcile(Request("default", "rs"))
    assert api.calls == []
