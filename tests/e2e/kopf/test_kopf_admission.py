"""kopf's admission webhooks against the embedded cluster, unchanged: kopf serves them on
loopback with its own certificate, registers the Mutating- and ValidatingWebhookConfiguration
itself (``settings.admission.managed``), and the server calls them on every matching write."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
from pathlib import Path

import kubernetes.config.kube_config
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kopf.testing import KopfRunner

from kubeloop.client import CONFIG_MAPS, ApiException
from kubeloop.testing.cluster import EmbeddedCluster

pytestmark = pytest.mark.e2e

OPERATOR = """
import kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.admission.server = kopf.WebhookServer(host="127.0.0.1", port={port}, certfile={cert!r},
                                                   pkeyfile={key!r})
    settings.admission.managed = "kubeloop-test.kopf.dev"

@kopf.on.validate("configmaps", labels={{"kopf-test": "yes"}})
def refuse_forbidden(body, **_):
    if "forbidden" in (body.get("data") or {{}}):
        raise kopf.AdmissionError("the key 'forbidden' is not allowed", code=422)

@kopf.on.mutate("configmaps", labels={{"kopf-test": "yes"}})
def stamp(patch, **_):
    patch.setdefault("metadata", {{}}).setdefault("annotations", {{}})["checked-by"] = "kopf"
"""


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA (what kopf hands the server as caBundle)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kopf-webhook")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
                   .sign(key, hashes.SHA256()))
    cert, pkey = directory / "webhook.crt", directory / "webhook.key"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    pkey.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return cert, pkey


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_kopf_validating_and_mutating_webhooks(kubeloop_cluster: EmbeddedCluster, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION",
                        str(kubeloop_cluster.kubeconfig_path))
    cert, key = self_signed(tmp_path)
    operator = tmp_path / "operator.py"
    operator.write_text(OPERATOR.format(port=free_port(), cert=str(cert), key=str(key)))
    client = kubeloop_cluster.client
    runner = KopfRunner(["run", "--all-namespaces", "--standalone", str(operator)])
    await asyncio.to_thread(runner.__enter__)
    try:
        async def registered() -> bool:
            # kopf writes the validating configuration, then the mutating one: wait for both.
            for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
                found = await client.list(f"{kind}.admissionregistration.k8s.io")
                if not any(item["metadata"]["name"] == "kubeloop-test.kopf.dev" for item in found["items"]):
                    return False
            return True

        await kubeloop_cluster.wait_until(registered, timeout=60)
        labels = {"kopf-test": "yes"}
        stored = await client.create(CONFIG_MAPS, {"metadata": {"name": "ok", "labels": labels},
                                                   "data": {"a": "1"}}, namespace="default")
        assert stored["metadata"]["annotations"]["checked-by"] == "kopf"
        with pytest.raises(ApiException) as refused:
            await client.create(CONFIG_MAPS, {"metadata": {"name": "no", "labels": labels},
                                              "data": {"forbidden": "x"}}, namespace="default")
        assert refused.value.code == 422
        assert refused.value.message == ('admission webhook "refuse-forbidden.kubeloop-test.kopf.dev" denied the '
                                         "request: the key 'forbidden' is not allowed")
        unlabelled = await client.create(CONFIG_MAPS, {"metadata": {"name": "other"}, "data": {"forbidden": "x"}},
                                         namespace="default")
        assert "annotations" not in unlabelled["metadata"]
    finally:
        await asyncio.to_thread(runner.__exit__, None, None, None)
