"""The webhook's start-up writes: its certificate Secret, and ``caBundle`` in its configurations.

As OpenKruise's webhook controller (kruise ``pkg/webhook/util/controller/webhook_controller.go``,
``writer/certwriter.go`` ``handleCommon`` / ``createIfNotExists``, ``configuration.Ensure``):

* the Secret :data:`CERT_SECRET` in the install namespace is read; when missing it is created
  with a new CA and serving certificate, and when another replica created it first (409
  AlreadyExists) it is read again; when what it holds is not valid (see
  :func:`kubeloop.webhook.certificates.is_valid`; an empty Secret shipped with the manifests, as
  OpenKruise's chart does, is not) its data is replaced by an update preconditioned on the
  resourceVersion read (a 409 Conflict means another writer got there first: read it again);
* every webhook of both configurations gets the CA as ``caBundle``; a configuration is written
  (PUT, on the resourceVersion read) only when some webhook's bundle differs.

Exactly the rights of :data:`WEBHOOK_CLUSTER_RULES` and :data:`WEBHOOK_NAMESPACE_RULES` are used.
"""

from __future__ import annotations

import base64
import datetime
import logging
from collections.abc import Callable
from typing import Any

from kubeloop.client import SECRETS, AlreadyExists, ApiClient, Conflict, NotFound, Resource, find_builtin
from kubeloop.webhook import certificates
from kubeloop.webhook.certificates import Artifacts
from kubeloop.webhook.configuration import (
    CERT_SECRET,
    MUTATING_CONFIGURATION,
    VALIDATING_CONFIGURATION,
    service_dns_names,
)

log = logging.getLogger(__name__)

Clock = Callable[[], datetime.datetime]


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _builtin(name: str) -> Resource:
    resource = find_builtin(name)
    assert resource is not None, name
    return resource


MUTATING = _builtin("mutatingwebhookconfigurations.admissionregistration.k8s.io")
VALIDATING = _builtin("validatingwebhookconfigurations.admissionregistration.k8s.io")
CONFIGURATIONS = ((MUTATING, MUTATING_CONFIGURATION), (VALIDATING, VALIDATING_CONFIGURATION))

_ATTEMPTS = 5


def _secret(namespace: str, artifacts: Artifacts, current: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Secret to write; replacing ``current``, its resourceVersion (the precondition), labels
    and annotations are kept (kruise drops them: an installer's labels or kubectl's
    last-applied annotation on an empty Secret shipped with the manifests would be lost)."""
    metadata: dict[str, Any] = {"name": CERT_SECRET, "namespace": namespace}
    old = (current or {}).get("metadata") or {}
    for field in ("resourceVersion", "labels", "annotations"):
        if old.get(field):
            metadata[field] = old[field]
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": "Opaque",
            "data": certificates.to_secret_data(artifacts)}


async def ensure_certificate(client: ApiClient, namespace: str, clock: Clock = _utc_now) -> Artifacts:
    """The CA and serving certificate to use, from the Secret, created or renewed as needed."""
    names = service_dns_names(namespace)
    for _ in range(_ATTEMPTS):
        try:
            secret = await client.get(SECRETS, CERT_SECRET, namespace=namespace)
        except NotFound:
            artifacts = certificates.issue(names, clock())
            try:
                await client.create(SECRETS, _secret(namespace, artifacts), namespace=namespace)
            except AlreadyExists:
                log.info("secret %s/%s was created by another replica; reading it", namespace, CERT_SECRET)
                continue
            log.info("created secret %s/%s with a new CA and serving certificate", namespace, CERT_SECRET)
            return artifacts
        held = certificates.from_secret(secret)
        if held is not None and certificates.is_valid(held, names, clock()):
            return held
        artifacts = certificates.issue(names, clock(), held)
        try:
            await client.update(SECRETS, _secret(namespace, artifacts, secret), namespace=namespace)
        except Conflict:
            log.info("secret %s/%s changed while being renewed; reading it again", namespace, CERT_SECRET)
            continue
        log.info("renewed the serving certificate in secret %s/%s", namespace, CERT_SECRET)
        return artifacts
    raise RuntimeError(f"secret {namespace}/{CERT_SECRET} kept changing while it was being written")


def with_ca_bundle(configuration: dict[str, Any], ca_bundle: str) -> bool:
    """Set ``caBundle`` on every webhook of ``configuration`` in place; whether anything changed."""
    changed = False
    for webhook in configuration.get("webhooks") or []:
        if not isinstance(webhook, dict):
            continue
        client_config = webhook.setdefault("clientConfig", {})
        if client_config.get("caBundle") != ca_bundle:
            client_config["caBundle"] = ca_bundle
            changed = True
    return changed


async def ensure_ca_bundles(client: ApiClient, ca_cert: bytes) -> list[str]:
    """Put ``ca_cert`` in both configurations; the names of those not found (nothing to do yet)."""
    ca_bundle = base64.b64encode(ca_cert).decode()
    missing: list[str] = []
    for resource, name in CONFIGURATIONS:
        for _ in range(_ATTEMPTS):
            try:
                configuration = await client.get(resource, name)
            except NotFound:
                missing.append(name)
                break
            if not with_ca_bundle(configuration, ca_bundle):
                break
            try:
                await client.update(resource, configuration)
            except Conflict:
                continue
            log.info("set caBundle on %s %s", resource.kind, name)
            break
        else:
            raise RuntimeError(f"{resource.kind} {name} kept changing while its caBundle was being set")
    return missing
