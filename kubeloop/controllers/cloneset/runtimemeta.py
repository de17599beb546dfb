"""Has the node restarted containers with the env values the pod's metadata now gives?

An in-place update that changes a label or annotation read by a container env ``fieldRef``
finishes only when the node agent (kruise-daemon upstream, the simulated kubelet here) reports
in the pod annotation ``apps.kruise.io/runtime-containers-meta`` that every container runs
with the current values. Upstream's rule (``checkAllContainersHashConsistent``, hash type
"extracted env from metadata"), restated: every spec container has a status and a report
entry, both name the same container id, and the reported hash equals the hash of the
container's metadata-read env resolved against the pod as it is now.

The hash is this project's contract with the simulated kubelet
(``kubeloop.kubelet.envmeta.env_metadata_hash``; the controller may not import the kubelet):
SHA-256 of the JSON array of sorted ``[env name, value]`` pairs, first 8 bytes big-endian,
top bit cleared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from kubeloop.api import kruise
from kubeloop.api.meta import annotations_of

_SOURCES = {"metadata.labels": "labels", "metadata.annotations": "annotations"}


def env_metadata_hash(values: Iterable[tuple[str, str]]) -> int:
    """Hash of ``(env name, value)`` pairs, independent of their order (see module docstring)."""
    encoded = orjson.dumps(sorted([name, value] for name, value in values))
    return int.from_bytes(hashlib.sha256(encoded).digest()[:8], "big") & (2**63 - 1)


def expected_env_values(container: Mapping[str, Any], pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The container's env vars that read a pod label or annotation, resolved against ``pod``
    (a missing key reads as the empty string)."""
    metadata = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    values: list[tuple[str, str]] = []
    for env in container.get("env") or ():
        value_from = env.get("valueFrom") if isinstance(env, Mapping) else None
        field_ref = value_from.get("fieldRef") if isinstance(value_from, Mapping) else None
        if not isinstance(field_ref, Mapping):
            continue
        head, sep, rest = str(field_ref.get("fieldPath") or "").partition("['")
        if not sep or not rest.endswith("']") or head not in _SOURCES or rest == "']":
            continue
        source = metadata.get(_SOURCES[head])
        value = source.get(rest[: -len("']")]) if isinstance(source, Mapping) else None
        values.append((str(env.get("name") or ""), str(value) if value is not None else ""))
    return values


def _report(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]] | None:
    text = annotations_of(pod).get(kruise.RUNTIME_CONTAINERS_META_ANNOTATION)
    if not text:
        return None
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    containers = parsed.get("containers") if isinstance(parsed, dict) else None
    if not isinstance(containers, list):
        return None
    return {str(c.get("name")): c for c in containers if isinstance(c, Mapping)}


def env_from_metadata_applied(pod: Mapping[str, Any]) -> bool:
    """Whether the node reports every container running with the pod's current metadata env."""
    report = _report(pod)
    if report is None:
        return False
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    statuses = {str(s.get("name")): s for s in status.get("containerStatuses") or () if isinstance(s, Mapping)}
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    for container in spec.get("containers") or ():
        name = str(container.get("name"))
        container_status, entry = statuses.get(name), report.get(name)
        if container_status is None or entry is None:
            return False
        if entry.get("containerID") != container_status.get("containerID"):
            return False
        hashes = entry.get("hashes")
        reported = hashes.get("extractedEnvFromMetadataHash") if isinstance(hashes, Mapping) else None
        if reported != env_metadata_hash(expected_env_values(container, pod)):
            return False
    return True
