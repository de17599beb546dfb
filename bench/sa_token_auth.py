"""Per-request cost of authenticating a service-account token, with and without the server's
token cache (not a test).

Run: ``.venv/bin/python bench/sa_token_auth.py [--requests N]``. Authenticates one pod-bound
token N times through :class:`kubeloop.server.auth.authenticator.Authenticator` over an
in-memory store holding its ServiceAccount and Pod: once with upstream's 10 s success cache,
once with it off (every request then verifies the RS256 signature and reads the store), and
prints microseconds per request for each, and for the admin's static token as the floor.
"""

from __future__ import annotations

import argparse
import time

from kubeloop.server.auth.authenticator import Authenticator
from kubeloop.server.auth.service_accounts import ServiceAccountTokens
from kubeloop.server.auth.serviceaccount_tokens import Ref, new_signing_key
from kubeloop.server.storage import ResourceType, Storage


def _per_request(authenticator: Authenticator, header: str, requests: int) -> float:
    authenticator.authenticate(header)  # warm the cache, if any
    started = time.perf_counter()
    for _ in range(requests):
        authenticator.authenticate(header)
    return (time.perf_counter() - started) / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5000)
    requests = parser.parse_args().requests
    storage = Storage.open(None, memory=True)
    account = storage.create(ResourceType("", "serviceaccounts"),
                             {"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": "default", "namespace": "default", "uid": "sa-uid"}})
    pod = storage.create(ResourceType("", "pods"),
                         {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "web", "namespace": "default", "uid": "pod-uid"}, "spec": {}})
    tokens = ServiceAccountTokens(new_signing_key(), storage, time.time)
    token, _ = tokens.issue("default", Ref("default", account["metadata"]["uid"]), [], 3600,
                            pod=Ref("web", pod["metadata"]["uid"]))
    header = f"Bearer {token}"
    cached = _per_request(Authenticator("admin", tokens.validator), header, requests)
    uncached = _per_request(Authenticator("admin", tokens.validator, cache_ttl=0), header, requests)
    admin = _per_request(Authenticator("admin", tokens.validator), "Bearer admin", requests)
    print(f"service-account token, cached:   {cached:8.1f} us/request")
    print(f"service-account token, uncached: {uncached:8.1f} us/request")
    print(f"admin static token:              {admin:8.1f} us/request")
    storage.close()


if __name__ == "__main__":
    main()
