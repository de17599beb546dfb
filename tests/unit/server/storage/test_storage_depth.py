"""Neither store keeps an object it could not serve back (issue #18: ``--memory`` stored a
300-deep object that then made every LIST of its type answer 500)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from storage_testkit import PODS, make_object

from kubeloop.server.nesting import MAX_STORED_DEPTH
from kubeloop.server.storage import Storage, StorageError


def with_depth(name: str, depth: int) -> dict[str, Any]:
    """An object nesting exactly ``depth`` containers (the object itself is the first)."""
    obj = make_object(name)
    value: Any = {}
    for _ in range(depth - 3):
        value = {"a": value}
    obj["spec"] = {"deep": value}
    return obj


def test_the_deepest_object_kept_still_lists_as_json(store: Storage) -> None:
    store.create(PODS, with_depth("deepest", MAX_STORED_DEPTH))
    listing = {"kind": "PodList", "items": [store.get(PODS, "default", "deepest")]}
    event = {"type": "ADDED", "object": listing}
    table = {"rows": [{"object": event}]}
    orjson.dumps(table)


@pytest.mark.parametrize("depth", [MAX_STORED_DEPTH + 1, 260])
def test_deeper_objects_are_refused_on_create_and_update(store: Storage, depth: int) -> None:
    with pytest.raises(StorageError, match="levels of nesting"):
        store.create(PODS, with_depth("deep", depth))
    assert store.get(PODS, "default", "deep") is None
    created = store.create(PODS, with_depth("shallow", 5))
    revision = store.revision
    with pytest.raises(StorageError, match="levels of nesting"):
        store.update(PODS, with_depth("shallow", depth))
    assert store.get(PODS, "default", "shallow") == created
    assert store.revision == revision
