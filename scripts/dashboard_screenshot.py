"""Take ``docs/dashboard.png``: the dashboard in headless Chromium during a rolling update.

Starts an in-process cluster and the dashboard, creates the Deployment that the picture in
``docs/dashboard.md`` describes (10 replicas of ``shop:1.4``, ``maxSurge: 30%``,
``maxUnavailable: 20%``, pods slow to turn ready and to stop), rolls it to ``shop:1.5`` and
takes the screenshot once new, old and terminating pods are all on screen. The other
screenshots in ``docs/`` come from the browser test (``KUBELOOP_SCREENSHOTS=docs``, see
``tests/e2e/dashboard/test_dashboard_features.py``).

    PYTHONPATH=$PWD .venv/bin/python scripts/dashboard_screenshot.py [docs/dashboard.png]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from kubeloop.client import DEPLOYMENTS, NAMESPACES
from kubeloop.dashboard import start_dashboard
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

MID_ROLLOUT = """() => {
  const states = [...document.querySelectorAll('[data-key="Deployment/shop/shop"] .tile')]
    .map((t) => `${t.dataset.update}:${t.dataset.state}`);
  const has = (s) => states.includes(s);
  return has("true:available") && (has("true:running") || has("true:pending"))
    && has("false:available") && has("false:terminating");
}"""


def shop(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "shop", "namespace": "shop"},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": "shop"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "30%", "maxUnavailable": "20%"}},
            "template": {
                "metadata": {"labels": {"app": "shop"},
                             "annotations": {"sim.kubeloop.io/ready-delay": "3",
                                             "sim.kubeloop.io/termination-delay": "5"}},
                "spec": {"containers": [{"name": "shop", "image": image}]},
            },
        },
    }


async def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        config = ClusterConfig(data_dir=Path(data_dir), kubelet=quick_kubelet_config(),
                               controllers=["replicaset", "deployment", "garbagecollector"])
        async with EmbeddedCluster(config) as cluster:
            await cluster.wait_ready()
            client = cluster.client
            url, stop = await start_dashboard(client, "127.0.0.1", 0)
            try:
                await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
                await client.create(DEPLOYMENTS, shop("registry.example/shop:1.4"), namespace="shop")
                async with async_playwright() as playwright:
                    browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                               args=CHROMIUM_ARGS)
                    page = await browser.new_page(viewport={"width": 1280, "height": 860})
                    await page.goto(url)
                    await page.click('#zoom button[data-window="60"]')
                    await page.wait_for_function(
                        "() => document.querySelector('.badge')?.textContent === 'complete'", timeout=120_000)
                    deployment = await client.get(DEPLOYMENTS, "shop", namespace="shop")
                    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/shop:1.5"
                    await client.update(DEPLOYMENTS, deployment, namespace="shop")
                    await page.wait_for_function(MID_ROLLOUT, timeout=120_000, polling=50)
                    await page.screenshot(path=str(target))
                    await browser.close()
            finally:
                await stop()
    print(f"wrote {target}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/dashboard.png")))
