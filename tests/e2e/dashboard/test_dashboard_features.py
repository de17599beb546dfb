"""The dashboard's features in one headless Chromium against a live embedded cluster.

One browser, one cluster, one scenario, in steps (each named by the feature it checks):

1. the page is served with the cluster's current snapshot: before its event stream opens (here
   the stream is held back on purpose) it already shows the workload, says ``connecting``, and
   never "No Deployments or CloneSets yet".

Screenshots go to the test's temporary directory, or to ``$KUBELOOP_SCREENSHOTS`` when set
(``KUBELOOP_SCREENSHOTS=docs`` refreshes the ones in ``docs/``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from playwright.async_api import Page, Route, async_playwright

from kubeloop.client import DEPLOYMENTS
from kubeloop.testing.cluster import EmbeddedCluster
from tests.e2e.dashboard.manifests import web_deployment
from tests.e2e.dashboard.test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS

ALL_AVAILABLE = """(n) => {
  const tiles = [...document.querySelectorAll("#workloads .tile")];
  return tiles.length === n && tiles.every((t) => t.dataset.state === "available");
}"""


def screenshot_dir(tmp_path: Path) -> Path:
    chosen = os.environ.get("KUBELOOP_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path


async def shoot(page: Page, directory: Path, name: str) -> None:
    path = directory / name
    await page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


async def wait_for_feed(dashboard_url: str, check: str) -> None:
    """Until the dashboard's state (not the page) holds ``check`` (a substring of /api/state)."""
    import aiohttp

    async with asyncio.timeout(60), aiohttp.ClientSession() as session:
        while check not in await (await session.get(dashboard_url + "api/state")).text():
            await asyncio.sleep(0.1)


@pytest.mark.e2e
async def test_dashboard_features_in_the_browser(kubeloop_cluster: EmbeddedCluster, dashboard_url: str,
                                                 tmp_path: Path) -> None:
    client = kubeloop_cluster.client
    shots = screenshot_dir(tmp_path)
    await client.create(DEPLOYMENTS, web_deployment("registry.example/web:1", ready_delay="0.2"),
                        namespace="default")
    await wait_for_feed(dashboard_url, '"state":"available"')
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})

            # -- 1. the first snapshot comes with the page --------------------------------------
            held: list[Route] = []

            async def hold(route: Route) -> None:
                held.append(route)  # never answered while held: the page cannot have streamed anything

            await page.route("**/api/stream", hold)
            await page.goto(dashboard_url, wait_until="domcontentloaded")
            assert await page.locator("#workloads .card").count() == 1
            assert await page.locator("#workloads .tile").count() >= 1
            assert await page.is_hidden("#empty") and await page.is_hidden("#waiting")
            assert await page.inner_text("#connection") == "connecting"
            assert await page.evaluate("window.kubeloopDashboard.embedded") is True
            await shoot(page, shots, "dashboard-at-load.png")
            assert held  # the page did ask for its stream, which was held back
            await page.unroute("**/api/stream")
            await page.reload()
            await page.wait_for_function("() => document.querySelector('#connection').textContent === 'live'",
                                         timeout=30_000)
            await page.wait_for_function(ALL_AVAILABLE, arg=4, timeout=30_000)
        finally:
            await browser.close()
