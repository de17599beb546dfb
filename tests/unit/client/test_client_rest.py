import asyncio
from pathlib import Path

import pytest
from client_testkit import FakeClock, mock_client
from prometheus_client import CollectorRegistry

from kubeloop.client import (
    PODS,
    ApiClient,
    ApiException,
    ClientConfig,
    ConnectError,
    CountingRequestMetrics,
    InternalError,
    MockResponse,
    MockTransport,
    PrometheusRequestMetrics,
    Request,
    StaticAuth,
    TooManyRequests,
    TransportError,
    TransportTimeout,
    Unauthorized,
)
from kubeloop.testing.clock import FakeClock as RuntimeFakeClock

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "default"}}


def ok(request: Request) -> MockResponse:
    return MockResponse.json(POD)


async def test_default_headers_and_bearer_token() -> None:
    client, transport = mock_client(ok, token="abc", user_agent="ua/1")
    assert await client.get(PODS, "p") == POD
    headers = transport.requests[0].headers
    assert headers["Authorization"] == "Bearer abc"
    assert headers["Accept"] == "application/json"
    assert headers["User-Agent"] == "ua/1"
    assert "Content-Type" not in headers


async def test_basic_auth_and_no_auth() -> None:
    client, transport = mock_client(ok, username="admin", password="pw")
    await client.get(PODS, "p")
    assert transport.requests[0].headers["Authorization"] == "Basic YWRtaW46cHc="
    client, transport = mock_client(ok)
    await client.get(PODS, "p")
    assert "Authorization" not in transport.requests[0].headers


