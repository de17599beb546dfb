"""The dashboard's features in one headless Chromium against a live embedded cluster.

One browser, one cluster, one scenario, in steps (each named by the feature it checks):

1. the page is served with the cluster's current snapshot: before its event stream opens (here
   the stream is held back on purpose) it already shows the workload, says ``connecting``, and
   never "No Deployments or CloneSets yet".
2. failing and progressing workloads come first; the summary strip counts workloads by phase;
   the namespace filter and the search box narrow the cards (and survive a reload);
3. a CloneSet's partition and paused state are shown on its card; each revision keeps its colour
   (derived from its hash) through a rollout and a reload;
4. a click on a pod tile opens its details: conditions, containers with restarts, events;
5. pause, resume and undo: refused (and saying why) without the cluster's token or with a wrong
   one, done with it (kept in the tab's sessionStorage across a reload); undo restores the
   previous ReplicaSet's template as ``kubectl rollout undo`` does (and a CloneSet's, its previous
   ControllerRevision's);
6. the timelines have a time axis and a window the user zooms (buttons, mouse wheel), which a
   reload keeps (localStorage).

Screenshots go to the test's temporary directory, or to ``$KUBELOOP_SCREENSHOTS`` when set
(``KUBELOOP_SCREENSHOTS=docs`` refreshes the ones in ``docs/``).
"""

from __future__ import annotations

import asyncio
import os
from itertools import pairwise
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page, Route, async_playwright

from kubeloop.client import DEPLOYMENTS, NAMESPACES
from kubeloop.runtime.informers.mutation import ENV_VAR
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config
from tests.e2e.dashboard.manifests import web_deployment
from tests.e2e.dashboard.test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS

ALL_AVAILABLE = """(n) => {
  const tiles = [...document.querySelectorAll("#workloads .tile")];
  return tiles.length === n && tiles.every((t) => t.dataset.state === "available");
}"""


CLONESETS = "clonesets.apps.kruise.io"


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClusterConfig:
    monkeypatch.setenv(ENV_VAR, "true")  # the dashboard must never change a cached object
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(),
                         controllers=["replicaset", "deployment", "garbagecollector", "cloneset"])


def broken_deployment() -> dict[str, Any]:
    """A Deployment in namespace ``shop`` whose pods crash: failed once its 1 s deadline passes."""
    manifest: dict[str, Any] = web_deployment("registry.example/cart:1", replicas=2, progressDeadlineSeconds=1,
                                              extra_annotations={"sim.kubeloop.io/crash-loop": "true"})
    manifest["metadata"] = {"name": "cart", "namespace": "shop"}
    return manifest


def partitioned_cloneset() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {"metadata": {"labels": {"app": "cs"}},
                         "spec": {"containers": [{"name": "app", "image": "registry.example/cs:1"}]}},
            "updateStrategy": {"type": "ReCreate", "partition": 1, "maxUnavailable": 1},
        },
    }


async def card_order(page: Page) -> list[str]:
    keys: list[str] = await page.eval_on_selector_all("#workloads .card:not([hidden])",
                                                      "cs => cs.map(c => c.dataset.key)")
    return keys


async def summary(page: Page) -> dict[str, str]:
    counts: dict[str, str] = await page.eval_on_selector_all(
        "#summary .count", "cs => Object.fromEntries(cs.map(c => [c.dataset.phase, c.querySelector('b').textContent]))")
    return counts


async def colours(page: Page, key: str) -> dict[str, str]:
    """Revision id -> colour, as the card's revision table shows them."""
    found: dict[str, str] = await page.eval_on_selector_all(
        f'[data-key="{key}"] tr[data-revision]',
        "rows => Object.fromEntries(rows.map(r => [r.dataset.revision, r.dataset.colour]))")
    return found


