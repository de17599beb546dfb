"""Per-request cost of the RBAC authorizer (kubeloop.server.auth.rbac.resolver).

Starts an in-memory server (so the bootstrap policy is stored), adds ``--bindings`` RoleBindings
spread over ``--namespaces`` namespaces and as many ClusterRoleBindings for other users, then
times ``RBACAuthorizer.authorize`` for a service account allowed through a RoleBinding:

* ``cached``: the same user and namespace again (every request after the first);
* ``denied, cached``: a request no rule allows (walks every rule the user has);
* ``cold``: right after an RBAC object changed (index rebuilt, the user's rules resolved again).

    PYTHONPATH=. .venv/bin/python bench/rbac_authorize.py --bindings 1000 --namespaces 100
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.auth.attributes import request_attributes
from kubeloop.server.auth.rbac.resolver import CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS, RBACAuthorizer
from kubeloop.server.auth.user import UserInfo

G = "rbac.authorization.k8s.io"


def _timed(calls: int, function: object) -> float:
    assert callable(function)
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e6


async def main(bindings: int, namespaces: int, calls: int) -> None:
    server = KubeServer(ServerConfig(data_dir=Path(tempfile.mkdtemp()), port=0, memory=True))
    await server.start()
    try:
        state = server.state
        assert state is not None
        storage = state.storage
        for i in range(bindings):
            ns = f"ns-{i % namespaces}"
            storage.create(ROLE_BINDINGS, {"metadata": {"name": f"rb-{i}", "namespace": ns},
                                           "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "edit"},
                                           "subjects": [{"kind": "ServiceAccount", "name": f"sa-{i}",
                                                         "namespace": ns}]})
            storage.create(CLUSTER_ROLE_BINDINGS, {"metadata": {"name": f"crb-{i}"},
                                                   "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "view"},
                                                   "subjects": [{"kind": "User", "apiGroup": G, "name": f"u-{i}"}]})
        storage.create(ROLE_BINDINGS, {"metadata": {"name": "mine", "namespace": "ns-7"},
                                       "roleRef": {"apiGroup": G, "kind": "ClusterRole",
                                                   "name": "system:controller:replicaset-controller"},
                                       "subjects": [{"kind": "ServiceAccount", "name": "robot"}]})
        user = UserInfo("system:serviceaccount:ns-7:robot",
                        ("system:serviceaccounts", "system:serviceaccounts:ns-7", "system:authenticated"))
        authorizer = RBACAuthorizer(storage)
        allowed = request_attributes("GET", "/api/v1/namespaces/ns-7/pods", {"watch": "true"})
        denied = request_attributes("DELETE", "/api/v1/namespaces/ns-7/secrets/x", {})
        assert authorizer.authorize(user, allowed).allowed
        assert not authorizer.authorize(user, denied).allowed
        cached = _timed(calls, lambda: authorizer.authorize(user, allowed))
        denied_cached = _timed(calls, lambda: authorizer.authorize(user, denied))
        touch = {"metadata": {"name": "touch", "namespace": "ns-0"},
                 "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "view"}, "subjects": []}

        def cold() -> None:
            current = storage.get(ROLE_BINDINGS, "ns-0", "touch")
            if current is None:
                storage.create(ROLE_BINDINGS, touch)
            else:
                storage.delete(ROLE_BINDINGS, "ns-0", "touch")
            authorizer.authorize(user, allowed)

        cold_us = _timed(max(calls // 100, 5), cold)
        print(f"RBAC objects: {bindings * 2} extra bindings over {namespaces} namespaces + the bootstrap policy")
        print(f"cached allow     {cached:8.1f} us/request")
        print(f"cached deny      {denied_cached:8.1f} us/request")
        print(f"cold (after any RBAC change) {cold_us:8.1f} us/request")
    finally:
        await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bindings", type=int, default=1000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    asyncio.run(main(args.bindings, args.namespaces, args.calls))
