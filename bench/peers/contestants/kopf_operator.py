"""Contestant: kopf (from PyPI, in its own virtual environment without the kubernetes clients).

Variants (``--variant``), the two ways kopf is commonly used:

- ``event`` (K-event): ``@kopf.on.event`` runs for every event; it sets the annotation
  through kopf's ``patch`` (kopf sends one merge PATCH after the handler) when it differs.
- ``create`` (K-create): ``@kopf.on.create`` / ``on.resume`` / ``on.update``, kopf's
  high-level path with its diffbase annotation and consistency waits.

Mode ``finalize`` registers ``@kopf.on.delete`` (kopf then adds its own finalizer to every
object and removes it after the handler). ``--workers`` sets ``queueing.worker_limit``
(0 keeps kopf's default: unlimited, one worker task per object); ``--sleep`` makes the
handler sleep first (B9).

Settings recorded with every run (``c.extra['settings']``): posting off (no Event POSTs),
scanning off (no CRD/namespace watches), standalone (no peering), server_timeout 300 s, and
the defaults that matter left as they are (idle_timeout 5 s, consistency_timeout 5 s).
kopf runs in this process through ``kopf.run(standalone=True, clusterwide=True)``, which is
what ``kopf run --standalone -A`` does; SIGTERM makes it stop gracefully, after which the
stats are written. ``--loop uvloop`` hands kopf a uvloop event loop, as ``kopf run`` does
when uvloop is installed (variant ``kopf-event-uvloop``, in a venv with kopf and uvloop).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kopf
from common import ANNOTATION, Contestant, desired_value, event_loop, kubeconfig_parts, seen_value

c = Contestant.from_argv()
SERVER, TOKEN, CA_FILE = kubeconfig_parts(c.args.kubeconfig)
GROUP_VERSION, PLURAL = "v1", c.args.resource


@kopf.on.startup()
async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False
    settings.scanning.disabled = True
    settings.peering.standalone = True
    settings.watching.server_timeout = 300
    settings.queueing.worker_limit = c.args.workers or None
    c.extra["settings"] = {
        "kopf": kopf.__version__ if hasattr(kopf, "__version__") else "",
        "variant": c.args.variant, "posting.enabled": False, "scanning.disabled": True,
        "peering.standalone": True, "watching.server_timeout": 300,
        "queueing.worker_limit": settings.queueing.worker_limit,
        "queueing.idle_timeout": settings.queueing.idle_timeout,
        "persistence.consistency_timeout": settings.persistence.consistency_timeout,
    }
    SAMPLER.append(asyncio.get_running_loop().create_task(c.sample_tasks()))
    c.event("started")


SAMPLER: list[asyncio.Task[None]] = []


@kopf.on.cleanup()
async def stop_sampling(**_: Any) -> None:
    # kopf gives every task still alive at shutdown 5 s before it cancels it ("hung" tasks);
    # the sampler would be one, holding each run's exit for those 5 s.
    for task in SAMPLER:
        task.cancel()


@kopf.on.login()
def login(**_: Any) -> kopf.ConnectionInfo:
    return kopf.ConnectionInfo(server=SERVER, token=TOKEN, scheme="Bearer", ca_path=CA_FILE)


async def annotate(body: Any, patch: Any) -> None:
    obj = dict(body)
    value = desired_value(obj)
    c.reconciled(value)
    if c.args.sleep:
        await asyncio.sleep(c.args.sleep)
    if seen_value(obj) != value:
        patch.metadata.annotations[ANNOTATION] = value
        c.patched()


if c.args.mode == "finalize":
    @kopf.on.delete(GROUP_VERSION, PLURAL)
    async def on_delete(body: Any, **_: Any) -> None:
        c.reconciled(desired_value(dict(body)))

elif c.args.variant == "create":
    @kopf.on.resume(GROUP_VERSION, PLURAL)
    @kopf.on.create(GROUP_VERSION, PLURAL)
    @kopf.on.update(GROUP_VERSION, PLURAL)
    async def on_change(body: Any, patch: Any, **_: Any) -> None:
        await annotate(body, patch)

else:
    @kopf.on.event(GROUP_VERSION, PLURAL)
    async def on_event(body: Any, patch: Any, type: str | None, **_: Any) -> None:
        if type == "DELETED":
            return
        await annotate(body, patch)


if __name__ == "__main__":
    kopf.configure(verbose=False, quiet=True)
    # kopf.run() itself stays on asyncio's loop; `kopf run` (the CLI) runs on uvloop when it is
    # importable (kopf._kits.loops.proper_loop). ``--loop uvloop`` gives kopf.run that loop.
    kopf.run(standalone=True, clusterwide=True, loop=event_loop(c.args.loop) if c.args.loop else None)
    c.finish()
