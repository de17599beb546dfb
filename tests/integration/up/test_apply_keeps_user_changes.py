"""``kubeloop up --apply`` applies as client-side ``kubectl apply``: a restart re-applying the
same manifest keeps what the user changed since, and kubectl reads the annotation it wrote."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kubeloop.cli.manifests import LAST_APPLIED, apply_manifest, load_manifests
from kubeloop.client import DEPLOYMENTS
from kubeloop.testing.cluster import EmbeddedCluster

KUBECTL = "kubectl.1.33" if Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.33").exists() else "kubectl"
SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "manifests" / "deployment.yaml"


async def test_reapplying_keeps_scale_and_image_and_applies_real_changes(kubeloop_cluster: EmbeddedCluster,
                                                                         tmp_path: Path) -> None:
    client = kubeloop_cluster.client
    [manifest] = load_manifests(SAMPLE)
    name = manifest["metadata"]["name"]
    assert await apply_manifest(client, manifest) == f"deployment.apps/{name} created"
    assert await apply_manifest(client, manifest) == f"deployment.apps/{name} unchanged"

    # The user scales and changes the image (as kubectl scale / set image would).
    current = await client.get(DEPLOYMENTS, name, namespace="default")
    container = current["spec"]["template"]["spec"]["containers"][0]["name"]
    await client.patch(DEPLOYMENTS, name, {"spec": {"replicas": 5, "template": {"spec": {"containers": [
        {"name": container, "image": "nginx:1.27"}]}}}}, patch_type="strategic", namespace="default")
    assert await apply_manifest(client, manifest) == f"deployment.apps/{name} unchanged"
    kept = await client.get(DEPLOYMENTS, name, namespace="default")
    assert kept["spec"]["replicas"] == 5
    assert kept["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"

    # A changed manifest changes what it changed, and only that.
    changed = {**manifest, "metadata": {**manifest["metadata"], "labels": {"tier": "front"}}}
    assert await apply_manifest(client, changed) == f"deployment.apps/{name} configured"
    after = await client.get(DEPLOYMENTS, name, namespace="default")
    assert after["metadata"]["labels"] == {"tier": "front"}
    assert after["spec"]["replicas"] == 5

    # kubectl finds the annotation it would have written.
    # (The server runs on this event loop: kubectl must not block it.)
    process = await asyncio.create_subprocess_exec(
        KUBECTL, "--kubeconfig", str(kubeloop_cluster.kubeconfig_path), "apply", "view-last-applied",
        f"deployment/{name}", "-o", "json", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/lib/google-cloud-sdk/bin:/usr/bin:/bin", "HOME": str(tmp_path)})
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    assert '"tier": "front"' in out.decode()
    assert LAST_APPLIED in after["metadata"]["annotations"]
