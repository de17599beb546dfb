"""The ServiceAccount admission of pod creates: default the account, refuse a missing one.

As upstream's ``plugin/pkg/admission/serviceaccount`` (``Admit``, create only): a pod without
``spec.serviceAccountName`` (nor the deprecated ``spec.serviceAccount``) runs as ``default``;
the account must exist in the pod's namespace, else 403
``pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found``.
Mirror pods (``kubernetes.io/config.mirror``) are left alone. Unlike upstream no token volume
is mounted: the simulated kubelet runs no containers that would read it.

Upstream retries the lookup of ``default`` for a while because its serviceaccounts controller
creates it asynchronously; here it is created with the namespace, so one lookup suffices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api.status import forbidden_error
from kubeloop.server.namespace_lifecycle import admission_name
from kubeloop.server.storage import ResourceType

Obj = dict[str, Any]
Lookup = Callable[[ResourceType, str, str], Mapping[str, Any] | None]

SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")
DEFAULT_SERVICE_ACCOUNT = "default"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def _is_mirror(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and MIRROR_POD_ANNOTATION in annotations


def admit_pod_service_account(pod: Obj, namespace: str, lookup: Lookup) -> None:
    """Default ``pod``'s service account in place and check that it exists (403 if not)."""
    if _is_mirror(pod):
        return
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        # Left for validation to report; upstream's decoding would have refused the body.
        return
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
    if not isinstance(account, str):
        return
    spec["serviceAccountName"] = account
    spec["serviceAccount"] = account
    if lookup(SERVICE_ACCOUNTS, namespace, account) is None:
        raise forbidden_error("pods", "", admission_name(pod),
                              f"error looking up service account {namespace}/{account}: "
                              f"serviceaccount {_quote(account)} not found")


def _quote(text: str) -> str:
    # Go's %q for the plain names this message carries.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
