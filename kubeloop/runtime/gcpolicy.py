"""Garbage-collector thresholds for long-running processes that cache many API objects.

A controller or kubelet process holds every watched object in its informer caches, and every
change replaces a cached object with a freshly decoded one. CPython's default thresholds
(700 allocations for a young collection) then run young collections constantly and, as new
objects survive into the old generation, full collections that walk every cached object. In
the 5,000-pod rollout benchmark (``bench/rollout.py --workload deployment --split``) the
collector took a quarter of the controllers' CPU during a roll; with the thresholds below it
took next to none.

Cached objects are plain JSON trees without reference cycles, freed by reference counting
alone, so collecting less often delays little real garbage. The ``kubeloop`` commands that
run for long (``up``, ``server``, ``kubelet``, ``controllers``) apply this policy at start; a
library user decides for their own process.
"""

from __future__ import annotations

import gc

CACHE_THRESHOLDS = (100_000, 20, 10)
"""``gc.set_threshold`` values: a young collection per 100,000 net allocations, a middle one
per 20 young ones, a full one per 10 middle ones (CPython's default: 700, 10, 10)."""


def use_cache_friendly_gc() -> tuple[int, int, int]:
    """Apply :data:`CACHE_THRESHOLDS`; returns the thresholds in force before."""
    previous = gc.get_threshold()
    gc.set_threshold(*CACHE_THRESHOLDS)
    return previous
