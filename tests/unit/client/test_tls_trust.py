"""Which roots a client trusts: the kubeconfig's CA alone when it names one (client-go's
``RootCAs``), the system store otherwise. The system store is pointed at a CA of its own
through ``SSL_CERT_FILE`` so that trusting it shows."""

from pathlib import Path

import pytest
from tls_testkit import CertificateAuthority

from kubeloop.client import ClientConfig
from kubeloop.client._tls import build_ssl_context


def trusted(config: ClientConfig) -> list[str]:
    context = build_ssl_context(config)
    assert context is not None
    return sorted(dict(part[0] for part in cert["subject"])["commonName"] for cert in context.get_ca_certs())


@pytest.fixture
def system_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "system.pem"
    path.write_bytes(CertificateAuthority("system-root").cert_pem)
    monkeypatch.setenv("SSL_CERT_FILE", str(path))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def test_a_kubeconfig_ca_is_the_only_root(system_store: None) -> None:
    ca = CertificateAuthority("cluster-ca")
    assert trusted(ClientConfig("https://k8s.example:6443", ca_data=ca.cert_pem)) == ["cluster-ca"]


def test_without_a_ca_the_system_store_is_the_trust(system_store: None) -> None:
    assert trusted(ClientConfig("https://k8s.example:6443")) == ["system-root"]


def test_skipping_verification_trusts_nothing_and_checks_nothing(system_store: None) -> None:
    context = build_ssl_context(ClientConfig("https://k8s.example:6443", insecure_skip_tls_verify=True))
    assert context is not None
    assert (context.verify_mode, context.check_hostname, context.get_ca_certs()) == (0, False, [])
