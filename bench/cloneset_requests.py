"""Which requests a CloneSet's scale-up and in-place roll cost, by verb, resource/subresource
and status code, for the controllers and for the kubelet separately.

    PYTHONPATH=$PWD .venv/bin/python bench/cloneset_requests.py [--pods 2000] [--workload cloneset|deployment]

Runs ``bench/rollout.py``'s side-by-side scenario for one workload in one process (server,
kubelet and controllers; ``--workload versus`` without ``--split``) and counts every HTTP
attempt of the controllers' and the kubelet's clients by ``(verb, resource[/subresource],
code)``: what ``rollout.py``'s per-method counts do not say (a GET of a pod or a LIST, a PUT of
``pods`` or of ``pods/status``, a 409). The timed phases are the same as ``rollout.py``'s;
CPU is this process's (all roles), so compare it only between runs of this script.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import rollout  # noqa: E402

from kubeloop.client import ApiException  # noqa: E402
from kubeloop.client._rest import RestCore  # noqa: E402

_PATH = re.compile(r"^/apis?/(?:[^/]+/)?v1[a-z0-9]*/(?:namespaces/[^/]+/)?([a-z]+)(/[^/?]+)?(?:/([a-z]+))?$")

Key = tuple[int, str, str, str]
"""``(id of the client's metrics object, verb, resource[/subresource], code)``."""


def request_kind(method: str, path: str) -> str:
    """``pods``, ``pods/status``, ``pods (list)``... for an API path."""
    match = _PATH.match(path)
    if match is None:
        return path
    resource, name, subresource = match.groups()
    if subresource:
        return f"{resource}/{subresource}"
    return f"{resource} (list)" if method == "GET" and name is None else resource


def count_requests(counts: Counter[Key]) -> None:
    """Count every attempt of every client in ``counts`` (patches the client class)."""
    send = RestCore.send

    async def counted(self: RestCore, method: str, path: str, **kwargs: Any) -> Any:
        code = "200"
        try:
            return await send(self, method, path, **kwargs)
        except ApiException as exc:
            code = str(exc.code)
            raise
        finally:
            counts[(id(self.metrics), method, request_kind(method, path), code)] += 1

    RestCore.send = counted  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--workload", choices=rollout.VERSUS_WORKLOADS, default="cloneset")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    counts: Counter[Key] = Counter()
    count_requests(counts)
    timed = rollout._timed

    async def phase_counted(roles: Any, act: Callable[[], Any], done: Callable[[], Any]) -> rollout.Phase:
        before, cpu = counts.copy(), time.process_time()
        phase = await timed(roles, act, done)
        owners = {id(roles.metrics[0]): "controllers", id(roles.metrics[1]): "kubelet"}
        print(f"phase: {phase['seconds']:.1f} s, {time.process_time() - cpu:.1f} s CPU (one process)")
        for (owner, method, kind, code), value in sorted((counts - before).items()):
            if owner in owners and not kind.startswith(("leases", "events")):
                print(f"  {owners[owner]:12} {method:6} {kind:24} {code:4} {value:7,}")
        return phase

    rollout._timed = phase_counted
    asyncio.run(rollout.versus(args.pods, args.timeout, False, (args.workload,)))


if __name__ == "__main__":
    main()