async def test_token_file_wins_and_is_reread_after_the_period(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    clock = FakeClock()
    client, transport = mock_client(ok, clock, token="static", token_file=str(token_file), token_file_period=60)
    await client.get(PODS, "p")
    token_file.write_text("second")
    clock.advance(59)
    await client.get(PODS, "p")
    clock.advance(1)
    await client.get(PODS, "p")
    assert [r.headers["Authorization"] for r in transport.requests] == \
        ["Bearer first", "Bearer first", "Bearer second"]


async def test_token_file_read_failure_keeps_last_token(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first")
    clock = FakeClock()
    client, transport = mock_client(ok, clock, token_file=str(token_file))
    await client.get(PODS, "p")
    token_file.unlink()
    clock.advance(120)
    await client.get(PODS, "p")
    assert transport.requests[-1].headers["Authorization"] == "Bearer first"


async def test_401_rereads_a_rotated_token_file_and_retries_once(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("old")
    accepted = ["Bearer old"]

    def handler(request: Request) -> MockResponse:
        if request.headers["Authorization"] not in accepted:
            return MockResponse.json({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401)
        return MockResponse.json(POD)

    client, transport = mock_client(handler, token_file=str(token_file))
    await client.get(PODS, "p")
    assert len(transport.requests) == 1
    accepted[:] = ["Bearer new"]
    token_file.write_text("new")
    # Still within the re-read period: the 401 forces the re-read.
    assert await client.get(PODS, "p") == POD
    assert [r.headers["Authorization"] for r in transport.requests] == ["Bearer old", "Bearer old", "Bearer new"]
    # A second 401 with nothing new to try is raised.
    accepted.clear()
    with pytest.raises(Unauthorized):
        await client.get(PODS, "p")
    assert len(transport.requests) == 4


async def test_401_with_static_token_is_raised() -> None:
    def handler(request: Request) -> MockResponse:
        return MockResponse.json({"kind": "Status", "code": 401, "reason": "Unauthorized",
                                  "message": "Unauthorized"}, 401)

    client, transport = mock_client(handler, token="t")
    with pytest.raises(Unauthorized):
        await client.get(PODS, "p")
    assert len(transport.requests) == 1


async def test_429_retry_after_is_honoured_for_writes_too() -> None:
    answers = [MockResponse(429, b"", {"Retry-After": "3"}), MockResponse(503, b"", {"Retry-After": "1"}),
               MockResponse.json(POD, 201)]
    clock = FakeClock()
    client, transport = mock_client(lambda r: answers.pop(0), clock)
    assert await client.create(PODS, POD) == POD
    assert clock.sleeps == [3, 1]
    assert [r.method for r in transport.requests] == ["POST"] * 3


async def test_retry_after_retries_are_bounded() -> None:
    clock = FakeClock()
    client, transport = mock_client(
        lambda r: MockResponse.json({"kind": "Status", "code": 429, "reason": "TooManyRequests"}, 429,
                                    {"Retry-After": "1"}),
        clock, max_retries=2)
    with pytest.raises(TooManyRequests) as info:
        await client.get(PODS, "p")
    assert info.value.retry_after_seconds == 1
    assert len(transport.requests) == 3
    assert clock.sleeps == [1, 1]


@pytest.mark.parametrize("headers", [{}, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}])
async def test_5xx_without_integer_retry_after_is_not_retried(headers: dict[str, str]) -> None:
    client, transport = mock_client(lambda r: MockResponse(500, b"", headers))
    with pytest.raises(InternalError):
        await client.get(PODS, "p")
    assert len(transport.requests) == 1


async def test_connect_errors_are_retried_for_any_verb_with_backoff() -> None:
    failures = [ConnectError("refused")] * 3

    def handler(request: Request) -> MockResponse:
        if failures:
            raise failures.pop()
        return MockResponse.json(POD, 201)

    clock = FakeClock()
    client, transport = mock_client(handler, clock, retry_backoff=0.5, retry_backoff_max=1.5)
    assert await client.create(PODS, POD) == POD
    assert clock.sleeps == [0.5, 1.0, 1.5]
    assert len(transport.requests) == 4


async def test_connect_error_retries_are_bounded() -> None:
    def handler(request: Request) -> MockResponse:
        raise ConnectError("refused")

    client, transport = mock_client(handler, connection_retries=2)
    with pytest.raises(ConnectError):
        await client.get(PODS, "p")
    assert len(transport.requests) == 3


async def test_broken_connections_are_retried_only_for_reads() -> None:
    failures: list[Exception] = [TransportError("reset")]

    def handler(request: Request) -> MockResponse:
        if failures:
            raise failures.pop()
        return MockResponse.json(POD)

    client, transport = mock_client(handler)
    assert await client.get(PODS, "p") == POD
    assert len(transport.requests) == 2

    failures.append(TransportError("reset"))
    with pytest.raises(TransportError):
        await client.create(PODS, POD)


async def test_timeouts_are_not_retried() -> None:
    def handler(request: Request) -> MockResponse:
        raise TransportTimeout("slow")

    client, transport = mock_client(handler)
    with pytest.raises(TransportTimeout):
        await client.get(PODS, "p")
    assert len(transport.requests) == 1


async def test_qps_limiter_spaces_requests_after_the_burst() -> None:
    clock = FakeClock()
    client, _ = mock_client(ok, clock, qps=10, burst=2)
    for _ in range(5):
        await client.get(PODS, "p")
    assert clock.sleeps == pytest.approx([0.1, 0.1, 0.1])
    clock.advance(10)
    clock.sleeps.clear()
    for _ in range(2):
        await client.get(PODS, "p")
    assert clock.sleeps == []


async def test_metrics_count_every_attempt() -> None:
    answers = [MockResponse(429, b"", {"Retry-After": "0"}), MockResponse.json(POD)]
    errors: list[Exception] = [ConnectError("refused")]

    def handler(request: Request) -> MockResponse:
        if errors:
            raise errors.pop()
        return answers.pop(0)

    metrics = CountingRequestMetrics()
    transport = MockTransport(handler)
    client = ApiClient(ClientConfig("https://k8s:6443", qps=0), transport=transport, metrics=metrics,
                       clock=FakeClock())
    await client.get(PODS, "p")
    assert metrics.counts == {("GET", "<error>"): 1, ("GET", "429"): 1, ("GET", "200"): 1}


async def test_prometheus_metrics_use_client_go_names() -> None:
    registry = CollectorRegistry()
    transport = MockTransport(ok)
    client = ApiClient(ClientConfig("https://k8s:6443", qps=0), transport=transport,
                       metrics=PrometheusRequestMetrics(registry), clock=FakeClock())
    await client.get(PODS, "p")
    await client.get(PODS, "p")
    value = registry.get_sample_value("rest_client_requests_total",
                                      {"code": "200", "method": "GET", "host": "k8s:6443"})
    assert value == 2.0
    assert registry.get_sample_value("rest_client_request_duration_seconds_count",
                                     {"verb": "GET", "host": "k8s:6443"}) == 2.0


async def test_custom_authenticator_and_close() -> None:
    transport = MockTransport(ok)
    async with ApiClient(ClientConfig("https://k8s:6443"), transport=transport,
                         authenticator=StaticAuth.bearer("x"), clock=FakeClock()) as client:
        await client.get(PODS, "p")
    assert transport.requests[0].headers["Authorization"] == "Bearer x"
    assert transport.closed


async def test_invalid_json_answer() -> None:
    client, _ = mock_client(lambda r: MockResponse(200, b"{nope"))
    with pytest.raises(ApiException, match="invalid JSON"):
        await client.get(PODS, "p")
    client, _ = mock_client(lambda r: MockResponse(200, b"[1, 2]"))
    with pytest.raises(ApiException, match="not an object"):
        await client.get(PODS, "p")


async def test_the_runtime_fake_clock_drives_the_rate_limiter() -> None:
    clock = RuntimeFakeClock()
    client, transport = mock_client(ok, clock, qps=1, burst=1)
    await client.get(PODS, "p")
    second = asyncio.create_task(client.get(PODS, "p"))
    await clock.wait_for_waiters()
    assert len(transport.requests) == 1
    clock.step(1)
    assert await second == POD
    assert len(transport.requests) == 2
