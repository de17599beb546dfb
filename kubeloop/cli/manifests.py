"""Applying YAML manifests through the client (what ``kubeloop up --apply`` does).

As client-side ``kubectl apply``: each document is created with the
``kubectl.kubernetes.io/last-applied-configuration`` annotation (the manifest as compact JSON
with sorted keys and a final newline, as kubectl writes it); an object that exists is patched
with the difference between the configuration applied last time and this one, so a field the
manifest did not change keeps whatever the user set since (``kubectl scale``, ``set image``
survive a restart of ``kubeloop up --apply``). An object without the annotation is merged
with the manifest where they differ, and gets the annotation. The result is reported as kubectl
does (``deployment.apps/web created``, ``configured``, ``unchanged``). Lists are replaced whole
(a JSON merge patch; kubectl merges some lists by key), and nothing is pruned.
"""

from __future__ import annotations

import json
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


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _without_last_applied(manifest: dict[str, Any]) -> dict[str, Any]:
    meta = dict(manifest.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return {**manifest, "metadata": meta}


def last_applied_text(manifest: dict[str, Any]) -> str:
    """The annotation's value for ``manifest``: Go's ``json.Marshal`` of it, and a newline."""
    return json.dumps(_without_last_applied(manifest), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False) + "\n"


def merge_patch(old: Any, new: Any) -> dict[str, Any]:
    """The JSON merge patch that turns ``old`` into ``new`` (both mappings): changed and added
    keys with their new value, removed keys as null, nested mappings recursively."""
    patch: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key) if isinstance(old, dict) else None
        if isinstance(value, dict) and isinstance(before, dict):
            nested = merge_patch(before, value)
            if nested:
                patch[key] = nested
        elif before != value or (isinstance(old, dict) and key not in old):
            patch[key] = value
    for key in old if isinstance(old, dict) else ():
        if key not in new:
            patch[key] = None
    return patch


def _with_annotation(manifest: dict[str, Any], text: str) -> dict[str, Any]:
    meta = dict(manifest.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), LAST_APPLIED: text}
    return {**manifest, "metadata": meta}


async def apply_manifest(client: ApiClient, manifest: dict[str, Any], namespace: str = "default") -> str:
    """Apply ``manifest`` as client-side ``kubectl apply`` does; returns kubectl's one-line report."""
    api_version = str(manifest["apiVersion"])
    group = api_version.rpartition("/")[0]
    resource = await client.resource(f"{manifest['kind']}.{group}" if group else str(manifest["kind"]))
    name = str((manifest.get("metadata") or {}).get("name") or "")
    ns = (manifest.get("metadata") or {}).get("namespace") or namespace if resource.namespaced else None
    label = f"{resource.kind.lower()}.{resource.group}/{name}" if resource.group else f"{resource.kind.lower()}/{name}"
    applied = last_applied_text(manifest)
    try:
        await client.create(resource, _with_annotation(manifest, applied), namespace=ns)
    except AlreadyExists:
        current = await client.get(resource, name, namespace=ns)
        previous = ((current.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        wanted = _without_last_applied(manifest)
        if isinstance(previous, str):
            try:
                before = json.loads(previous)
            except ValueError:
                before = {}
            patch = merge_patch(before if isinstance(before, dict) else {}, wanted)
        else:
            patch = {} if _contains(current, wanted) else wanted
        if not patch and previous == applied:
            return f"{label} unchanged"
        patch = _with_annotation(patch, applied)
        await client.patch(resource, name, patch, patch_type="merge", namespace=ns)
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