def screenshot_dir(tmp_path: Path) -> Path:
    chosen = os.environ.get("KUBELOOP_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path


async def shoot(page: Page, directory: Path, name: str, focus: str | None = None) -> None:
    """A screenshot of the window (scrolled to ``focus`` first, if given)."""
    if focus is not None:
        await page.locator(focus).scroll_into_view_if_needed()
    path = directory / name
    await page.screenshot(path=str(path))
    print(f"screenshot: {path}")


async def wait_for_feed(dashboard_url: str, check: str) -> None:
    """Until the dashboard's state (not the page) holds ``check`` (a substring of /api/state)."""
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

            # -- 2. attention first, a summary strip, a namespace filter and a search box ------------
            await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
            await client.create(DEPLOYMENTS, broken_deployment(), namespace="shop")
            # "shop" sorts after "default", but the failed rollout comes first, and the strip counts it.
            failed_first = """() => {
              const cards = [...document.querySelectorAll("#workloads .card")].map((c) => c.dataset.key);
              const failed = document.querySelector('#summary [data-phase="failed"] b')?.textContent;
              const badge = document.querySelector('[data-key="Deployment/shop/cart"] .badge')?.textContent;
              return badge === "failed" && failed === "1"
                && cards.join() === "Deployment/shop/cart,Deployment/default/web";
            }"""
            await page.wait_for_function(failed_first, timeout=60_000)
            counts = await summary(page)
            assert (counts["complete"], counts["total"]) == ("1", "2")
            assert int(counts["failing-pods"]) >= 1
            await page.select_option("#namespace", "default")
            assert await card_order(page) == ["Deployment/default/web"]
            assert (await summary(page))["failed"] == "0"
            await page.select_option("#namespace", "")
            await page.fill("#search", "cart:1")
            assert await card_order(page) == ["Deployment/shop/cart"]
            await page.fill("#search", "no-such-thing")
            assert await card_order(page) == [] and await page.is_visible("#none-match")
            await page.fill("#search", "web")
            await page.reload()
            await page.wait_for_function("() => document.querySelector('#connection').textContent === 'live'")
            assert await page.input_value("#search") == "web"
            assert await card_order(page) == ["Deployment/default/web"]
            await page.fill("#search", "")

            # -- 3. partition, paused, and a colour per revision ---------------------------------------
            await client.create(CLONESETS, partitioned_cloneset(), namespace="default")
            before = await client.get(DEPLOYMENTS, "web", namespace="default")
            before["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/web:2"
            await client.update(DEPLOYMENTS, before, namespace="default")
            two_revisions = ("() => document.querySelectorAll("
                             "'[data-key=\"Deployment/default/web\"] tr[data-revision]').length === 2")
            await page.wait_for_function(two_revisions, timeout=30_000)
            first = await colours(page, "Deployment/default/web")
            assert len(set(first.values())) == 2  # two revisions, two colours
            await page.wait_for_function(
                "() => document.querySelector('[data-key=\"Deployment/default/web\"] .badge')?.textContent"
                " === 'complete'", timeout=60_000)
            await page.reload()
            await page.wait_for_function(two_revisions, timeout=30_000)
            assert await colours(page, "Deployment/default/web") == first  # same colours after the rollout and a reload
            cs_card = '[data-key="CloneSet/default/cs"]'
            await page.wait_for_selector(f"{cs_card} .chip.partition", timeout=30_000)
            assert "partition 1" in await page.inner_text(f"{cs_card} .chip.partition")
            assert "keeps 1 on older revisions" in await page.inner_text(f"{cs_card} .chip.partition")
            assert await page.locator(f"{cs_card} .chip.paused").count() == 0
            cs = await client.get(CLONESETS, "cs", namespace="default")
            cs["spec"]["updateStrategy"]["paused"] = True
            await client.update(CLONESETS, cs, namespace="default")
            await page.wait_for_selector(f"{cs_card} .chip.paused", timeout=30_000)
            assert await page.text_content(f"{cs_card} .badge") == "paused"
            await shoot(page, shots, "dashboard-cloneset.png", cs_card)

            # -- 4. a click on a pod tile shows its conditions, restarts and events ------------------
            await page.click('[data-key="Deployment/shop/cart"] .tile[data-state="failing"]')
            await page.wait_for_selector("#details table.containers", timeout=10_000)
            title = await page.inner_text("#details h2")
            assert title.startswith("shop/cart-")
            pod = await client.get("pods", title.split("/", 1)[1], namespace="shop")
            shown_restarts = int(await page.inner_text('#details [data-field="restarts"]'))
            restarts_now = sum(c["restartCount"] for c in pod["status"]["containerStatuses"])
            assert 1 <= shown_restarts <= restarts_now  # it keeps crashing while we look
            assert "Waiting (CrashLoopBackOff)" in await page.inner_text("#details table.containers") or \
                "Terminated" in await page.inner_text("#details table.containers")
            assert "Ready" in await page.inner_text("#details table.conditions")
            assert "BackOff" in await page.inner_text("#details table.events")
            await shoot(page, shots, "dashboard-pod-details.png")
            await page.keyboard.press("Escape")
            assert await page.is_hidden("#details")

            # -- 5. pause, resume and undo, behind the cluster's token ------------------------------------
            web_card = '[data-key="Deployment/default/web"]'

            async def press(action: str, expect: str) -> str:
                await page.click(f'{web_card} button[data-action="{action}"]')
                await page.wait_for_function(
                    "([card, text]) => document.querySelector(card + ' .action-result')?.textContent.includes(text)",
                    arg=[web_card, expect], timeout=15_000)
                return await page.inner_text(f"{web_card} .action-result")

            async def web_spec() -> dict[str, Any]:
                spec: dict[str, Any] = (await client.get(DEPLOYMENTS, "web", namespace="default"))["spec"]
                return spec

            assert (await press("undo", "401")).startswith("401: this action needs the cluster's bearer token")
            await page.fill("#token", "not-the-token")
            assert "the token does not match" in await press("pause", "401")
            assert "paused" not in await web_spec()
            token = client.config.token
            assert token
            await page.fill("#token", token)
            await page.reload()
            assert await page.input_value("#token") == token  # kept for the tab, across a reload
            assert await press("pause", "paused") == "deployment.apps/web paused"
            assert (await web_spec())["paused"] is True
            await page.wait_for_selector(f'{web_card} button[data-action="resume"]', timeout=15_000)
            assert "cannot rollback a paused deployment" in await press("undo", "409")
            await shoot(page, shots, "dashboard-actions.png", web_card)
            assert await press("resume", "resumed") == "deployment.apps/web resumed"
            assert (await web_spec())["paused"] is False
            # The card is drawn again when the resume's watch event arrives (Pause in place of
            # Resume); a click landing while it is replaced would be lost, so wait for it.
            await page.wait_for_selector(f'{web_card} button[data-action="pause"]', timeout=15_000)
            assert await press("undo", "rolled back") == "deployment.apps/web rolled back"
            template = (await web_spec())["template"]
            assert template["spec"]["containers"][0]["image"] == "registry.example/web:1"
            assert "pod-template-hash" not in template["metadata"]["labels"]
            await page.wait_for_function(
                "(card) => [...document.querySelectorAll(card + ' .tile')].some((t) => t.dataset.update === 'true')"
                " && document.querySelector(card + ' .revlabel small')?.textContent === 'registry.example/web:1'",
                arg=web_card, timeout=30_000)

            # The CloneSet's buttons, through the same routes: resume, then undo to the previous revision.
            async def post(path: str) -> tuple[int, str]:
                async with aiohttp.ClientSession() as session, session.post(
                        f"{dashboard_url}api/workloads/CloneSet/default/cs/{path}",
                        headers={"Authorization": f"Bearer {token}"}) as answer:
                    return answer.status, (await answer.json())["message"]

            assert await post("resume") == (200, "cloneset.apps.kruise.io/cs resumed")
            assert await post("undo") == (409, "no last revision to roll back to")
            cs = await client.get(CLONESETS, "cs", namespace="default")
            cs["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/cs:2"
            await client.update(CLONESETS, cs, namespace="default")
            await wait_for_feed(dashboard_url, "registry.example/cs:2")
            assert await post("undo") == (200, "cloneset.apps.kruise.io/cs rolled back")
            restored = await client.get(CLONESETS, "cs", namespace="default")
            assert restored["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/cs:1"

            # -- 6. a time axis, and a zoom that survives a reload ------------------------------------
            timeline = f"{web_card} svg.timeline"
            box = f"{web_card} .timeline-box"  # stays, while the svg inside is redrawn every second

            async def window_of() -> tuple[str, float]:
                box: dict[str, str] = await page.eval_on_selector(
                    timeline, "svg => ({w: svg.dataset.window, s: svg.dataset.start, e: svg.dataset.end})")
                return box["w"], round(float(box["e"]) - float(box["s"]), 3)

            await page.click('#zoom button[data-window="60"]')
            assert await window_of() == ("60", 60.0)
            ticks = await page.eval_on_selector_all(f"{timeline} text.tick", "ts => ts.map(t => Number(t.dataset.t))")
            assert len(ticks) >= 3 and ticks == sorted(ticks) and len({b - a for a, b in pairwise(ticks)}) == 1
            await page.reload()
            await page.wait_for_selector(timeline)
            assert (await window_of())[0] == "60"  # remembered by the browser
            assert await page.get_attribute('#zoom button[data-window="60"]', "class") == "active"
            await page.hover(box)
            await page.mouse.wheel(0, -120)  # zoom in: the next narrower window
            await page.wait_for_function(f"() => document.querySelector('{timeline}').dataset.window === '30'")
            for _ in range(8):  # zoom out past the widest window: everything since watching started
                await page.mouse.wheel(0, 120)
            await page.wait_for_function(f"() => document.querySelector('{timeline}').dataset.window === '0'")
            await page.click('#zoom button[data-window="60"]')
            await shoot(page, shots, "dashboard-timeline.png", box)
        finally:
            await browser.close()
