"""Fixtures of the process tests: every kubeloop process a test starts is closed after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from process_harness import KubeloopProcess


@pytest.fixture
def processes() -> Iterator[list[KubeloopProcess]]:
    """Append each started :class:`KubeloopProcess`; all are closed when the test ends."""
    started: list[KubeloopProcess] = []
    yield started
    for process in started:
        process.close()
