import ssl
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from tls_testkit import CertificateAuthority

from kubeloop.client import (
    PODS,
    ApiClient,
    CertificateError,
    ClientConfig,
    ConfigError,
    ConnectError,
    CountingRequestMetrics,
    Credentials,
    ExecConfig,
    MockResponse,
    MockTransport,
)

PLUGIN = str(Path(__file__).parent / "data" / "fake_exec_plugin.py")


@dataclass
class Pki:
    server_ca: CertificateAuthority
    client_ca: CertificateAuthority
    url: str
    url_by_name: str


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


async def who_am_i(request: web.Request) -> web.Response:
    peer = request.transport.get_extra_info("peercert") if request.transport else None
    subject = dict(x[0] for x in peer["subject"]) if peer else {}
    return web.json_response({"kind": "Pod", "metadata": {"name": subject.get("commonName", "anonymous")},
                              "auth": request.headers.get("Authorization", "")})


@pytest.fixture
async def pki(tmp_path: Path) -> AsyncIterator[Pki]:
    server_ca = CertificateAuthority("server-ca")
    client_ca = CertificateAuthority("client-ca")
    issued = server_ca.issue("kube-apiserver", dns=("kubernetes",), ips=("127.0.0.1",))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(write(tmp_path / "srv.crt", issued.cert_pem), write(tmp_path / "srv.key", issued.key_pem))
    context.load_verify_locations(cadata=client_ca.cert_pem.decode())
    context.verify_mode = ssl.CERT_OPTIONAL
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/pods/{name}", who_am_i)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server(ssl=context)
    url = f"https://127.0.0.1:{server.port}"
    try:
        yield Pki(server_ca, client_ca, url, url)
    finally:
        await server.close()


async def whoami(config: ClientConfig) -> dict[str, object]:
    async with ApiClient(config) as client:
        return await client.get(PODS, "x")


async def test_ca_data_and_token(pki: Pki) -> None:
    answer = await whoami(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem, token="tok"))
    assert answer["metadata"] == {"name": "anonymous"}
    assert answer["auth"] == "Bearer tok"


async def test_ca_file(pki: Pki, tmp_path: Path) -> None:
    ca_file = write(tmp_path / "ca.crt", pki.server_ca.cert_pem)
    assert (await whoami(ClientConfig(pki.url, ca_file=ca_file)))["metadata"] == {"name": "anonymous"}


async def test_untrusted_server_is_refused(pki: Pki) -> None:
    other = CertificateAuthority("someone-else")
    metrics = CountingRequestMetrics()
    async with ApiClient(ClientConfig(pki.url, ca_data=other.cert_pem), metrics=metrics) as client:
        with pytest.raises(CertificateError, match="certificate"):
            await client.get(PODS, "x")
    assert metrics.counts == {("GET", "<error>"): 1}
    assert issubclass(CertificateError, ConnectError)


async def test_insecure_skip_verify(pki: Pki) -> None:
    answer = await whoami(ClientConfig(pki.url, insecure_skip_tls_verify=True))
    assert answer["metadata"] == {"name": "anonymous"}


def test_insecure_with_a_ca_is_a_config_error(pki: Pki) -> None:
    with pytest.raises(ConfigError, match="insecure"):
        ApiClient(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem, insecure_skip_tls_verify=True))


async def test_tls_server_name(pki: Pki) -> None:
    issued_for_name_only = ClientConfig(pki.url.replace("127.0.0.1", "localhost"), ca_data=pki.server_ca.cert_pem,
                                        tls_server_name="kubernetes", connection_retries=0)
    assert (await whoami(issued_for_name_only))["metadata"] == {"name": "anonymous"}


async def test_client_certificate_data_and_files(pki: Pki, tmp_path: Path) -> None:
    alice = pki.client_ca.issue("alice", client=True)
    answer = await whoami(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem, client_cert_data=alice.cert_pem,
                                       client_key_data=alice.key_pem))
    assert answer["metadata"] == {"name": "alice"}
    bob = pki.client_ca.issue("bob", client=True)
    answer = await whoami(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem,
                                       client_cert_file=write(tmp_path / "bob.crt", bob.cert_pem),
                                       client_key_file=write(tmp_path / "bob.key", bob.key_pem)))
    assert answer["metadata"] == {"name": "bob"}


def test_half_a_client_certificate_is_a_config_error(pki: Pki) -> None:
    with pytest.raises(ConfigError, match="both a certificate and a key"):
        ApiClient(ClientConfig(pki.url, client_cert_data=b"x"))
    with pytest.raises(ConfigError, match="invalid client certificate"):
        ApiClient(ClientConfig(pki.url, client_cert_data=b"x", client_key_data=b"y"))
    with pytest.raises(ConfigError, match="cannot read"):
        ApiClient(ClientConfig(pki.url, ca_file="/nonexistent/ca.crt"))
    with pytest.raises(ConfigError, match="invalid certificate authority"):
        ApiClient(ClientConfig(pki.url, ca_data=b"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"))


async def test_exec_plugin_client_certificate(pki: Pki, tmp_path: Path) -> None:
    carol = pki.client_ca.issue("carol", client=True)
    exec_config = ExecConfig(
        command=sys.executable, api_version="client.authentication.k8s.io/v1", interactive_mode="Never",
        args=[PLUGIN, str(tmp_path / "runs")],
        env={"FAKE_EXEC_MODE": "cert", "FAKE_EXEC_CERT": write(tmp_path / "c.crt", carol.cert_pem),
             "FAKE_EXEC_KEY": write(tmp_path / "c.key", carol.key_pem)})
    answer = await whoami(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem, exec=exec_config))
    assert answer["metadata"] == {"name": "carol"}
    assert answer["auth"] == ""


def test_plain_http_needs_no_tls_context() -> None:
    client = ApiClient(ClientConfig("http://127.0.0.1:1"))
    assert client._ssl is None


class RotatingCertificates:
    """Hands out one client certificate, and a new one after each 401."""

    def __init__(self, ca: CertificateAuthority) -> None:
        self.ca = ca
        self.issued = 0
        self.current = self._next()

    def _next(self) -> Credentials:
        self.issued += 1
        cert = self.ca.issue(f"user-{self.issued}", client=True)
        return Credentials(None, cert.cert_pem, cert.key_pem)

    async def credentials(self) -> Credentials:
        return self.current

    async def refresh(self, rejected: Credentials) -> bool:
        self.current = self._next()
        return True


async def test_a_new_exec_certificate_resets_pooled_connections(pki: Pki) -> None:
    answers = [MockResponse.json({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401),
               MockResponse.json({"kind": "Pod"})]
    transport = MockTransport(lambda r: answers.pop(0))
    auth = RotatingCertificates(pki.client_ca)
    client = ApiClient(ClientConfig(pki.url, ca_data=pki.server_ca.cert_pem), transport=transport,
                       authenticator=auth)
    assert await client.get(PODS, "x") == {"kind": "Pod"}
    # The first certificate is installed without a reset; the rotated one closes the pool.
    assert transport.resets == 1
    assert auth.issued == 2
