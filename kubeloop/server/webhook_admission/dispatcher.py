"""Calling the matching mutating and validating webhooks of one write.

Upstream: kubernetes/apiserver ``pkg/admission/plugin/webhook/mutating/dispatcher.go`` and
``reinvocationcontext.go``, ``validating/dispatcher.go``.

Mutating webhooks are called one after the other in configuration-name then webhook order;
a JSONPatch answer is applied to the object as served at the invocation's version, the result
stored back and re-defaulted (the caller's ``redefault``). When a webhook changed the object,
webhooks called before it with ``reinvocationPolicy: IfNeeded`` are called once more, in a
second round. Validating webhooks are called concurrently; the first failure in webhook order
is the answer. A webhook whose ``sideEffects`` is neither ``None`` nor ``NoneOnDryRun`` fails
a dry-run request (400). A call that fails (down, timed out, garbage) is skipped under
``failurePolicy: Ignore``, else answers 500 ``failed calling webhook``; a denial answers the
webhook's Status.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubeloop.api.status import ApiError, internal_error
from kubeloop.server.conversion import served, stored
from kubeloop.server.kinds.decode import IGNORE, decode_object
from kubeloop.server.patch import PatchError, apply_json_patch
from kubeloop.server.registry import Registry, ResourceInfo
from kubeloop.server.storage import ResourceType, Storage
from kubeloop.server.webhook_admission.client import CallFailure, ClientFailure, WebhookClient
from kubeloop.server.webhook_admission.configurations import MUTATING, VALIDATING, Configurations, Hook
from kubeloop.server.webhook_admission.matching import (
    GVK,
    GVR,
    Attributes,
    Invocation,
    SelectorFailure,
    invocation_for,
    is_exempt,
    needs_namespace_labels,
)
from kubeloop.server.webhook_admission.review import (
    InvalidResponse,
    NoKnownVersion,
    Response,
    UnsupportedPatchType,
    build_review,
    calling_failure,
    denial,
    dry_run_unsupported,
    review_version,
    verify_response,
)

Obj = dict[str, Any]
_NAMESPACES = ResourceType("", "namespaces")
_WEBHOOK = "webhook"
"""The decoding source of a webhook's patched object (its errors are worded as the bare text)."""


@dataclass
class Call:
    """One write as admission sees it, and what its webhooks said."""

    operation: str
    info: ResourceInfo
    """The resource at the request's version."""
    subresource: str
    name: str
    namespace: str
    dry_run: bool
    options: Obj | None
    user: Obj
    kind: GVK | None = None
    """The kind of the objects when it is not ``info``'s (the Scale of ``/scale``)."""
    as_served: bool = False
    """The objects are already in the form sent (a Scale); no version conversion."""
    warnings: list[str] = field(default_factory=list)
    _invoked: list[str] = field(default_factory=list)
    _reinvoke: set[str] = field(default_factory=set)


