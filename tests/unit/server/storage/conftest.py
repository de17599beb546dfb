"""Store fixtures that run each storage test against both modes (memory and SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from storage_testkit import OpenStore

from kubeloop.server.storage import Storage


@pytest.fixture(params=["memory", "sqlite"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens stores of one mode (SQLite ones in the same temporary directory); closes them after."""
    opened: list[Storage] = []

    def open_one(**options: int) -> Storage:
        store = Storage.open(tmp_path / "data", memory=request.param == "memory", **options)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: OpenStore) -> Storage:
    """A fresh store with the default watch window."""
    return open_store()
