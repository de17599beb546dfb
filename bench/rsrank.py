"""Micro-benchmark: ReplicaSet scale-down ranking: namespace scan against live counts.

One namespace holds ``--deployments`` Deployments of ``--pods`` pods in all, each Deployment
with an old and a new ReplicaSet (pods split between them, spread over ``--nodes`` nodes).
For every ReplicaSet it computes the active related pods per node
two ways (:mod:`kubeloop.controllers.replicaset.related`: a scan of the namespace;
:mod:`kubeloop.controllers.replicaset.nodecounts`: the live counts the controller uses), checks
they agree, and reports the CPU time per call of each, then what the live counts' change
listener adds to every cache write. Single process, no server::

    PYTHONPATH=$PWD .venv/bin/python bench/rsrank.py --pods 5000 --deployments 10
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from kubeloop.api.labels import selector_from_label_selector
from kubeloop.controllers.replicaset.controller import POD_CONTROLLER_INDEX, pod_controller_index
from kubeloop.controllers.replicaset.nodecounts import NodeCounts
from kubeloop.controllers.replicaset.podfacts import PodFactsCache
from kubeloop.controllers.replicaset.related import related_pods_per_node
from kubeloop.runtime.informers import NAMESPACE_INDEX, Indexer

Obj = dict[str, Any]


def make_pods(pods: int, deployments: int, nodes: int) -> list[Obj]:
    out: list[Obj] = []
    for i in range(pods):
        deployment = i % deployments
        hash_ = f"h{deployment}-{(i // deployments) % 2}"
        out.append({
            "metadata": {"name": f"p{i}", "namespace": "bench", "uid": f"u{i}", "resourceVersion": "1",
                         "labels": {"app": f"d{deployment}", "pod-template-hash": hash_},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{hash_}",
                                              "uid": f"rs-{hash_}", "controller": True}]},
            "spec": {"nodeName": f"n{i % nodes}"},
            "status": {"phase": "Running"},
        })
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--deployments", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    pods = make_pods(args.pods, args.deployments, args.nodes)
    indexer = Indexer({POD_CONTROLLER_INDEX: pod_controller_index})
    for pod in pods:
        indexer.upsert(pod)
    facts = PodFactsCache().facts
    counts = NodeCounts(facts)
    indexer.add_change_listener(counts.on_stored)

    def scan() -> Any:
        return ((k, p) for k in indexer.index_key_view(NAMESPACE_INDEX, "bench") if (p := indexer.get(k)) is not None)

    def live(index: Indexer, namespace: str, selectors: Any, facts: Any) -> dict[str, int]:
        total: dict[str, int] = {}
        for selector in selectors:
            per_node = counts.per_node(namespace, selector, index.epoch, scan)
            assert per_node is not None
            for node, n in per_node.items():
                total[node] = total.get(node, 0) + n
        return total
    # Each ReplicaSet's siblings: both ReplicaSets of its Deployment.
    sibling_selectors = [
        [selector_from_label_selector({"matchLabels": {"app": f"d{d}", "pod-template-hash": f"h{d}-{r}"}})
         for r in (0, 1)]
        for d in range(args.deployments)
    ]
    for selectors in sibling_selectors:  # warm the facts cache, check both ways agree
        expected = related_pods_per_node(indexer, "bench", selectors, facts)
        assert live(indexer, "bench", selectors, facts) == expected

    timings = {}
    for name, func in (("scan", related_pods_per_node), ("live", live)):
        start = time.process_time()
        for _ in range(args.rounds):
            for selectors in sibling_selectors:
                func(indexer, "bench", selectors, facts)
        timings[name] = (time.process_time() - start) / (args.rounds * len(sibling_selectors))
    print(f"pods={args.pods} deployments={args.deployments} nodes={args.nodes} rounds={args.rounds}")
    for name, seconds in timings.items():
        print(f"  related pods per node, {name:5}: {seconds * 1e3:8.3f} ms per ReplicaSet sync")
    print(f"  speed-up over scan: live {timings['scan'] / timings['live']:.1f}x")

    updated = [{**pod, "metadata": {**pod["metadata"], "resourceVersion": "2"}} for pod in pods]
    base = {POD_CONTROLLER_INDEX: pod_controller_index}
    for label, indexers, with_live in (("controller index only", base, False),
                                       ("+ live counts listener", base, True)):
        store = Indexer(indexers)
        if with_live:
            store_counts = NodeCounts(PodFactsCache().facts)
            store.add_change_listener(store_counts.on_stored)
            for selectors in sibling_selectors:
                for selector in selectors:
                    store_counts.per_node("bench", selector, store.epoch, lambda: iter(()))
        start = time.process_time()
        for pod in pods:
            store.upsert(pod)
        for pod in updated:
            store.upsert(pod)
        per_write = (time.process_time() - start) / (2 * len(pods))
        print(f"  cache write (add + update), {label:24}: {per_write * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
