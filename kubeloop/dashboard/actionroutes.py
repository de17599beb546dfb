"""The routes behind the page's pause, resume and undo buttons.

``POST /api/workloads/{kind}/{namespace}/{name}/{action}`` with ``kind`` ``Deployment`` or
``CloneSet`` and ``action`` ``pause``, ``resume`` or ``undo``. Answers ``{"message": ...}``:

- 401 (with ``WWW-Authenticate: Bearer``) without a bearer token or with a wrong one, as the
  API server answers a bad token; 403 when the dashboard has no token to compare with (its
  client authenticates otherwise): the actions are then disabled;
- 404 for an unknown kind or action, or a workload that does not exist;
- 409 when kubectl would refuse (``no rollout history found ...``, a paused Deployment);
- the API server's own code and message when it refuses the write (RBAC, conflicts, ...);
- 200 with kubectl's message (``deployment.apps/web rolled back``) otherwise.

Only after the token checks out does anything reach the cluster: the workload and its history
(ReplicaSets or ControllerRevisions, those it controls by uid) are read fresh with the client,
the pure :mod:`kubeloop.dashboard.actions` decides, and one patch is sent.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kubeloop.api.meta import uid_of
from kubeloop.client import CONTROLLER_REVISIONS, DEPLOYMENTS, REPLICA_SETS, ApiClient, ApiException, NotFound
from kubeloop.dashboard.actions import CLONESET, DEPLOYMENT, Action, ActionError, TokenVerdict, check_bearer, plan

CLIENT_KEY = web.AppKey("dashboard_action_client", ApiClient)
TOKEN_KEY = web.AppKey("dashboard_action_token", str)

CLONESET_RESOURCE = "clonesets.apps.kruise.io"
RESOURCES: dict[str, Any] = {DEPLOYMENT: DEPLOYMENTS, CLONESET: CLONESET_RESOURCE}
HISTORY: dict[str, Any] = {DEPLOYMENT: REPLICA_SETS, CLONESET: CONTROLLER_REVISIONS}

REFUSALS = {
    TokenVerdict.MISSING: (401, "this action needs the cluster's bearer token: paste it into the token box"),
    TokenVerdict.WRONG: (401, "the token does not match the cluster's bearer token"),
    TokenVerdict.DISABLED: (403, "actions are disabled: the dashboard's client has no bearer token to check against"),
}


def _answer(status: int, message: str) -> web.Response:
    headers = {"WWW-Authenticate": 'Bearer realm="kubeloop dashboard"'} if status == 401 else None
    return web.json_response({"message": message}, status=status, headers=headers)


async def _act(request: web.Request) -> web.Response:
    verdict = check_bearer(request.app.get(TOKEN_KEY), request.headers.get("Authorization"))
    if verdict is not TokenVerdict.OK:
        return _answer(*REFUSALS[verdict])
    kind, namespace, name = (request.match_info[k] for k in ("kind", "namespace", "name"))
    if kind not in RESOURCES or request.match_info["action"] not in {a.value for a in Action}:
        return _answer(404, f"no action {request.match_info['action']!r} for {kind!r}")
    action = Action(request.match_info["action"])
    client = request.app[CLIENT_KEY]
    try:
        workload = await client.get(RESOURCES[kind], name, namespace=namespace)
        history: list[Any] = []
        if action is Action.UNDO:
            listed = await client.list(HISTORY[kind], namespace=namespace)
            owner = uid_of(workload)
            history = [item for item in listed.get("items") or []
                       if any(ref.get("controller") and ref.get("uid") == owner
                              for ref in (item.get("metadata") or {}).get("ownerReferences") or [])]
        decided = plan(kind, action, workload, history)
        if decided.patch is not None:
            await client.patch(RESOURCES[kind], name, decided.patch, patch_type=decided.patch_type,
                               namespace=namespace)
    except ActionError as exc:
        return _answer(409, str(exc))
    except NotFound as exc:
        return _answer(404, exc.message or str(exc))
    except ApiException as exc:
        return _answer(exc.code or 500, exc.message or str(exc))
    return _answer(200, decided.message)


def add_action_routes(app: web.Application, client: ApiClient, token: str | None) -> None:
    """Serve the actions on ``app``, acting with ``client``, for requests bearing ``token``
    (``None``: every action answers 403)."""
    app[CLIENT_KEY] = client
    if token:
        app[TOKEN_KEY] = token
    app.router.add_post("/api/workloads/{kind}/{namespace}/{name}/{action}", _act)
