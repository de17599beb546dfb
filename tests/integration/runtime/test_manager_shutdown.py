"""``Manager.stop`` is bounded by ``shutdown_timeout`` (issue #18 item 5): a reconcile that never
returns and a runnable whose cleanup waits on a dead server are abandoned, not waited for."""

import asyncio

from kubeloop.client import CONFIG_MAPS, ApiClient
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.manager import Manager, ManagerOptions

SHUTDOWN = 0.5
NEVER = 60.0
"""Longer than any test may take: reaching it means the bound did not hold."""


async def test_stop_abandons_work_that_never_finishes(client: ApiClient) -> None:
    await client.create(CONFIG_MAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "stuck", "namespace": "default"}}, namespace="default")
    mgr = Manager(client, ManagerOptions(name="test", shutdown_timeout=SHUTDOWN))
    reconciling = asyncio.Event()
    cleaned_up: list[str] = []

    async def reconcile(request: Request) -> None:
        reconciling.set()
        await asyncio.sleep(NEVER)  # an API call retrying against a server that is gone

    async def runnable() -> None:
        try:
            await asyncio.sleep(NEVER)
        finally:
            # A flush of queued Events to that server: only a second cancel ends it.
            await asyncio.sleep(NEVER)
            cleaned_up.append("flushed")

    await mgr.controller("stuck").for_(CONFIG_MAPS).complete(reconcile)
    mgr.add_runnable(runnable, needs_leader=False)
    await mgr.start()
    await asyncio.wait_for(reconciling.wait(), 15)
    async with asyncio.timeout(NEVER / 2):
        await mgr.stop()
    assert cleaned_up == []
