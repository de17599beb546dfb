"""Random histories with restarts: a reopened SQLite store is indistinguishable from one that never stopped.

The model is a memory-only store fed the same writes. After every reopen the persistent store
must hold the same objects and revision, refuse watches from the same revisions, and replay
the same events (types, revisions, objects and previous states) from the oldest one it serves.
Pruning batches are made tiny so that rows are deleted while the histories run, not only at
open and close.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from storage_testkit import DEPLOYMENTS, PODS

from kubeloop.server.storage import KeyExists, KeyNotFound, ResourceType, Storage, Watcher
from kubeloop.server.storage import _sqlite as sqlite_module

TYPES = [PODS, DEPLOYMENTS]
NAMES = ["a", "b", "c"]

operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(TYPES), st.sampled_from(NAMES), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.sampled_from(TYPES), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("reopen"), st.just(PODS), st.just(""), st.just(0)),
    ),
    max_size=60,
)


def write(store: Storage, rt: ResourceType, name: str, value: int) -> None:
    obj = {"metadata": {"name": name, "namespace": "ns"}, "spec": {"value": value}}
    try:
        store.create(rt, obj)
    except KeyExists:
        store.update(rt, obj)


def delete(store: Storage, rt: ResourceType, name: str) -> None:
    try:
        store.delete(rt, "ns", name)
    except KeyNotFound:
        return


async def replay(watcher: Watcher) -> list[tuple[str, int, Any, Any]]:
    events = []
    while (event := await watcher.next(timeout=0)) is not None:
        events.append((event.type, event.rv, event.object, event.prev))
    watcher.close()
    return events


def assert_same(store: Storage, model: Storage) -> None:
    assert store.revision == model.revision
    for rt in TYPES:
        assert store.list(rt) == model.list(rt)
        oldest = store.oldest_watchable(rt)
        assert oldest == model.oldest_watchable(rt)
        assert asyncio.run(replay(store.watch(rt, None, oldest))) == asyncio.run(replay(model.watch(rt, None, oldest)))


@settings(max_examples=60, deadline=None)
@given(history=operations, window=st.integers(1, 4))
def test_reopened_store_matches_a_store_that_never_stopped(
    history: list[tuple[str, ResourceType, str, int]], window: int
) -> None:
    with tempfile.TemporaryDirectory() as directory, mock.patch.object(sqlite_module, "PRUNE_BATCH", 2):
        data_dir = Path(directory)
        store = Storage.open(data_dir, watch_cache_size=window)
        model = Storage.open(None, watch_cache_size=window)
        try:
            for action, rt, name, value in history:
                if action == "write":
                    write(store, rt, name, value)
                    write(model, rt, name, value)
                elif action == "delete":
                    delete(store, rt, name)
                    delete(model, rt, name)
                else:
                    store.close()
                    store = Storage.open(data_dir, watch_cache_size=window)
                    assert_same(store, model)
            store.close()
            store = Storage.open(data_dir, watch_cache_size=window)
            assert_same(store, model)
        finally:
            store.close()
            model.close()
