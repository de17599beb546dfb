"""The example controller of docs/write-your-own-controller.md, run against the embedded server."""

import asyncio
from typing import Any

from examples.configmap_checksum.controller import ANNOTATION, setup
from kubeloop.client import CONFIG_MAPS, DEPLOYMENTS, ApiClient
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.testing.polling import eventually


def deployment(name: str, configmap: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx:1.25",
                                    "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
                    "volumes": [{"name": "cfg", "configMap": {"name": configmap}}],
                },
            },
        },
    }


async def checksum(client: ApiClient, name: str) -> str | None:
    d = await client.get(DEPLOYMENTS, name, namespace="default")
    value = d["spec"]["template"]["metadata"].get("annotations", {}).get(ANNOTATION)
    return str(value) if value is not None else None


async def wait_change(client: ApiClient, name: str, old: str | None) -> str:
    async def changed() -> str | None:
        value = await checksum(client, name)
        return None if value == old else value

    result: str = await eventually(changed, timeout=15, what=f"the checksum of {name} to change from {old}")
    return result


async def test_checksum_follows_the_configmap(client: ApiClient) -> None:
    await client.create(CONFIG_MAPS, {"metadata": {"name": "settings", "namespace": "default"}, "data": {"a": "1"}},
                        namespace="default")
    await client.create(DEPLOYMENTS, deployment("web", "settings"), namespace="default")
    await client.create(DEPLOYMENTS, deployment("other", "unrelated"), namespace="default")
    mgr = Manager(client, ManagerOptions(name="example"))
    await setup(mgr)
    await mgr.start()
    first = await wait_change(client, "web", None)
    other = await wait_change(client, "other", None)
    await client.patch(CONFIG_MAPS, "settings", {"data": {"a": "2"}}, namespace="default")
    second = await wait_change(client, "web", first)
    assert second != first
    await asyncio.sleep(0.3)
    assert await checksum(client, "other") == other  # not mounted: untouched
    await mgr.stop()
