"""Pod subresources that need a container runtime, ``pods/{name}/log`` and ``pods/{name}/eviction``.

The simulated kubelet runs no processes, so ``exec``, ``attach``, ``portforward`` and ``proxy``
cannot stream anything: they answer a Status that says so, naming the pod, instead of a
misleading 404. ``log`` answers each container's simulated story (:mod:`kubeloop.server.podlogs`);
with ``follow=true`` the answer stays open, re-reading the pod every
:data:`FOLLOW_POLL_SECONDS`, until the container instance ends or the pod is gone.

An eviction deletes the pod with the Eviction's ``deleteOptions`` and answers upstream's
``201`` Success Status (``pkg/registry/core/pod/storage/eviction.go``); PodDisruptionBudgets
are not consulted (no disruption controller keeps their status here).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from kubeloop.api.status import ApiError, bad_request_error
from kubeloop.server import podlogs
from kubeloop.server.handlers.admitted import admit_served, write_options
from kubeloop.server.handlers.common import read_body
from kubeloop.server.handlers.read import get_object, output_for
from kubeloop.server.objects import delete_object
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import decode_document, delete_options, require_object
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.webhook_admission.matching import GVK

NO_CONTAINERS = frozenset({"attach", "exec", "portforward", "proxy"})
FOLLOW_POLL_SECONDS = 0.5


def no_containers_error(info: ResourceInfo, target: Target, subresource: str) -> ApiError:
    """The answer of a streaming subresource: there is no container to stream from."""
    what = f"{info.resource}/{subresource}"
    name = target.name or ""
    return ApiError(400, "BadRequest",
                    f"{what} is not available for {info.singular} {name!r}: kubeloop's simulated kubelet runs no "
                    "containers", {"name": name, "kind": info.resource})


async def evict(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    output = output_for(state, request, target.info, api_version="policy/v1", kind="Eviction")
    raw = await read_body(request)
    eviction: dict[str, Any] = require_object(decode_document(raw, request.headers.get("Content-Type"),
                                                              into=("policy/v1", "Eviction")))
    meta = eviction.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if name not in (None, "", target.name):
        raise bad_request_error(f"name in URL does not match name in Eviction object: {name}")
    options = delete_options(eviction.get("deleteOptions"), {}, [])
    warnings = await admit_served(state, target, "CREATE", eviction, None, GVK("policy", "v1", "Eviction"),
                                  dry_run=options.dry_run, options=write_options(request, "CreateOptions"))
    pod_target = Target(target.info, target.namespace, target.name, None)
    current = get_object(state, pod_target)
    delete_object(state, target.info, current, options)
    return output.answer({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                         201, warnings)


async def pod_log(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    """``GET pods/NAME/log``: the container's simulated log, as text/plain."""
    name = str(target.name)
    options = podlogs.log_options(name, request.query)
    pod_target = Target(target.info, target.namespace, target.name, None)
    pod = get_object(state, pod_target)
    container = podlogs.container_name(pod, options.container)
    if not (pod.get("spec") or {}).get("nodeName"):
        # Upstream's LogLocation gives no location for an unbound pod: an empty answer.
        return web.Response(body=b"", content_type="text/plain")
    log = podlogs.container_log(pod, container, options.previous)
    body = podlogs.render(log.lines, options, state.clock())
    if not options.follow or options.previous or log.ended:
        return web.Response(body=body, content_type="text/plain")
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    await response.write(body)
    written = len(log.lines)
    while True:
        await asyncio.sleep(FOLLOW_POLL_SECONDS)
        current = state.storage.get(target.info.resource_type, target.namespace or "", name)
        if current is None or current["metadata"].get("uid") != pod["metadata"].get("uid"):
            break
        try:
            log = podlogs.container_log(current, container, False)
        except Exception:
            break
        if len(log.lines) < written:
            # A new instance started: the followed one has ended.
            break
        fresh = podlogs.render(log.lines[written:], podlogs.LogOptions(timestamps=options.timestamps), state.clock())
        written = len(log.lines)
        if fresh:
            await response.write(fresh)
        if log.ended:
            break
    await response.write_eof()
    return response
