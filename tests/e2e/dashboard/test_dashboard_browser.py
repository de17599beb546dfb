"""The web view in a real headless Chromium during a rolling update of a real Deployment.

Debian's ``chromium`` (``/usr/bin/chromium``) is driven by Playwright (never ``playwright
install``: the browser is the system's). A recorder injected before the page loads keeps every
distinct picture of the pod tiles, so the test can tell that the page went from all-old tiles
through a mix of old and new ones to all-new tiles, and that it did so without reloading.
The screenshots are kept under the test's temporary directory (their paths are printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from kubeloop.client import DEPLOYMENTS
from kubeloop.testing.cluster import EmbeddedCluster
from tests.e2e.dashboard.manifests import web_deployment

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium tries to reach Google's services and stalls on this closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

RECORDER = """
window.__frames = [];
setInterval(() => {
  const tiles = [...document.querySelectorAll("#workloads .tile")];
  const frame = tiles.map((t) => `${t.dataset.update === "true" ? "new" : "old"}:${t.dataset.state}`).sort().join(",");
  if (window.__frames[window.__frames.length - 1] !== frame) window.__frames.push(frame);
}, 20);
"""

ALL_NEW_AVAILABLE = """(n) => {
  const tiles = [...document.querySelectorAll("#workloads .tile")];
  return tiles.length === n && tiles.every((t) => t.dataset.update === "true" && t.dataset.state === "available");
}"""

MIXED = """() => {
  const tiles = [...document.querySelectorAll("#workloads .tile")];
  return tiles.some((t) => t.dataset.update === "true") && tiles.some((t) => t.dataset.update === "false");
}"""


async def page_state(page: Page) -> dict[str, Any]:
    state: dict[str, Any] = await page.evaluate(
        "() => ({loadedAt: window.kubeloopDashboard.loadedAt, messages: window.kubeloopDashboard.messages,"
        " navigations: performance.getEntriesByType('navigation').length, frames: window.__frames})")
    return state


@pytest.mark.e2e
async def test_rolling_update_seen_live_in_the_browser(kubeloop_cluster: EmbeddedCluster, dashboard_url: str,
                                                       tmp_path: Path) -> None:
    client = kubeloop_cluster.client
    await client.create(DEPLOYMENTS, web_deployment("registry.example/web:1"), namespace="default")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.add_init_script(RECORDER)
            await page.goto(dashboard_url)
            await page.wait_for_function(ALL_NEW_AVAILABLE, arg=4, timeout=60_000)
            assert await page.inner_text("#connection") == "live"
            before = await page_state(page)

            deployment = await client.get(DEPLOYMENTS, "web", namespace="default")
            deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/web:2"
            await client.update(DEPLOYMENTS, deployment, namespace="default")

            await page.wait_for_function(MIXED, timeout=30_000)
            middle = tmp_path / "dashboard-mid-rollout.png"
            await page.screenshot(path=str(middle), full_page=True)
            print(f"mid-rollout screenshot: {middle}")

            await page.wait_for_function(ALL_NEW_AVAILABLE, arg=4, timeout=60_000)
            await page.wait_for_function(
                "() => document.querySelector('#workloads .badge')?.textContent === 'complete'", timeout=30_000)
            final = tmp_path / "dashboard-rolled-out.png"
            await page.screenshot(path=str(final), full_page=True)
            print(f"final screenshot: {final}")
            after = await page_state(page)

            # One page load throughout, updated by streamed messages only.
            assert after["loadedAt"] == before["loadedAt"] and after["navigations"] == 1
            assert after["messages"] > before["messages"]
            frames: list[str] = after["frames"][after["frames"].index(before["frames"][-1]):]
            assert frames[0] == ",".join(["new:available"] * 4)
            # The tiles of the first rollout now count as old: the page showed them as such ...
            mixed = [f for f in frames if "old:" in f and "new:" in f]
            assert mixed, frames
            # ... with new pods in between states (pending or running, not ready yet) at some point ...
            assert any(state in f for f in mixed for state in ("new:pending", "new:running", "new:ready")), frames
            # ... never more pods than replicas + maxSurge, never fewer available than replicas - maxUnavailable ...
            for frame in frames:
                tiles = frame.split(",")
                assert len([t for t in tiles if not t.endswith("terminating")]) <= 5, frame
                assert len([t for t in tiles if t.endswith(":available")]) >= 4, frame
            # ... and ended with every tile on the new revision.
            assert frames[-1] == ",".join(["new:available"] * 4)
            revisions = await page.eval_on_selector_all("#workloads .tile", "ts => ts.map(t => t.dataset.revision)")
            assert len(set(revisions)) == 1
            assert middle.stat().st_size > 0 and final.stat().st_size > 0
        finally:
            await browser.close()
