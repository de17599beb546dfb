"""A watch that starts too far behind is told to relist (410), not cut silently for ever."""

from typing import Any

import pytest

from kubeloop.client import CONFIG_MAPS, ApiClient, Expired, Gone
from kubeloop.server import watch as server_watch


async def test_a_watch_cut_before_any_event_gets_410(client: ApiClient, monkeypatch: pytest.MonkeyPatch) -> None:
    start = (await client.list(CONFIG_MAPS, namespace="default"))["metadata"]["resourceVersion"]
    for i in range(12):
        await client.create(CONFIG_MAPS, {"metadata": {"name": f"c{i}"}}, namespace="default")
    monkeypatch.setattr(server_watch, "SLOW_WATCHER_BACKLOG", 5)
    events: list[Any] = []
    with pytest.raises((Expired, Gone)) as raised:
        async for event in client.watch(CONFIG_MAPS, namespace="default", resource_version=start, timeout_seconds=5):
            events.append(event)
    assert events == [] and raised.value.code == 410
