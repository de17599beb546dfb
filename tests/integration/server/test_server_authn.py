"""Authentication end to end: service-account tokens (TokenRequest, TokenReview, use) and
client certificates, with kubectl, the ``kubernetes`` client and httpx over HTTP/1.1 and HTTP/2.

One server for the module, started as ``kubeloop server --client-cert`` would start it: its
kubeconfig carries the admin client certificate. Its authorizer allows every authenticated user
everything (RBAC is not part of authentication) and anonymous requests nothing, so a credential
that silently fails to authenticate shows as a 403.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml
from kubernetes import client
from server_harness import ServerThread, make_api_client, raw_request

from kubeloop.server.app import ServerConfig
from kubeloop.server.auth.attributes import RequestAttributes
from kubeloop.server.auth.authorizer import Decision
from kubeloop.server.auth.service_accounts import ServiceAccountTokens
from kubeloop.server.auth.serviceaccount_tokens import ISSUER, Ref
from kubeloop.server.auth.user import ANONYMOUS, UserInfo
from kubeloop.server.certs import ensure_credentials, issue_client_certificate, load_service_account_key
from kubeloop.server.codec import protobuf
from kubeloop.server.storage import ResourceType

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.{}"
SA_USER = "system:serviceaccount:default:default"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
TOKEN_PATH = "/api/v1/namespaces/default/serviceaccounts/default/token"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SELF_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
JSON = {"Content-Type": "application/json"}


class AuthenticatedOnly:
    def authorize(self, user: UserInfo, attributes: RequestAttributes) -> Decision:
        return Decision(user.username != ANONYMOUS)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with tempfile.TemporaryDirectory() as data:
        thread = ServerThread(ServerConfig(data_dir=Path(data), port=0, memory=True, client_cert=True))
        assert thread.server.state is not None
        thread.server.state.authorizer = AuthenticatedOnly()
        try:
            yield thread
        finally:
            thread.stop()


def _kubectl(version: str, kubeconfig: Path, *args: str, binary: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary or KUBECTL.format(version), "--kubeconfig", str(kubeconfig),
                           "--cache-dir", str(kubeconfig.parent / "cache"), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _claims(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    claims: dict[str, Any] = orjson.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return claims


def _post(server: ServerThread, path: str, body: dict[str, Any], token: str | None = None
          ) -> tuple[int, dict[str, Any]]:
    headers = dict(JSON)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    status, _, answer = raw_request(server, "POST", path, headers=headers, body=orjson.dumps(body))
    parsed: dict[str, Any] = orjson.loads(answer)
    return status, parsed


def _review(server: ServerThread, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    status, answer = _post(server, REVIEWS, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                             "spec": spec})
    assert status == 201, answer
    result: dict[str, Any] = answer["status"]
    return result


def _token_kubeconfig(server: ServerThread, token: str, directory: Path) -> Path:
    config = yaml.safe_load(server.server.kubeconfig_path.read_text())
    config["users"][0]["user"] = {"token": token}
    path = directory / "sa-kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_client_cert_kubeconfig_carries_a_certificate_not_the_token(server: ServerThread) -> None:
    user = yaml.safe_load(server.server.kubeconfig_path.read_text())["users"][0]["user"]
    assert set(user) == {"client-certificate-data", "client-key-data"}
    assert server.token not in server.server.kubeconfig_path.read_text()


@pytest.mark.parametrize("binary", [KUBECTL.format("1.33"), *filter(None, [os.environ.get("KUBELOOP_KUBECTL")])])
def test_kubectl_authenticates_with_the_client_certificate(server: ServerThread, binary: str) -> None:
    done = _kubectl("", server.server.kubeconfig_path, "get", "namespace", "default", "-o", "name", binary=binary)
    assert (done.returncode, done.stdout.strip()) == (0, "namespace/default"), done.stderr
    review = server.server.kubeconfig_path.parent / "review.yaml"
    review.write_text("apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n")
    done = _kubectl("", server.server.kubeconfig_path, "create", "-f", str(review), "-o", "json", binary=binary)
    assert done.returncode == 0, done.stderr
    info = orjson.loads(done.stdout)["status"]["userInfo"]
    assert info["username"] == "kubernetes-admin"
    assert info["groups"] == ["system:masters", "system:authenticated"]
    assert info["extra"]["authentication.kubernetes.io/credential-id"][0].startswith("X509SHA256=")


def test_kubernetes_client_authenticates_with_the_client_certificate(server: ServerThread) -> None:
    api = make_api_client(server.server.kubeconfig_path)
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review(
            client.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview"))
        assert review.status.user_info.username == "kubernetes-admin"
    finally:
        api.close()


def test_kubeloop_client_authenticates_with_the_client_certificate(server: ServerThread) -> None:
    from kubeloop.client import ApiClient, load_kubeconfig

    async def whoami() -> dict[str, Any]:
        async with ApiClient(load_kubeconfig(server.server.kubeconfig_path)) as api:
            answer: dict[str, Any] = await api.create(
                "selfsubjectreviews.authentication.k8s.io",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
            return answer

    assert asyncio.run(whoami())["status"]["userInfo"]["username"] == "kubernetes-admin"


def _cert_context(server: ServerThread, directory: Path) -> ssl.SSLContext:
    user = yaml.safe_load(server.server.kubeconfig_path.read_text())["users"][0]["user"]
    cert, key = directory / "client.crt", directory / "client.key"
    cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
    key.write_bytes(base64.b64decode(user["client-key-data"]))
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.parametrize("http2", [False, True])
def test_client_certificate_reaches_the_authenticator_over_both_protocols(server: ServerThread, tmp_path: Path,
                                                                        http2: bool) -> None:
    context = _cert_context(server, tmp_path)

    async def whoami() -> tuple[str, dict[str, Any]]:
        async with httpx.AsyncClient(http2=http2, http1=not http2, verify=context, base_url=server.url,
                                     timeout=30) as session:
            response = await session.post(SELF_REVIEWS, headers=JSON, content=orjson.dumps(
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
            return response.http_version, orjson.loads(response.content)

    version, answer = asyncio.run(whoami())
    assert version == ("HTTP/2" if http2 else "HTTP/1.1")
    assert answer["status"]["userInfo"]["username"] == "kubernetes-admin"


def test_a_certificate_of_another_ca_fails_the_handshake(server: ServerThread, tmp_path: Path) -> None:
    # Python's ssl verifies client certificates in the handshake (Go's server answers 401 later):
    # see docs/decisions.md, "Authentication".
    other = ensure_credentials(tmp_path / "other", "127.0.0.1")
    cert, key = issue_client_certificate(other, "mallory", ("system:masters",))
    (tmp_path / "c.crt").write_bytes(cert)
    (tmp_path / "c.key").write_bytes(key)
    context = ssl.create_default_context(cafile=server.ca_file)
    context.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")

    async def get() -> int:
        async with httpx.AsyncClient(verify=context, base_url=server.url, timeout=30) as session:
            return (await session.get("/api/v1/namespaces")).status_code

    with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
        asyncio.run(get())


def test_kubectl_1_33_token_with_audience_and_duration(server: ServerThread) -> None:
    done = _kubectl("1.33", server.server.kubeconfig_path, "create", "token", "default", "--audience", "x",
                    "--duration", "10m")
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    claims = _claims(token)
    assert (claims["aud"], claims["exp"] - claims["iat"], claims["iss"], claims["sub"]) == (["x"], 600, ISSUER,
                                                                                            SA_USER)
    reviewed = _review(server, token, ["x"])
    assert reviewed["authenticated"] is True
    assert reviewed["audiences"] == ["x"]
    assert reviewed["user"]["username"] == SA_USER
    assert reviewed["user"]["groups"] == SA_GROUPS
    assert reviewed["user"]["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"]}
    # The API's audience is not "x": the token does not authenticate requests, nor a default review.
    assert _review(server, token) == {
        "user": {}, "error": f'token audiences ["x"] is invalid for the target audiences ["{ISSUER}"]'}
    status, _, _ = raw_request(server, "GET", "/api/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert status == 401


def test_kubectl_1_28_token_authenticates_kubectl_and_the_kubernetes_client(server: ServerThread,
                                                                           tmp_path: Path) -> None:
    done = _kubectl("1.28", server.server.kubeconfig_path, "create", "token", "default")
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    kubeconfig = _token_kubeconfig(server, token, tmp_path)
    whoami = _kubectl("1.28", kubeconfig, "auth", "whoami", "-o", "json")
    assert whoami.returncode == 0, whoami.stderr
    info = orjson.loads(whoami.stdout)["status"]["userInfo"]
    assert (info["username"], info["groups"]) == (SA_USER, SA_GROUPS)
    api = make_api_client(kubeconfig)
    try:
        names = [ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items]
        assert "default" in names
    finally:
        api.close()
    assert _review(server, token)["audiences"] == [ISSUER]


def test_an_expired_token_is_401(server: ServerThread) -> None:
    state = server.server.state
    credentials = server.server.credentials
    assert state is not None and credentials is not None
    account = server.run(lambda: state.storage.get(ResourceType("", "serviceaccounts"), "default", "default"))
    past = ServiceAccountTokens(load_service_account_key(credentials), state.storage, lambda: time.time() - 7200)
    token, _ = past.issue("default", Ref("default", account["metadata"]["uid"]), [], 600)
    status, _, body = raw_request(server, "GET", "/api/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert status == 401
    assert orjson.loads(body)["reason"] == "Unauthorized"
    assert _review(server, token)["error"] == "service account token has expired"


def test_a_pod_bound_token_dies_with_its_pod(server: ServerThread) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "nowhere"}}
    status, created = _post(server, "/api/v1/namespaces/default/pods", pod)
    assert status == 201, created
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": ["a", "b"], "boundObjectRef": {"kind": "Pod", "apiVersion": "v1",
                                                                    "name": "bound"}}}
    status, answer = _post(server, TOKEN_PATH, request)
    assert status == 201, answer
    assert answer["spec"]["expirationSeconds"] == 3600
    token = answer["status"]["token"]
    private = _claims(token)["kubernetes.io"]
    assert private["pod"] == {"name": "bound", "uid": created["metadata"]["uid"]}
    assert private["node"] == {"name": "nowhere"}  # no such Node: its name only, as upstream
    extra = _review(server, token, ["a"])["user"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["bound"]
    assert extra["authentication.kubernetes.io/node-name"] == ["nowhere"]
    deleted, _, _ = raw_request(server, "DELETE", "/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0")
    assert deleted == 200
    assert _review(server, token, ["b"]) == {"user": {}, "error": "service account token has been invalidated"}


@pytest.mark.parametrize(("name", "spec", "code", "message"), [
    ("default", {"expirationSeconds": 599}, 422, 'TokenRequest.authentication.k8s.io "" is invalid: '
     "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"),
    ("missing", {}, 404, 'serviceaccounts "missing" not found'),
    ("default", {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}, 400,
     "cannot bind token to object of type /v1, Kind=ConfigMap"),
    ("default", {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "absent"}}, 404,
     'secrets "absent" not found'),
])
def test_token_requests_are_refused_with_upstreams_texts(server: ServerThread, name: str, spec: dict[str, Any],
                                                         code: int, message: str) -> None:
    status, answer = _post(server, f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
    assert (status, answer["message"]) == (code, message)


def test_a_secret_bound_token_with_a_stale_uid_is_409(server: ServerThread) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "holder"}}
    assert _post(server, "/api/v1/namespaces/default/secrets", secret)[0] == 201
    status, answer = _post(server, TOKEN_PATH, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "holder", "uid": "stale"}}})
    assert (status, answer["message"]) == (409, 'Operation cannot be fulfilled on Secret "holder": the UID in the '
                                                "bound object reference (stale) does not match the UID in record. "
                                                "The object might have been deleted and then recreated")


def test_a_protobuf_token_request_gets_a_protobuf_token(server: ServerThread) -> None:
    body = protobuf.encode({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                            "spec": {"expirationSeconds": 1200}})
    pb = "application/vnd.kubernetes.protobuf"
    status, headers, answer = raw_request(server, "POST", TOKEN_PATH, headers={"Content-Type": pb, "Accept": pb},
                                          body=body)
    assert (status, headers["Content-Type"]) == (201, pb)
    decoded = protobuf.decode(answer)
    token = decoded["status"]["token"]
    assert _claims(token)["exp"] - _claims(token)["iat"] == 1200
    assert _review(server, token)["authenticated"] is True


@pytest.mark.parametrize(("audiences", "extended"), [([], True), (["x"], False)])
def test_kubelets_pod_tokens_live_a_year_with_warnafter(server: ServerThread, audiences: list[str],
                                                        extended: bool) -> None:
    name = f"projected-{len(audiences)}"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert _post(server, "/api/v1/namespaces/default/pods", pod)[0] == 201
    status, answer = _post(server, TOKEN_PATH, {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": audiences, "expirationSeconds": 3607,
                 "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": name}}})
    assert status == 201, answer
    claims = _claims(answer["status"]["token"])
    lifetime = 365 * 24 * 3600 if extended else 3607
    assert claims["exp"] - claims["iat"] == lifetime
    assert claims["kubernetes.io"].get("warnafter") == (claims["iat"] + 3607 if extended else None)
    stamp = answer["status"]["expirationTimestamp"]
    assert stamp == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["iat"] + 3607))
