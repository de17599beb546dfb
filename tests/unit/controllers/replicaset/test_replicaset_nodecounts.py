"""The live per-node counts equal a recount after every step of random pod histories, from
whatever point a selector starts being tracked, and the controller's related counts equal
upstream's full computation."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.api.labels import Selector, selector_from_label_selector
from kubeloop.controllers.replicaset.nodecounts import NodeCounts, disjoint
from kubeloop.controllers.replicaset.podfacts import PodFactsCache
from kubeloop.controllers.replicaset.related import related_pods_per_node
from kubeloop.runtime.informers import NAMESPACE_INDEX, Indexer
from tests.unit.controllers.replicaset.test_replicaset_related import (
    DEPLOYMENTS,
    histories,
    make_pod,
    rs_raw_selector,
    rs_selector,
    siblings_sets,
    upstream_per_node,
)

Obj = dict[str, Any]


def scan(indexer: Indexer, namespace: str) -> Any:
    return lambda: ((k, p) for k in indexer.index_key_view(NAMESPACE_INDEX, namespace)
                    if (p := indexer.get(k)) is not None)


def apply(indexer: Indexer, index: int, version: int, state: Obj | None) -> None:
    if state is None:
        indexer.delete(f"default/p{index}")
        indexer.delete(f"other/p{index}")
    else:
        indexer.delete(f"{'other' if state['namespace'] == 'default' else 'default'}/p{index}")
        indexer.upsert(make_pod(index, version, state))


@settings(max_examples=50, deadline=None)
@given(histories, st.sampled_from(DEPLOYMENTS[:2]), siblings_sets, st.integers(0, 120), st.integers(0, 120))
def test_live_counts_equal_a_recount_after_every_step(
    history: list[tuple[int, Obj | None]], deployment: str, siblings: list[tuple[str, int]],
    start: int, forget_at: int,
) -> None:
    indexer = Indexer()
    facts = PodFactsCache()
    counts = NodeCounts(facts.facts)
    indexer.add_change_listener(counts.on_stored)
    selectors = [rs_selector(deployment, hash_, shape) for hash_, shape in siblings]
    for step, (index, state) in enumerate(history):
        apply(indexer, index, step + 1, state)
        if step == forget_at:
            counts.forget("default", selectors[0])
        if step < start:
            continue
        for selector in selectors:
            live = counts.per_node("default", selector, indexer.epoch, scan(indexer, "default"))
            if live is None:  # no equality term: not trackable
                assert selector.requires_exact_match("app") is None
                continue
            assert dict(live) == related_pods_per_node(indexer, "default", [selector], facts.facts)
    # A wholesale replace drops every tracker; they start again from the new content.
    indexer.replace([p for p in indexer.list() if p["metadata"]["name"] != "p0"])
    for selector in selectors:
        live = counts.per_node("default", selector, indexer.epoch, scan(indexer, "default"))
        if live is not None:
            assert dict(live) == related_pods_per_node(indexer, "default", [selector], facts.facts)


def test_disjoint_needs_a_key_with_different_single_values() -> None:
    def sel(labels: dict[str, str]) -> Selector:
        return selector_from_label_selector({"matchLabels": labels})

    assert disjoint(sel({"app": "a", "pod-template-hash": "h0"}), sel({"app": "a", "pod-template-hash": "h1"}))
    assert not disjoint(sel({"app": "a", "pod-template-hash": "h0"}), sel({"app": "a"}))
    assert not disjoint(sel({"app": "a"}), sel({"tier": "b"}))


@settings(max_examples=30, deadline=None)
@given(histories, st.sampled_from(DEPLOYMENTS[:2]), siblings_sets)
def test_controller_related_counts_equal_upstream(
    history: list[tuple[int, Obj | None]], deployment: str, siblings: list[tuple[str, int]]
) -> None:
    from kubeloop.controllers.replicaset.controller import ReplicaSetController
    from tests.unit.controllers.controller_fakes import FakeApi, FakeRecorder, cache

    replica_sets = [
        {"metadata": {"name": f"rs{n}", "namespace": "default", "uid": f"rs{n}",
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment,
                                           "uid": deployment, "controller": True}]},
         "spec": {"selector": rs_raw_selector(deployment, hash_, shape)}}
        for n, (hash_, shape) in enumerate(dict(siblings).items())
    ]
    # A ReplicaSet of another Deployment in the namespace is no sibling.
    other = "d1" if deployment == "d0" else "d0"
    stranger = {"metadata": {"name": "stranger", "namespace": "default", "uid": "stranger",
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": other,
                                                  "uid": other, "controller": True}]},
                "spec": {"selector": rs_raw_selector(other, "h0", 0)}}
    pods = cache()
    controller = ReplicaSetController(FakeApi(), cache(*replica_sets, stranger), pods, FakeRecorder())
    controller.attach_cache_listeners()
    for step, (index, state) in enumerate(history):
        apply(pods.indexer, index, step + 1, state)
        if step % 7 == 0:
            selectors = [selector_from_label_selector(rs["spec"]["selector"]) for rs in replica_sets]  # type: ignore[index]
            assert controller._related_pods_per_node(replica_sets[0]) == upstream_per_node(
                pods.indexer.list(), selectors)
