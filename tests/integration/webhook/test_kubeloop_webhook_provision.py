"""The webhook's start-up writes against an embedded server: the certificate Secret created,
taken over from a replica that won the race, renewed (also when another write races the renewal),
and ``caBundle`` written only where it differs."""

from __future__ import annotations

import base64
import datetime
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.client import SECRETS, ApiClient, exception_from_status, load_kubeconfig
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.webhook import certificates, provision
from kubeloop.webhook.configuration import (
    CERT_SECRET,
    MUTATING_CONFIGURATION,
    VALIDATING_CONFIGURATION,
    service_dns_names,
    webhook_configurations,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

Obj = dict[str, Any]
NAMES_OF = service_dns_names


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def admin(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ApiClient]:
    server = KubeServer(ServerConfig(data_dir=tmp_path_factory.mktemp("provision"), port=0, memory=True))
    await server.start()
    try:
        async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as client:
            yield client
    finally:
        await server.stop()


async def namespace(admin: ApiClient, name: str) -> str:
    await admin.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


class Interposed:
    """``admin`` with something happening first: ``get`` answers 404 ``misses`` times (another
    replica is about to create the Secret), ``update`` runs ``before_update`` once."""

    def __init__(self, admin: ApiClient, misses: int = 0, before_update: Any = None) -> None:
        self.admin = admin
        self.misses = misses
        self.before_update = before_update

    async def get(self, *args: Any, **kwargs: Any) -> Obj:
        if self.misses:
            self.misses -= 1
            raise exception_from_status({"reason": "NotFound", "code": 404, "message": "not yet"})
        result: Obj = await self.admin.get(*args, **kwargs)
        return result

    async def create(self, *args: Any, **kwargs: Any) -> Obj:
        result: Obj = await self.admin.create(*args, **kwargs)
        return result

    async def update(self, *args: Any, **kwargs: Any) -> Obj:
        if self.before_update is not None:
            step, self.before_update = self.before_update, None
            await step()
        result: Obj = await self.admin.update(*args, **kwargs)
        return result


async def stored(admin: ApiClient, ns: str) -> certificates.Artifacts | None:
    return certificates.from_secret(await admin.get(SECRETS, CERT_SECRET, namespace=ns))


async def test_created_then_reused(admin: ApiClient) -> None:
    ns = await namespace(admin, "created")
    first = await provision.ensure_certificate(admin, ns)
    assert await stored(admin, ns) == first
    assert certificates.is_valid(first, NAMES_OF(ns), datetime.datetime.now(datetime.UTC))
    version = (await admin.get(SECRETS, CERT_SECRET, namespace=ns))["metadata"]["resourceVersion"]
    assert await provision.ensure_certificate(admin, ns) == first
    assert (await admin.get(SECRETS, CERT_SECRET, namespace=ns))["metadata"]["resourceVersion"] == version


async def test_a_replica_that_lost_the_race_uses_the_winners_secret(admin: ApiClient) -> None:
    ns = await namespace(admin, "raced")
    winner = await provision.ensure_certificate(admin, ns)
    loser = await provision.ensure_certificate(Interposed(admin, misses=1), ns)  # type: ignore[arg-type]
    assert loser == winner == await stored(admin, ns)


async def test_a_certificate_for_other_names_is_renewed_by_the_same_ca(admin: ApiClient) -> None:
    ns = await namespace(admin, "renewed")
    wrong = certificates.issue(NAMES_OF("elsewhere"), datetime.datetime.now(datetime.UTC))
    await admin.create(SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": CERT_SECRET},
                                 "data": certificates.to_secret_data(wrong)}, namespace=ns)

    async def touch() -> None:  # another writer gets in between the read and the renewal
        secret = await admin.get(SECRETS, CERT_SECRET, namespace=ns)
        secret["metadata"]["labels"] = {"touched": "yes"}
        await admin.update(SECRETS, secret, namespace=ns)

    renewed = await provision.ensure_certificate(Interposed(admin, before_update=touch), ns)  # type: ignore[arg-type]
    assert renewed == await stored(admin, ns)
    assert renewed.ca_cert == wrong.ca_cert and renewed.cert != wrong.cert
    assert certificates.is_valid(renewed, NAMES_OF(ns), datetime.datetime.now(datetime.UTC))
    assert (await admin.get(SECRETS, CERT_SECRET, namespace=ns))["metadata"]["labels"] == {"touched": "yes"}


async def test_ca_bundle_is_written_where_it_differs_only(admin: ApiClient) -> None:
    assert await provision.ensure_ca_bundles(admin, b"CA") == [MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION]
    for configuration in webhook_configurations("bundled"):
        resource = provision.MUTATING if configuration["kind"].startswith("Mutating") else provision.VALIDATING
        await admin.create(resource, configuration)
    for ca in (b"first CA", b"first CA", b"second CA"):
        before = [await admin.get(r, n) for r, n in provision.CONFIGURATIONS]
        assert await provision.ensure_ca_bundles(admin, ca) == []
        after = [await admin.get(r, n) for r, n in provision.CONFIGURATIONS]
        bundles = {h["clientConfig"]["caBundle"] for c in after for h in c["webhooks"]}
        assert bundles == {base64.b64encode(ca).decode()}
        unchanged = [b["metadata"]["resourceVersion"] == a["metadata"]["resourceVersion"]
                     for b, a in zip(before, after, strict=True)]
        assert unchanged == ([True, True] if before[0]["webhooks"][0]["clientConfig"].get("caBundle") ==
                             base64.b64encode(ca).decode() else [False, False])
