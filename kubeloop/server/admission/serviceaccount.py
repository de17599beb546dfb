"""The ServiceAccount admission plugin's mutation of new pods (upstream's
``plugin/pkg/admission/serviceaccount``, ``Plugin.Admit`` and ``mountServiceAccountToken``).

On create of a pod that is not a mirror pod (annotation ``kubernetes.io/config.mirror``):

* ``spec.serviceAccountName`` defaults to ``default``;
* unless automount is off (the pod's ``automountServiceAccountToken`` wins, then the
  ServiceAccount's, else on), every init container and container without a mount at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` gets a read-only mount of the token
  volume there, and the pod gets that volume: the first volume named ``kube-api-access-*``
  if there is one, else a new projected ``kube-api-access-<5 random>`` volume (bound token with
  3607 s expiry, the ``kube-root-ca.crt`` ConfigMap's ``ca.crt``, the namespace via the downward
  API, mode 0644), added only when some container mounts it;
* a pod without ``imagePullSecrets`` takes the ServiceAccount's.

Deviation: upstream refuses a pod whose ServiceAccount does not exist (403 ``error looking up
service account``); here the ServiceAccount is optional (``None``: automount on, no pull
secrets), and that refusal is left to whoever serves default ServiceAccounts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_SERVICE_ACCOUNT = "default"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
BOUND_TOKEN_EXPIRATION_SECONDS = 3607
"""Upstream's ``WarnOnlyBoundTokenExpirationSeconds``: one hour plus seven seconds."""
_PROJECTED_DEFAULT_MODE = 0o644


def is_mirror_pod(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and MIRROR_POD_ANNOTATION in annotations


def token_volume(name: str) -> dict[str, Any]:
    """The projected volume upstream's ``TokenVolumeSource`` describes, named ``name``."""
    return {
        "name": name,
        "projected": {
            "defaultMode": _PROJECTED_DEFAULT_MODE,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": BOUND_TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace",
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    }


def should_automount(pod_spec: Mapping[str, Any], service_account: Mapping[str, Any] | None) -> bool:
    """The pod's choice wins, then the ServiceAccount's; on when neither says."""
    pod_choice = pod_spec.get("automountServiceAccountToken")
    if isinstance(pod_choice, bool):
        return pod_choice
    account_choice = service_account.get("automountServiceAccountToken") if service_account is not None else None
    if isinstance(account_choice, bool):
        return account_choice
    return True


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def mount_token(spec: dict[str, Any], new_suffix: Callable[[], str]) -> None:
    """Mount the token volume in every container lacking the mount path; add it if needed."""
    volume_name = ""
    for volume in _dicts(spec.get("volumes")):
        name = volume.get("name")
        if isinstance(name, str) and name.startswith(TOKEN_VOLUME_PREFIX):
            volume_name = name
            break
    has_volume = bool(volume_name)
    if not has_volume:
        volume_name = TOKEN_VOLUME_PREFIX + new_suffix()
    mounted = False
    # Init containers first, as upstream: the order only matters for the mounts' positions.
    for list_name in ("initContainers", "containers"):
        for container in _dicts(spec.get(list_name)):
            mounts = container.get("volumeMounts")
            existing = _dicts(mounts)
            if any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in existing):
                continue
            mount = {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
            container["volumeMounts"] = [*(mounts if isinstance(mounts, list) else []), mount]
            mounted = True
    if mounted and not has_volume:
        volumes = spec.get("volumes")
        spec["volumes"] = [*(volumes if isinstance(volumes, list) else []), token_volume(volume_name)]


def admit_service_account(pod: dict[str, Any], service_account: Mapping[str, Any] | None,
                          new_suffix: Callable[[], str]) -> None:
    """The plugin's mutation of a new ``pod`` (in place), given its ServiceAccount if it exists.

    Callers resolve the account named by :func:`service_account_name` after defaulting.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict) or is_mirror_pod(pod):
        return
    if should_automount(spec, service_account):
        mount_token(spec, new_suffix)
    if not spec.get("imagePullSecrets") and service_account is not None:
        secrets = [{"name": s.get("name") or ""} for s in _dicts(service_account.get("imagePullSecrets"))]
        if secrets:
            spec["imagePullSecrets"] = secrets


def default_service_account_name(pod: dict[str, Any]) -> str:
    """Default ``spec.serviceAccountName`` (and its alias) of a new non-mirror pod; returns it."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or is_mirror_pod(pod):
        return ""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if not isinstance(name, str) or not name:
        name = DEFAULT_SERVICE_ACCOUNT
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name
    return name
