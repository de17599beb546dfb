"""Applying YAML manifests through the client (what ``kubeloop up --apply`` does).

Each document is created, or, when it exists, merge-patched with the manifest; the result is
reported as kubectl does (``deployment.apps/web created``). This is a convenience for the quick
start, not a replacement for ``kubectl apply`` (no last-applied bookkeeping, no pruning).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubeloop.client import AlreadyExists, ApiClient


def load_manifests(path: Path) -> list[dict[str, Any]]:
    """The non-empty YAML documents of a file (a ``List`` is unpacked)."""
    documents: list[dict[str, Any]] = []
    for document in yaml.safe_load_all(path.read_text()):
        if not document:
            continue
        if not isinstance(document, dict) or "kind" not in document or "apiVersion" not in document:
            raise ValueError(f"{path}: every document needs apiVersion and kind")
        if document["kind"] == "List":
            documents.extend(item for item in document.get("items") or [] if isinstance(item, dict))
        else:
            documents.append(document)
    return documents


async def apply_manifest(client: ApiClient, manifest: dict[str, Any], namespace: str = "default") -> str:
    """Create ``manifest`` or merge it into the existing object; returns kubectl's one-line report."""
    api_version = str(manifest["apiVersion"])
    group = api_version.rpartition("/")[0]
    resource = await client.resource(f"{manifest['kind']}.{group}" if group else str(manifest["kind"]))
    name = str((manifest.get("metadata") or {}).get("name") or "")
    ns = (manifest.get("metadata") or {}).get("namespace") or namespace if resource.namespaced else None
    label = f"{resource.kind.lower()}.{resource.group}/{name}" if resource.group else f"{resource.kind.lower()}/{name}"
    try:
        await client.create(resource, manifest, namespace=ns)
    except AlreadyExists:
        current = await client.get(resource, name, namespace=ns)
        if _contains(current, manifest):
            return f"{label} unchanged"
        await client.patch(resource, name, manifest, patch_type="merge", namespace=ns)
        return f"{label} configured"
    return f"{label} created"



def _contains(current: Any, wanted: Any) -> bool:
    """Whether ``current`` already holds everything ``wanted`` says (server defaults aside).

    Maps: every wanted key is present with a contained value; lists: same length, element by
    element; scalars: equal.
    """
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(k in current and _contains(current[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (isinstance(current, list) and len(current) == len(wanted)
                and all(_contains(c, w) for c, w in zip(current, wanted, strict=True)))
    return bool(current == wanted)
