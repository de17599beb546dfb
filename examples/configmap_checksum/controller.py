"""Keep a checksum of mounted ConfigMaps on the Deployments that mount them.

When a ConfigMap changes, every Deployment whose pod template mounts it gets a new
``example.kubeloop.io/config-checksum`` annotation on its template, which rolls its pods.

Run it against any cluster: ``python -m examples.configmap_checksum.controller [KUBECONFIG]``.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from typing import Any

import orjson

from kubeloop.client import CONFIG_MAPS, DEPLOYMENTS, ApiClient, load_config, load_kubeconfig
from kubeloop.runtime import eventloop
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.manager import Manager, ManagerOptions

ANNOTATION = "example.kubeloop.io/config-checksum"
BY_CONFIGMAP = "configmap"


def mounted_configmaps(deployment: dict[str, Any]) -> list[str]:
    """Names of the ConfigMaps a Deployment's pods mount as volumes (the index function)."""
    volumes = deployment.get("spec", {}).get("template", {}).get("spec", {}).get("volumes") or []
    names = [v["configMap"]["name"] for v in volumes if isinstance(v.get("configMap"), dict)]
    namespace = deployment["metadata"].get("namespace", "")
    return [f"{namespace}/{name}" for name in names]


async def setup(mgr: Manager) -> None:
    deployments = await mgr.factory.informer_for(DEPLOYMENTS, indexers={BY_CONFIGMAP: mounted_configmaps})
    configmaps = await mgr.factory.informer_for(CONFIG_MAPS)

    def deployments_mounting(cm: dict[str, Any]) -> list[Request]:
        key = f"{cm['metadata']['namespace']}/{cm['metadata']['name']}"
        return [Request.for_object(d) for d in deployments.indexer.by_index(BY_CONFIGMAP, key)]

    async def reconcile(request: Request) -> None:
        deployment = deployments.indexer.get(request.key)
        if deployment is None:
            return  # deleted
        digest = hashlib.sha256()
        for key in sorted(mounted_configmaps(deployment)):
            cm = configmaps.indexer.get(key)
            digest.update(orjson.dumps([key, cm.get("data") if cm else None], option=orjson.OPT_SORT_KEYS))
        checksum = digest.hexdigest()
        current = deployment["spec"]["template"].get("metadata", {}).get("annotations", {}).get(ANNOTATION)
        if current != checksum:
            patch = {"spec": {"template": {"metadata": {"annotations": {ANNOTATION: checksum}}}}}
            await mgr.client.patch(DEPLOYMENTS, request.name, patch, namespace=request.namespace)

    await (
        mgr.controller("configmap-checksum")
        .for_(DEPLOYMENTS)
        .watches(CONFIG_MAPS, deployments_mounting)
        .complete(reconcile)
    )


async def main(kubeconfig: str | None) -> None:
    config = load_kubeconfig(kubeconfig) if kubeconfig else load_config()
    async with ApiClient(config) as client:
        mgr = Manager(client, ManagerOptions(name="configmap-checksum", health_port=8081))
        await setup(mgr)
        await mgr.start()
        try:
            await asyncio.Event().wait()
        finally:
            await mgr.stop()


if __name__ == "__main__":
    eventloop.run(main(sys.argv[1] if len(sys.argv) > 1 else None))
