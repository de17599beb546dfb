"""Related pods per node equal upstream's full computation, and so do the scale-down victims,
over random namespaces and random pod histories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.api.labels import Selector, selector_from_label_selector
from kubeloop.api.meta import format_time
from kubeloop.controllers.replicaset.podfacts import PodFactsCache, pod_facts
from kubeloop.controllers.replicaset.ranking import RankingFactsCache, select_for_deletion
from kubeloop.controllers.replicaset.related import related_pods_per_node
from kubeloop.runtime.informers import Indexer

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
DEPLOYMENTS = ["d0", "d1", "d2"]
HASHES = ["h0", "h1", "h2"]
NODES = ["", "n0", "n1", "n2"]


def rs_uid(deployment: str, hash_: str) -> str:
    return f"rs-{deployment}-{hash_}"


def rs_selector(deployment: str, hash_: str, shape: int) -> Selector:
    return selector_from_label_selector(rs_raw_selector(deployment, hash_, shape))


def rs_raw_selector(deployment: str, hash_: str, shape: int) -> Obj:
    """A Deployment-made selector, or (shapes 1, 2) one with set terms or with no equality term."""
    if shape == 1:
        raw: Obj = {"matchLabels": {"app": deployment},
                    "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": [hash_, HASHES[0]]}]}
    elif shape == 2:
        raw = {"matchExpressions": [{"key": "pod-template-hash", "operator": "NotIn", "values": ["h9"]},
                                    {"key": "app", "operator": "Exists"}]}
    else:
        raw = {"matchLabels": {"app": deployment, "pod-template-hash": hash_}}
    return raw


owners = st.one_of(st.none(), st.just("someone-else"),
                   st.builds(rs_uid, st.sampled_from(DEPLOYMENTS[:2]), st.sampled_from(HASHES[:2])),
                   st.builds(rs_uid, st.sampled_from(DEPLOYMENTS), st.sampled_from(HASHES)))
# Mostly Deployment-made labels, so buckets and matches are crowded; sometimes partial ones.
label_sets = st.one_of(
    st.fixed_dictionaries({"app": st.sampled_from(DEPLOYMENTS[:2]), "pod-template-hash": st.sampled_from(HASHES[:2])},
                          optional={"tier": st.sampled_from(["a", "b"])}),
    st.fixed_dictionaries({}, optional={"app": st.sampled_from(DEPLOYMENTS),
                                        "pod-template-hash": st.sampled_from(HASHES),
                                        "tier": st.sampled_from(["a", "b"])}),
)
pod_states = st.fixed_dictionaries({
    "namespace": st.sampled_from(["default", "default", "default", "default", "other"]),
    "labels": label_sets,
    "owner": owners,
    "node": st.sampled_from(NODES),
    "phase": st.sampled_from(["Pending", "Running", "Running", "Succeeded", "Failed"]),
    "deleting": st.booleans(),
    "created_ago": st.integers(0, 5),
    "ready": st.booleans(),
})
# Removals are one step in four; long enough histories that buckets hold several pods.
histories = st.lists(st.tuples(st.integers(0, 39), st.one_of(pod_states, pod_states, pod_states, st.none())),
                     min_size=30, max_size=120)
siblings_sets = st.lists(st.tuples(st.sampled_from(HASHES), st.sampled_from([0, 0, 0, 1, 2])),
                         min_size=1, max_size=3)


def make_pod(index: int, version: int, state: Obj) -> Obj:
    name = f"p{index}"
    meta: Obj = {"name": name, "namespace": state["namespace"], "uid": f"uid-{name}",
                 "resourceVersion": str(version), "labels": dict(state["labels"]),
                 "creationTimestamp": format_time(NOW - timedelta(seconds=state["created_ago"]))}
    if state["owner"] is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": state["owner"],
                                    "uid": state["owner"], "controller": True}]
    if state["deleting"]:
        meta["deletionTimestamp"] = format_time(NOW)
    spec: Obj = {"nodeName": state["node"]} if state["node"] else {}
    status: Obj = {"phase": state["phase"],
                   "conditions": [{"type": "Ready", "status": "True" if state["ready"] else "False"}]}
    return {"metadata": meta, "spec": spec, "status": status}


def upstream_per_node(pods: list[Obj], selectors: list[Selector]) -> dict[str, int]:
    """Upstream's computation, written out: list each sibling selector's pods of the namespace,
    keep each pod once, count the active ones per node."""
    seen: set[str] = set()
    related: list[Obj] = []
    for selector in selectors:
        for pod in pods:
            meta = pod["metadata"]
            if meta["namespace"] == "default" and selector.matches(meta["labels"]) and meta["uid"] not in seen:
                seen.add(meta["uid"])
                related.append(pod)
    per_node: dict[str, int] = {}
    for pod in related:
        if pod_facts(pod).active:
            node = pod["spec"].get("nodeName", "")
            per_node[node] = per_node.get(node, 0) + 1
    return per_node


@settings(max_examples=100, deadline=None)
@given(histories, st.sampled_from(DEPLOYMENTS[:2]), siblings_sets, st.integers(1, 6))
def test_related_counts_and_victims_equal_the_full_computation(
    history: list[tuple[int, Obj | None]], deployment: str, siblings: list[tuple[str, int]], count: int
) -> None:
    indexer = Indexer()
    facts = PodFactsCache()
    for version, (index, state) in enumerate(history, start=1):
        if state is None:
            indexer.delete(f"default/p{index}")
            indexer.delete(f"other/p{index}")
        else:
            indexer.delete(f"{'other' if state['namespace'] == 'default' else 'default'}/p{index}")
            indexer.upsert(make_pod(index, version, state))
    pods = indexer.list()
    selectors = [rs_selector(deployment, hash_, shape) for hash_, shape in siblings]

    indexed = related_pods_per_node(indexer, "default", selectors, facts.facts)
    expected = upstream_per_node(pods, selectors)
    assert indexed == expected

    # The scaled-down ReplicaSet's active pods, ranked by these counts, lose the same
    # pods as with upstream's ranks.
    own_uid = rs_uid(deployment, siblings[0][0])
    candidates = sorted((p for p in pods if p["metadata"]["namespace"] == "default" and pod_facts(p).active
                         and p["metadata"].get("ownerReferences", [{}])[0].get("uid") == own_uid),
                        key=lambda p: str(p["metadata"]["name"]))
    ranks = [indexed.get(p["spec"].get("nodeName", ""), 0) for p in candidates]
    expected_ranks = [expected.get(p["spec"].get("nodeName", ""), 0) for p in candidates]
    assert ranks == expected_ranks
    cache = RankingFactsCache()
    assert (select_for_deletion(candidates, ranks, count, NOW, cache=cache)
            == select_for_deletion(candidates, expected_ranks, count, NOW, cache=cache))
