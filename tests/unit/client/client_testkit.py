"""Shared fakes for the client tests: a fake clock and a client over a MockTransport.

(Not a conftest: several test folders have one, and they would collide as modules.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kubeloop.client import ApiClient, ClientConfig, Clock, MockResponse, MockTransport, Request


class FakeClock:
    """Time moves only when someone sleeps (or a test calls ``advance``)."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.elapsed

    def advance(self, seconds: float) -> None:
        self.elapsed += seconds

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.elapsed += max(seconds, 0.0)
        await asyncio.sleep(0)


Handler = Callable[[Request], MockResponse]


def mock_client(handler: Handler, clock: Clock | None = None, **config: Any) -> tuple[ApiClient, MockTransport]:
    """An ApiClient on a MockTransport, rate limiting off unless the test asks for it."""
    settings: dict[str, Any] = {"server": "https://k8s.example:6443", "qps": 0}
    settings.update(config)
    transport = MockTransport(handler)
    client = ApiClient(ClientConfig(**settings), transport=transport, clock=clock or FakeClock())
    return client, transport
