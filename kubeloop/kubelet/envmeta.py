"""Environment read from pod metadata, and the runtime metadata the node agent reports.

A container may read a label or an annotation of its pod through an env ``fieldRef``
(``metadata.labels['k']`` / ``metadata.annotations['k']``). The values are fixed when the
container starts; OpenKruise changes such a label in place and relies on the node agent
(kruise-daemon) to restart the container with the new value and to report, in the pod
annotation ``apps.kruise.io/runtime-containers-meta``, which values each running container
was started with. The CloneSet controller finishes an env-from-metadata update only when
that report matches the pod's current metadata for every container.

The report is ``{"containers": [{"name", "containerID", "restartCount", "hashes":
{"extractedEnvFromMetadataHash": <int>}}]}``. Upstream hashes with the kubelet's container
hasher; both ends here are ours, so the hash is :func:`env_metadata_hash`, which the
controller computes identically (``kubeloop.controllers.cloneset.runtimemeta``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from kubeloop.api import kruise
from kubeloop.api.meta import annotations_of

EnvValues = tuple[tuple[str, str], ...]
"""``(env name, value)`` pairs of the env vars read from metadata, in spec order."""

_SOURCES = {"metadata.labels": "labels", "metadata.annotations": "annotations"}


def _metadata_reference(env: Mapping[str, Any]) -> tuple[str, str] | None:
    """``("labels"|"annotations", key)`` when the env var reads one pod label or annotation."""
    value_from = env.get("valueFrom")
    field_ref = value_from.get("fieldRef") if isinstance(value_from, Mapping) else None
    if not isinstance(field_ref, Mapping):
        return None
    path = str(field_ref.get("fieldPath") or "")
    head, sep, rest = path.partition("['")
    if not sep or not rest.endswith("']") or head not in _SOURCES:
        return None
    key = rest[: -len("']")]
    return (_SOURCES[head], key) if key else None


def reads_metadata(container: Mapping[str, Any]) -> bool:
    """Whether any env var of the container reads a pod label or annotation."""
    return any(isinstance(env, Mapping) and _metadata_reference(env) is not None for env in container.get("env") or ())


def env_from_metadata(container: Mapping[str, Any], pod: Mapping[str, Any]) -> EnvValues:
    """The values the container's metadata-reading env vars have for the pod as it is now.

    A missing label or annotation reads as the empty string, as the kubelet resolves it.
    """
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    values: list[tuple[str, str]] = []
    for env in container.get("env") or ():
        if not isinstance(env, Mapping):
            continue
        reference = _metadata_reference(env)
        if reference is None:
            continue
        source = metadata.get(reference[0])
        value = source.get(reference[1]) if isinstance(source, Mapping) else None
        values.append((str(env.get("name") or ""), str(value) if value is not None else ""))
    return tuple(values)


def env_metadata_hash(values: Iterable[tuple[str, str]]) -> int:
    """A stable 63-bit hash of the ``(name, value)`` pairs (order-independent).

    Contract shared with the CloneSet controller: SHA-256 of the JSON array of the pairs
    sorted, first 8 bytes big-endian, top bit cleared (so it survives any JSON reader).
    """
    encoded = orjson.dumps(sorted([name, value] for name, value in values))
    return int.from_bytes(hashlib.sha256(encoded).digest()[:8], "big") & (2**63 - 1)


def runtime_containers_meta(statuses: Iterable[Mapping[str, Any]], started_env: Mapping[str, EnvValues]) -> str:
    """The ``runtime-containers-meta`` annotation for containers that have started.

    ``statuses`` are the pod's rendered ``containerStatuses``; ``started_env`` the env values
    each container's current run was started with. Containers without a container id (never
    started) are left out, as the runtime knows nothing of them.
    """
    containers = [
        {
            "name": str(status.get("name")),
            "containerID": str(status.get("containerID")),
            "restartCount": status.get("restartCount", 0),
            "hashes": {"extractedEnvFromMetadataHash": env_metadata_hash(started_env.get(str(status.get("name")), ()))},
        }
        for status in statuses
        if status.get("containerID")
    ]
    return orjson.dumps({"containers": containers}).decode()


def runtime_meta_patch(pod: Mapping[str, Any], report: str) -> dict[str, Any] | None:
    """The merge patch writing ``report`` onto the pod, or ``None`` when it is already there."""
    if annotations_of(pod).get(kruise.RUNTIME_CONTAINERS_META_ANNOTATION) == report:
        return None
    return {"metadata": {"annotations": {kruise.RUNTIME_CONTAINERS_META_ANNOTATION: report}}}
