"""``kubeloop dashboard`` as a process: prints its address, serves the cluster's workloads, stops on SIGINT."""

from __future__ import annotations

import asyncio
import signal
import sys

import aiohttp
import pytest

from kubeloop.client import DEPLOYMENTS
from kubeloop.testing.cluster import EmbeddedCluster
from tests.e2e.dashboard.manifests import web_deployment


@pytest.mark.e2e
async def test_dashboard_command_serves_the_cluster(kubeloop_cluster: EmbeddedCluster) -> None:
    await kubeloop_cluster.client.create(DEPLOYMENTS, web_deployment("registry.example/web:1", ready_delay="0"),
                                         namespace="default")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop", "dashboard", "--kubeconfig", str(kubeloop_cluster.kubeconfig_path),
        "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert line.startswith("kubeloop dashboard: http://127.0.0.1:"), line
        url = line.split(": ", 1)[1].strip()
        async with aiohttp.ClientSession() as session:
            async with asyncio.timeout(60):
                while True:
                    async with session.get(url + "api/state") as response:
                        state = await response.json()
                    views = state["workloads"]
                    # The Deployment and its pods come on separate watches: wait for both.
                    if views and views[0]["rollout"]["phase"] == "complete" and \
                            [p["state"] for p in views[0]["pods"]] == ["available"] * 4:
                        break
                    await asyncio.sleep(0.1)
            assert [(v["kind"], v["name"], len(v["pods"])) for v in views] == [("Deployment", "web", 4)]
            async with session.get(url) as response:
                assert "kubeloop rollouts" in await response.text()
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
