"""Writes with admission webhooks: the phases of :mod:`kubeloop.server.objects`, awaited.

A handler builds a :class:`~kubeloop.server.webhook_admission.Call` with :func:`call_for`;
it is None unless a webhook configuration is stored, and then :func:`drive` runs the write
synchronously, exactly as before (the common path costs one check). Otherwise :func:`drive`
awaits the mutating webhooks at the write's :class:`~kubeloop.server.objects.Mutating` step
and the validating webhooks at its :class:`~kubeloop.server.objects.Validating` step (for a
DELETE, upstream calls both there, with ``oldObject`` only).

The admission ``options`` are built as upstream's handlers pass them: CreateOptions for a
create (and an apply that creates), UpdateOptions for an update or a patch, DeleteOptions for
a delete, each with ``dryRun`` and ``fieldManager`` as the request gave them.
"""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web

from kubeloop.api.status import ApiError
from kubeloop.server.auth.user import CURRENT_USER
from kubeloop.server.kinds.decode import warning_headers
from kubeloop.server.objects import Mutating, Steps, run
from kubeloop.server.requests import DeleteOptions
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.webhook_admission import Call, WebhookAdmission
from kubeloop.server.webhook_admission.matching import GVK

Obj = dict[str, Any]
T = TypeVar("T")

_META = "meta.k8s.io/v1"


def write_options(request: web.Request, kind: str) -> Obj:
    """``CreateOptions`` or ``UpdateOptions`` of a request, as upstream's handlers decode them."""
    options: Obj = {"kind": kind, "apiVersion": _META}
    dry_run = request.query.getall("dryRun", [])
    if dry_run:
        options["dryRun"] = list(dry_run)
    for key in ("fieldManager", "fieldValidation"):
        value = request.query.get(key)
        if value:
            options[key] = value
    return options


def delete_options_object(options: DeleteOptions) -> Obj:
    """The ``DeleteOptions`` a DELETE's webhooks see."""
    out: Obj = {"kind": "DeleteOptions", "apiVersion": _META}
    if options.grace_period_seconds is not None:
        out["gracePeriodSeconds"] = options.grace_period_seconds
    preconditions: Obj = {}
    if options.precondition_uid is not None:
        preconditions["uid"] = options.precondition_uid
    if options.precondition_resource_version is not None:
        preconditions["resourceVersion"] = options.precondition_resource_version
    if preconditions:
        out["preconditions"] = preconditions
    if options.propagation_policy is not None:
        out["propagationPolicy"] = options.propagation_policy
    if options.dry_run:
        out["dryRun"] = ["All"]
    return out


def webhooks_of(state: ServerState) -> WebhookAdmission | None:
    webhooks = state.webhooks
    return webhooks if isinstance(webhooks, WebhookAdmission) and webhooks.active() else None


def call_for(state: ServerState, target: Target, operation: str, *, name: str, namespace: str, dry_run: bool,
             options: Obj | None, kind: GVK | None = None, as_served: bool = False) -> Call | None:
    """The admission view of a write, or None when no webhook configuration exists."""
    if webhooks_of(state) is None:
        return None
    user = CURRENT_USER.get()
    info = target.info
    if info.group == "" and info.resource == "namespaces" and target.name:
        # Upstream's RequestInfo: /api/v1/namespaces/NAME[/...] is in namespace NAME.
        namespace = target.name
    return Call(operation, info, target.subresource or "", name, namespace, dry_run, options,
                user.as_review() if user is not None else {}, kind=kind, as_served=as_served)


async def admit_served(state: ServerState, target: Target, operation: str, obj: Obj, old: Obj | None, kind: GVK, *,
                       dry_run: bool, options: Obj | None) -> list[str]:
    """The webhooks of a write whose object is not the stored kind (``/scale``'s Scale, a
    Binding, an Eviction): ``obj`` as sent, changed in place by mutating webhooks; their warnings."""
    call = call_for(state, target, operation, name=str(target.name or ""), namespace=target.namespace or "",
                    dry_run=dry_run, options=options, kind=kind, as_served=True)
    webhooks = webhooks_of(state)
    if call is None or webhooks is None:
        return []
    await webhooks.mutate(call, obj, old, lambda _: None)
    await webhooks.validate(call, obj, old)
    return call.warnings


async def drive(state: ServerState, steps: Steps[T], call: Call | None) -> T:
    """Run ``steps``; with ``call``, await the webhooks at each step."""
    webhooks = webhooks_of(state) if call is not None else None
    if call is None or webhooks is None:
        return run(steps)
    try:
        step = next(steps)
        while True:
            if isinstance(step, Mutating):
                meta = step.obj.get("metadata") or {}
                hidden = {key: meta.pop(key) for key in step.hide if key in meta}
                try:
                    await webhooks.mutate(call, step.obj, step.old, step.again)
                finally:
                    restored = step.obj.setdefault("metadata", {})
                    # Upstream's BeforeCreate draws a name for generateName only when mutating
                    # admission left none (OpenKruise's pod webhook draws one itself).
                    if restored.get("name"):
                        hidden.pop("name", None)
                    restored.update(hidden)
            else:
                if step.obj is None:
                    await webhooks.mutate(call, None, step.old, lambda _: None)
                await webhooks.validate(call, step.obj, step.old)
            step = steps.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    except ApiError as error:
        # Warnings of the webhooks called before the failure still reach the client (upstream's
        # recorder writes them whatever the answer); one header, values comma-separated.
        if call.warnings:
            error.headers = {**error.headers, "Warning": ", ".join(warning_headers(call.warnings))}
        raise
    finally:
        steps.close()
