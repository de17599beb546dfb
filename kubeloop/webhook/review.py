"""The webhook's pure core: an AdmissionReview v1 request in, the AdmissionReview answer out.

Each route of :mod:`kubeloop.webhook.configuration` answers as OpenKruise's webhook does
(kruise ``pkg/webhook/cloneset/{mutating,validating}/cloneset_create_update_handler.go``,
``pkg/webhook/pod/mutating/pod_create_update_handler.go`` and
``container_launch_priority_initialization.go``; controller-runtime's ``admission.Allowed``,
``Errored`` and ``PatchResponseFromRaw`` for the answer's shape), running the embedded
server's admission code (:mod:`kubeloop.server.admission.cloneset`,
:mod:`kubeloop.server.admission.launchpriority`) so the two cannot disagree:

* CloneSet defaulting (CREATE, UPDATE): :func:`default_cloneset`, with the old object on
  UPDATE (the template is defaulted only when it changed, as kruise's ``injectTemplateDefaults``);
  the answer is allowed, with a base64 ``JSONPatch`` from the object sent to the defaulted one
  when they differ;
* CloneSet validation (CREATE, UPDATE; DELETE is allowed): the field errors of
  :func:`validate_cloneset_create` / :func:`validate_cloneset_update` deny with ``status``
  ``{code: 422, message}``, the message rendered as ``field.ErrorList.ToAggregate`` does
  (one error alone, several as ``[a, b]``); kruise's ``Errored`` sets no ``reason``;
* pod mutation (CREATE of ``pods`` only): the launch-priority barrier env
  (:func:`add_barrier_env`); a pod with only ``generateName`` gets a name drawn here first, as
  kruise's ``setPodEnv`` does, so the barrier ConfigMap's name is the pod's; a priority env that
  is not an integer is ``Errored(500)`` with Go's ``strconv.Atoi`` text.

``podsToDelete`` validation reads pods: the caller asks :func:`pods_to_read` which, reads them
through the API, and passes them in (a pure core, the I/O around it). A request that cannot be
decoded is answered ``Errored(400)``, as controller-runtime's decoder does.
"""

from __future__ import annotations

import base64
import copy
import random
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from kubeloop.api.status import FieldError
from kubeloop.server.admission.cloneset import default_cloneset, validate_cloneset_create, validate_cloneset_update
from kubeloop.server.admission.launchpriority import PriorityParseError, add_barrier_env
from kubeloop.server.admission.metadata import dedupe
from kubeloop.webhook.configuration import CLONESET_DEFAULTING, CLONESET_VALIDATION, POD_MUTATION, Route
from kubeloop.webhook.jsonpatch import create_patch

Obj = dict[str, Any]
PodGetter = Callable[[str, str], Mapping[str, Any] | None]

REVIEW_API_VERSION = "admission.k8s.io/v1"
REVIEW_KIND = "AdmissionReview"

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATE_PREFIX = 58
_names = random.SystemRandom()


class BadReview(ValueError):
    """The body is not an AdmissionReview v1 with a request (answered ``Errored(400)``)."""


def generate_name(prefix: str) -> str:
    """apiserver's ``SimpleNameGenerator``: at most 58 characters of prefix, five random ones."""
    return prefix[:_MAX_GENERATE_PREFIX] + "".join(_names.choices(_NAME_ALPHABET, k=5))


def parse_request(body: bytes) -> Obj:
    """The ``request`` of an AdmissionReview v1 body; :class:`BadReview` when there is none."""
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise BadReview(f"couldn't decode the AdmissionReview: {error}") from None
    if not isinstance(review, dict) or review.get("apiVersion") != REVIEW_API_VERSION or (
        review.get("kind") != REVIEW_KIND
    ):
        raise BadReview(f"expected an AdmissionReview of {REVIEW_API_VERSION}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("got an empty AdmissionRequest")
    return request


def _status(code: int, message: str = "") -> Obj:
    status: Obj = {"metadata": {}}
    if message:
        status["message"] = message
    status["code"] = code
    return status


def allowed() -> Obj:
    """``admission.Allowed("")``."""
    return {"allowed": True, "status": _status(200)}


def errored(code: int, message: str) -> Obj:
    """``admission.Errored(code, err)``: denied, no reason."""
    return {"allowed": False, "status": _status(code, message)}


def patched(before: Obj, after: Obj) -> Obj:
    """``admission.PatchResponseFromRaw``: allowed, with the patch when there is a difference."""
    ops = create_patch(before, after)
    if not ops:
        return allowed()
    return {"allowed": True, "status": _status(200), "patchType": "JSONPatch",
            "patch": base64.b64encode(orjson.dumps(ops)).decode()}


def aggregate_message(errors: list[FieldError]) -> str:
    """``field.ErrorList.ToAggregate().Error()``: repeats dropped, one alone, several in brackets."""
    messages: list[str] = []
    for error in errors:
        text = str(error)
        if text not in messages:
            messages.append(text)
    return messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]"