class WebhookAdmission:
    """The webhooks of one server: configurations, the HTTP client, the dispatch."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self._storage = storage
        self._registry = registry
        self.configurations = Configurations(storage)
        self.client = WebhookClient(self._get)

    def _get(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        return self._storage.get(ResourceType(group, resource), namespace, name)

    def active(self) -> bool:
        """Whether any webhook may be called (cheap: the common path asks it on every write)."""
        return self.configurations.active()

    async def close(self) -> None:
        await self.client.close()

    # ------------------------------------------------------------------ matching

    def _attributes(self, call: Call, obj: Obj | None, old: Obj | None) -> Attributes:
        info = call.info
        kind = call.kind or GVK(info.group, info.version, info.kind)
        return Attributes(call.operation, GVR(info.group, info.version, info.resource), call.subresource, kind,
                          call.namespace, call.name, self._present(call, info, obj), self._present(call, info, old))

    def _present(self, call: Call, info: ResourceInfo, obj: Obj | None) -> Obj | None:
        return obj if obj is None or call.as_served else served(info, obj)

    def _equivalents(self, call: Call) -> list[tuple[GVR, GVK]]:
        info = call.info
        out = []
        for version in self._registry.versions(info.group):
            other = self._registry.lookup(info.group, version, info.resource)
            if other is not None and version != info.version:
                kind = call.kind or GVK(other.group, other.version, other.kind)
                out.append((GVR(other.group, other.version, other.resource), kind))
        return out

    def _matching(self, rt: ResourceType, call: Call, attributes: Attributes) -> list[tuple[Hook, Invocation]]:
        if is_exempt(attributes.kind):
            return []
        hooks = self.configurations.hooks(rt)
        if not hooks:
            return []
        labels: dict[str, str] | None = None
        equivalents: list[tuple[GVR, GVK]] | None = None
        out = []
        for hook in hooks:
            if labels is None and needs_namespace_labels(hook.spec, attributes):
                namespace = self._storage.get(_NAMESPACES, "", attributes.namespace) or {}
                labels = dict((namespace.get("metadata") or {}).get("labels") or {})
            if equivalents is None:
                equivalents = self._equivalents(call)
            try:
                invocation = invocation_for(hook.spec, attributes, labels, equivalents)
            except SelectorFailure as error:
                raise internal_error(str(error)) from None
            if invocation is not None:
                out.append((hook, invocation))
        return out

    # ------------------------------------------------------------------ calling

    async def _call(self, call: Call, hook: Hook, invocation: Invocation, attributes: Attributes,
                    obj: Obj | None, old: Obj | None, mutating: bool) -> Response | None:
        """One webhook call; None when it failed and its failure policy ignores that."""
        spec = hook.spec
        name = str(spec.get("name") or "")
        ignore = spec.get("failurePolicy") == "Ignore"

        def failed(reason: str) -> None:
            if not ignore:
                raise calling_failure(name, reason)

        if call.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise dry_run_unsupported(name)
        try:
            version = review_version(spec)
        except NoKnownVersion as error:
            failed(f"could not create admission objects: {error}")
            return None
        uid = str(uuid.uuid4())
        review = build_review(version, uid, invocation, attributes, call.user, obj, old, call.dry_run, call.options)
        timeout = spec.get("timeoutSeconds")
        try:
            doc = await self.client.post(spec.get("clientConfig") or {}, timeout if isinstance(timeout, int) else 10,
                                         orjson.dumps(review))
        except ClientFailure as error:
            failed(f"could not get REST client: {error}")
            return None
        except CallFailure as error:
            failed(f"failed to call webhook: {error}")
            return None
        try:
            response = verify_response(doc, uid, version, mutating)
        except InvalidResponse as error:
            failed(f"received invalid webhook response: {error}")
            return None
        except UnsupportedPatchType as error:
            failed(str(error))
            return None
        call.warnings.extend(response.warnings)
        if not response.allowed:
            raise denial(name, response.result)
        return response

    def _info_at(self, call: Call, invocation: Invocation) -> ResourceInfo:
        found = self._registry.lookup(invocation.resource.group, invocation.resource.version,
                                      invocation.resource.resource)
        return found if found is not None else call.info

    def _objects_at(self, call: Call, invocation: Invocation, obj: Obj | None, old: Obj | None
                    ) -> tuple[Obj | None, Obj | None]:
        if call.as_served:
            return obj, old
        info = self._info_at(call, invocation)
        return (None if obj is None else served(info, obj)), (None if old is None else served(info, old))

    async def mutate(self, call: Call, obj: Obj | None, old: Obj | None,
                     redefault: Callable[[Obj], None]) -> bool:
        """Call the mutating webhooks; ``obj`` (stored form) is changed in place. True if it changed."""
        attributes = self._attributes(call, obj, old)
        matching = self._matching(MUTATING, call, attributes)
        if not matching:
            return False
        changed_any = False
        for round_ in (0, 1):
            if round_ == 1 and not call._reinvoke:
                break
            for hook, invocation in matching:
                if round_ == 1 and hook.uid not in call._reinvoke:
                    continue
                changed = await self._mutate_one(call, hook, invocation, obj, old, redefault)
                if changed:
                    changed_any = True
                    call._reinvoke.update(call._invoked)
                    call._invoked.clear()
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    call._invoked.append(hook.uid)
            if round_ == 0:
                # Only webhooks marked during the first round are reinvoked, once.
                call._invoked.clear()
            else:
                break
        return changed_any

    async def _mutate_one(self, call: Call, hook: Hook, invocation: Invocation, obj: Obj | None, old: Obj | None,
                          redefault: Callable[[Obj], None]) -> bool:
        attributes = self._attributes(call, obj, old)
        sent, sent_old = self._objects_at(call, invocation, obj, old)
        response = await self._call(call, hook, invocation, attributes, sent, sent_old, mutating=True)
        if response is None or not response.patch:
            return False
        name = str(hook.spec.get("name") or "")
        if obj is None or sent is None:
            raise internal_error(f"admission webhook \"{name}\" attempted to modify the object, which is not "
                                 f"supported for this operation")
        try:
            patched = apply_json_patch(sent, response.patch)
        except PatchError as error:
            raise internal_error(error.message) from None
        if not isinstance(patched, dict) or patched == sent:
            return False
        info = self._info_at(call, invocation)
        if info.custom is None:
            # Upstream decodes the patched JSON into the kind's Go type: unknown fields are
            # dropped, a wrong type is an internal error (custom resources are pruned when
            # defaulted again).
            kind = invocation.kind
            try:
                decode_object(kind.group, kind.version, kind.kind, patched, IGNORE, source=_WEBHOOK)
            except ApiError as error:
                raise internal_error(error.message) from None
        result = patched if call.as_served else stored(info, patched)
        obj.clear()
        obj.update(result)
        redefault(obj)
        return True

    async def validate(self, call: Call, obj: Obj | None, old: Obj | None) -> None:
        """Call the validating webhooks concurrently; raise the first failure in webhook order."""
        attributes = self._attributes(call, obj, old)
        if not attributes.name and obj is not None:
            # Upstream's AdmissionToValidateObjectFunc: a name drawn for generateName by now.
            attributes = dataclasses.replace(attributes, name=str((obj.get("metadata") or {}).get("name") or ""))
        matching = self._matching(VALIDATING, call, attributes)
        if not matching:
            return

        async def one(hook: Hook, invocation: Invocation) -> ApiError | None:
            sent, sent_old = self._objects_at(call, invocation, obj, old)
            try:
                await self._call(call, hook, invocation, attributes, sent, sent_old, mutating=False)
            except ApiError as error:
                return error
            return None

        errors: Sequence[ApiError | None] = await asyncio.gather(*(one(h, i) for h, i in matching))
        for error in errors:
            if error is not None:
                raise error
