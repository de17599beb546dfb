"""The ServiceAccount admission of pod creates: default the account, refuse a missing one.

As upstream's ``plugin/pkg/admission/serviceaccount`` (``Admit``, create only): a pod without
``spec.serviceAccountName`` (nor the deprecated ``spec.serviceAccount``) runs as ``default``;
the account must exist in the pod's namespace, else 403
``pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found``.
Mirror pods (``kubernetes.io/config.mirror``) are left alone.

Upstream retries the lookup of ``default`` for a while because its serviceaccounts controller
creates it asynchronously; here it is created with the namespace, so one lookup suffices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api.status import forbidden_error, go_quote
from kubeloop.server.admission.serviceaccount import default_service_account_name
from kubeloop.server.namespace_lifecycle import admission_name
from kubeloop.server.storage import ResourceType

Obj = dict[str, Any]
Lookup = Callable[[ResourceType, str, str], Mapping[str, Any] | None]

SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")


def admit_pod_service_account(pod: Obj, namespace: str, lookup: Lookup) -> Mapping[str, Any] | None:
    """Default ``pod``'s service account in place and check that it exists (403 if not); returns
    the ServiceAccount (None for a pod that names none: a mirror pod), so that the token mount
    does not look it up again.

    Runs before the name is generated, so a refusal names the pod as upstream's admission does
    (its ``generateName`` when it has no name yet); the token volume is mounted later, with the
    other admission plugins (:mod:`kubeloop.server.podplugins`).
    """
    account = default_service_account_name(pod)
    if not account:
        return None
    found = lookup(SERVICE_ACCOUNTS, namespace, account)
    if found is None:
        raise forbidden_error("pods", "", admission_name(pod),
                              f"error looking up service account {namespace}/{account}: "
                              f"serviceaccount {go_quote(account)} not found")
    return found