def _object(request: Mapping[str, Any], field: str) -> Obj:
    value = request.get(field)
    if not isinstance(value, dict):
        raise BadReview("there is no content to decode")
    return value


def _with_namespace(obj: Obj, request: Mapping[str, Any]) -> Obj:
    """The object, namespaced as the request is when it names none (kruise does this for pods;
    kube-apiserver has always set it before admission)."""
    meta = obj.get("metadata")
    namespace = request.get("namespace")
    if isinstance(meta, dict) and not meta.get("namespace") and isinstance(namespace, str) and namespace:
        obj = {**obj, "metadata": {**meta, "namespace": namespace}}
    return obj


def _new_pod_names(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(namespace, name) of the pods a CloneSet validation reads: the new podsToDelete names."""
    obj = request.get("object")
    if not isinstance(obj, dict):
        return []
    obj = _with_namespace(obj, request)
    strategy = ((obj.get("spec") or {}).get("scaleStrategy") or {}) if isinstance(obj.get("spec"), dict) else {}
    listed = strategy.get("podsToDelete") if isinstance(strategy, dict) else None
    names = [str(n) for n in listed if n is not None] if isinstance(listed, list) else []
    if len(set(names)) != len(names):
        return []  # duplicates are refused before any pod is read
    old = request.get("oldObject")
    old_strategy: Any = {}
    if isinstance(old, dict) and isinstance(old.get("spec"), dict):
        old_strategy = old["spec"].get("scaleStrategy") or {}
    old_listed = old_strategy.get("podsToDelete") if isinstance(old_strategy, dict) else None
    old_names = {str(n) for n in old_listed if n is not None} if isinstance(old_listed, list) else set()
    namespace = str((obj.get("metadata") or {}).get("namespace") or "")
    return [(namespace, name) for name in sorted(set(names) - old_names)]


def pods_to_read(route: Route, request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (namespace, name) of the pods :func:`admit` will ask for on ``route``."""
    if route == CLONESET_VALIDATION and request.get("operation") in ("CREATE", "UPDATE"):
        return _new_pod_names(request)
    return []


def _default_cloneset(request: Mapping[str, Any]) -> Obj:
    obj = _object(request, "object")
    old = _object(request, "oldObject") if request.get("operation") == "UPDATE" else None
    defaulted = copy.deepcopy(obj)
    default_cloneset(defaulted, old)
    return patched(obj, defaulted)


def _validate_cloneset(request: Mapping[str, Any], get_pod: PodGetter | None) -> Obj:
    operation = request.get("operation")
    if operation not in ("CREATE", "UPDATE"):
        return allowed()
    obj = _with_namespace(_object(request, "object"), request)
    if operation == "CREATE":
        errors = validate_cloneset_create(obj, get_pod=get_pod)
    else:
        errors = validate_cloneset_update(obj, _object(request, "oldObject"), get_pod=get_pod)
    errors = dedupe(errors)
    if errors:
        return errored(422, aggregate_message(errors))
    return allowed()


def _mutate_pod(request: Mapping[str, Any]) -> Obj:
    resource = request.get("resource")
    if request.get("subResource") or request.get("operation") != "CREATE" or (
        not isinstance(resource, Mapping) or resource.get("resource") != "pods"
    ):
        return allowed()
    obj = _with_namespace(_object(request, "object"), request)
    pod = copy.deepcopy(obj)
    meta = pod.get("metadata")
    drawn = isinstance(meta, dict) and not meta.get("name") and bool(meta.get("generateName"))
    if drawn and isinstance(meta, dict):
        meta["name"] = generate_name(str(meta["generateName"]))
    try:
        changed = add_barrier_env(pod)
    except PriorityParseError as error:
        return errored(500, str(error))
    if not changed:
        return allowed()
    return patched(obj, pod)


def admit(route: Route, request: Mapping[str, Any], get_pod: PodGetter | None = None) -> Obj:
    """The AdmissionResponse (without ``uid``) of ``route`` to ``request``.

    ``get_pod(namespace, name)`` answers for the pods :func:`pods_to_read` named (``None``: not
    found); without it, podsToDelete names are not checked against pods.
    """
    try:
        if route == CLONESET_DEFAULTING:
            return _default_cloneset(request)
        if route == CLONESET_VALIDATION:
            return _validate_cloneset(request, get_pod)
        if route == POD_MUTATION:
            return _mutate_pod(request)
    except BadReview as error:
        return errored(400, str(error))
    raise ValueError(f"no webhook serves {route.path}")


def review(response: Obj, uid: str) -> Obj:
    """The AdmissionReview v1 carrying ``response`` for the request ``uid``."""
    return {"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "response": {"uid": uid, **response}}


def answer(route: Route, body: bytes, get_pod: PodGetter | None = None) -> Obj:
    """The whole exchange: the AdmissionReview answering ``body`` on ``route``."""
    try:
        request = parse_request(body)
    except BadReview as error:
        return review(errored(400, str(error)), "")
    return review(admit(route, request, get_pod), str(request.get("uid") or ""))
