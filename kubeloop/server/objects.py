"""Create, update and delete of one object with upstream's generic-registry semantics.

These functions run synchronously between reading a request body and answering it, so each
read-check-write against the store is atomic. They take private copies they may change and
never mutate what the store returned. HTTP concerns (bodies, query strings, responses) stay
in :mod:`kubeloop.server.handlers`.

Each write is also available in phases, for admission webhooks (upstream's order: defaulting
and built-in mutating admission, then mutating webhooks, then the strategy's validation, then
validating webhooks, then storage): ``create_steps``, ``update_steps`` and ``delete_steps`` are
generators that pause at a :class:`Mutating` step (the object after built-in mutation; the
caller may change it in place and then calls its ``redefault``) and at a :class:`Validating`
step (the validated object, before the store write). :func:`run` drives them without pausing;
``create_object``, ``update_object`` and ``delete_object`` are exactly that. An async caller
that awaits at a step lets other writes in: the store write then fails with the usual 409
conflict (updates and deletes compare the revision read), never overwriting them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from kubeloop.api.meta import format_time
from kubeloop.api.status import (
    ApiError,
    FieldError,
    already_exists_error,
    conflict_error,
    generate_name_conflict_error,
    invalid_error,
    required,
)
from kubeloop.server import crd, podplugins
from kubeloop.server.admit import (
    default_create,
    default_status_update,
    default_update,
    redefault,
    validate_created,
    validate_status_updated,
    validate_updated,
)
from kubeloop.server.apply import Manager, Shape, builtin_shape, record_update, schema_shape
from kubeloop.server.auth.rbac.escalation import check_rbac_write
from kubeloop.server.namespace_lifecycle import (
    check_deletable,
    check_open_for_create,
    is_finalized,
    is_terminating,
    keep_spec_finalizers,
    mark_terminating,
)
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import DeleteOptions
from kubeloop.server.serviceaccount_admission import admit_pod_service_account
from kubeloop.server.services import hooks as service_hooks
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import KeyExists, StorageError
from kubeloop.server.strategy import (
    bump_generation,
    carry_system_metadata,
    finalizer_errors,
    generate_name,
    is_finalized_deletion,
    merge_status_write,
    prepare_for_create,
    reset_status_on_main,
)

Obj = dict[str, Any]
T = TypeVar("T")


@dataclass
class Mutating:
    """A write paused after built-in mutation, before validation (mutating webhooks' turn)."""

    obj: Obj
    """The object to be validated and stored (stored form); change it in place."""
    old: Obj | None
    again: Callable[[Obj], None] = field(repr=False, default=lambda _: None)
    hide: tuple[str, ...] = ()
    """Metadata fields mutating webhooks must not see: on CREATE, what upstream's
    ``BeforeCreate`` sets only after mutating admission (uid, creationTimestamp, generation,
    a name drawn for ``generateName``); they are put back after the webhooks."""

    def redefault(self) -> None:
        """Default :attr:`obj` again after it was changed (upstream defaults a patched object)."""
        self.again(self.obj)


@dataclass
class Validating:
    """A write paused after validation, before the store write (validating webhooks' turn).

    For a DELETE, ``obj`` is None and ``old`` is the object being deleted.
    """

    obj: Obj | None
    old: Obj | None


Step = Mutating | Validating
Steps = Generator[Step, None, T]


def run(steps: Steps[T]) -> T:
    """Drive ``steps`` to the end without pausing (no webhooks); its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result

ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
_DEFAULT_POD_GRACE = 30


def _is_crd(info: ResourceInfo) -> bool:
    return info.group == crd.GROUP and info.resource == "customresourcedefinitions"


def _is_namespace(info: ResourceInfo) -> bool:
    return info.group == "" and info.resource == "namespaces"


def _store_failure(info: ResourceInfo, name: str, error: StorageError) -> ApiError:
    if isinstance(error, KeyExists):
        return already_exists_error(info.resource, info.group, name)
    return conflict_error(info.resource, info.group, name, str(error))


STATUS_LIKE = ("status", "approval")
"""Subresources written as ``/status`` is: the request's ``status`` over the stored object
(``certificatesigningrequests/approval`` included, whose strategy differs only in which
conditions it keeps)."""

_SET_BY_BEFORE_CREATE = ("uid", "creationTimestamp", "generation")

GENERATE_NAME_ATTEMPTS = 8
"""Names drawn for a ``generateName`` before giving up (upstream's retry count)."""


def shape_of(info: ResourceInfo) -> Shape:
    """How server-side apply tracks the fields of ``info``'s objects."""
    if info.custom is not None:
        return schema_shape(info.custom.schema)
    return builtin_shape(info.group, info.kind)


def create_object(state: ServerState, info: ResourceInfo, obj: Obj, dry_run: bool,
                  manager: Manager | None = None) -> Obj:
    """Store ``obj`` (a private, type-checked body) as a new object; returns what was stored.

    With ``manager``, an ``Update`` entry for it joins ``metadata.managedFields``.
    """
    return run(create_steps(state, info, obj, dry_run, manager))


def create_steps(state: ServerState, info: ResourceInfo, obj: Obj, dry_run: bool,
                 manager: Manager | None = None) -> Steps[Obj]:
    """:func:`create_object` in phases (see the module docstring)."""
    meta = obj["metadata"]
    namespace = meta.get("namespace") or ""
    if info.namespaced:
        check_open_for_create(info, obj, namespace,
                              state.storage.get(state.namespace_info().resource_type, "", namespace))
    service_account: Any = podplugins.LOOK_UP
    if info.group == "" and info.resource == "pods":
        # The account found here is the one the token mount below needs (nothing in between
        # changes the pod's account name or the store).
        service_account = admit_pod_service_account(obj, namespace, state.storage.get)
    generated = False
    if not meta.get("name") and meta.get("generateName"):
        # As upstream's RetryGenerateName (on by default since 1.31): a generated name that is
        # taken is drawn again, a few times, before the create fails with a conflict.
        for _ in range(GENERATE_NAME_ATTEMPTS):
            meta["name"] = generate_name(meta["generateName"])
            if state.storage.get(info.resource_type, namespace, meta["name"]) is None:
                break
        generated = True
    name = meta.get("name") or ""
    if not name:
        raise invalid_error(info.kind, info.group, "", [required("metadata.name", "name or generateName is required")])
    prepare_for_create(info, obj, state.now_text())
    service_hooks.before_create(state, info, obj)
    if _is_crd(info):
        errors = crd.validate_definition(obj, state.registry)
        if errors:
            raise invalid_error(info.kind, info.group, name, errors)
        obj["status"] = crd.initial_status(obj, state.now_text())
    # Upstream's field manager sees the decoded, defaulted request: what the strategy and
    # mutating admission add afterwards (a Job's generated selector) belongs to no manager.
    # Recorded as soon as the object is defaulted, so no copy of it needs to outlive the mutations.
    recorded: list[list[Any]] = []

    def record(seen: Obj) -> None:
        recorded.append(record_update(None, seen, shape_of(info), manager, state.now_text(),
                                      base=_requested_entries(seen)) if manager is not None else [])

    errors = default_create(info, obj, podplugins.create_mutation(state, info, service_account),
                            defaulted=None if manager is None else record)

    def again(changed: Obj) -> None:
        errors[:] = redefault(info, changed, None)

    yield Mutating(obj, None, again, _SET_BY_BEFORE_CREATE + (("name",) if generated else ()))
    name = (obj.get("metadata") or {}).get("name") or name  # a mutating webhook may name a generateName object
    # RBAC's escalation check sees what would be stored: after mutating admission, as upstream's
    # policy-based storage wraps the store's Create and Update.
    check_rbac_write(state, info, obj, None)
    validate_created(info, obj, errors)
    if manager is not None:
        entries = recorded[0] if recorded else record_update(None, obj, shape_of(info), manager, state.now_text(),
                                                             base=_requested_entries(obj))
        if entries:
            meta["managedFields"] = entries
    yield Validating(obj, None)
    if dry_run:
        # Upstream's dry run goes through the store's create checks too: a taken name is 409.
        if state.storage.get(info.resource_type, meta.get("namespace") or "", name) is not None:
            if generated:
                raise generate_name_conflict_error(info.resource, info.group, name)
            raise already_exists_error(info.resource, info.group, name)
        return obj
    try:
        stored = state.storage.create(info.resource_type, obj)
    except KeyExists:
        if generated:
            raise generate_name_conflict_error(info.resource, info.group, name) from None
        raise already_exists_error(info.resource, info.group, name) from None
    if _is_crd(info):
        state.crd_changed(None, stored)
    if _is_namespace(info):
        state.namespace_created(name)
    return stored


def _requested_entries(obj: Obj) -> list[Any]:
    entries = obj["metadata"].get("managedFields")
    return list(entries) if isinstance(entries, list) else []


def update_object(state: ServerState, info: ResourceInfo, requested: Obj, old: Obj, *, status: bool,
                  dry_run: bool, manager: Manager | None = None, finalize: bool = False) -> Obj:
    """Replace ``old`` by ``requested`` (main endpoint, or ``/status`` when ``status``).

    ``finalize`` (namespaces' ``/finalize``): like the main endpoint, but ``spec.finalizers``
    may change and ``status`` never does; on the main endpoint they are kept as stored.

    ``requested`` is a private copy whose name and namespace were checked. No-op updates store
    nothing and return ``old``; an update that leaves a deleted object without finalizers
    deletes it and returns its last state. A request without ``managedFields`` keeps the old
    ones; with ``manager``, main-endpoint writes record an ``Update`` entry for it (``/status``
    writes are not tracked: they are the most frequent writes and nobody applies status here).
    """
    return run(update_steps(state, info, requested, old, status=status, dry_run=dry_run, manager=manager,
                            finalize=finalize))


def update_steps(state: ServerState, info: ResourceInfo, requested: Obj, old: Obj, *, status: bool,
                 dry_run: bool, manager: Manager | None = None, finalize: bool = False) -> Steps[Obj]:
    """:func:`update_object` in phases (see the module docstring)."""
    if status:
        # One private copy of the merged object (``requested`` is private already; the parts
        # of ``old`` it takes must not be changed in the store by defaulting).
        new: Obj = copy_object(merge_status_write(info, requested, old))
    else:
        new = requested
        reset_status_on_main(info, new, old)
        if _is_namespace(info) and not finalize:
            keep_spec_finalizers(new, old)
    carry_system_metadata(new, old)
    errors: list[FieldError] = []
    extra: list[FieldError] = []

    def checks(changed: Obj) -> None:
        extra[:] = finalizer_errors(changed, old)
        if _is_crd(info) and not status:
            extra.extend(crd.validate_definition_update(changed, old, state.registry))

    def again(changed: Obj) -> None:
        # The strategy's PrepareForUpdate follows mutating admission upstream: what a webhook
        # wrote where this endpoint may not write is reset as the request's own would be.
        if status:
            merged = copy_object(merge_status_write(info, changed, old))
            changed.clear()
            changed.update(merged)
        else:
            reset_status_on_main(info, changed, old)
            if _is_namespace(info) and not finalize:
                keep_spec_finalizers(changed, old)
        carry_system_metadata(changed, old)
        checks(changed)
        errors[:] = redefault(info, changed, old, status)

    checks(new)
    if status:
        errors[:] = default_status_update(info, new, old)
        yield Mutating(new, old, again)
        validate_status_updated(info, new, old, extra + errors)
    else:
        service_hooks.before_update(state, info, new, old)
        errors[:] = default_update(info, new, old, podplugins.update_mutation(info, old))
        yield Mutating(new, old, again)
        check_rbac_write(state, info, new, old)
        validate_updated(info, new, old, extra + errors)
        bump_generation(info, new, old)
    if _is_crd(info) and not status:
        new["status"] = crd.refreshed_status(new, state.now_text())
    new_meta = new["metadata"]
    if "managedFields" not in new_meta and "managedFields" in old["metadata"]:
        new_meta["managedFields"] = old["metadata"]["managedFields"]
    if manager is not None and not status:
        new_meta["managedFields"] = record_update(old, new, shape_of(info), manager, state.now_text(),
                                                  base=_requested_entries(new))
        if not new_meta["managedFields"]:
            del new_meta["managedFields"]
    # Upstream validates (validating webhooks included) before it notices a no-op update.
    yield Validating(new, old)
    if new == old:
        return old
    if dry_run:
        return new
    name = new["metadata"]["name"]
    try:
        stored = state.storage.update(info.resource_type, new,
                                      expected_rv=int(old["metadata"]["resourceVersion"]))
    except StorageError as error:
        raise _store_failure(info, name, error) from None
    if is_finalized_deletion(stored) and (not _is_namespace(info) or is_finalized(stored)):
        return _remove(state, info, stored)
    if _is_crd(info):
        state.crd_changed(old, stored)
    return stored


def _remove(state: ServerState, info: ResourceInfo, current: Obj) -> Obj:
    """Delete ``current`` from the store now, with the cascade CRDs need.

    A namespace's content is not touched here: the namespace finalizer
    (:mod:`kubeloop.server.namespace_finalizer`) deleted it before the namespace's
    ``kubernetes`` finalizer was removed, as upstream's namespace controller does.
    """
    meta = current["metadata"]
    name = meta["name"]
    if _is_crd(info):
        _purge_custom_resources(state, current)
    try:
        deleted = state.storage.delete(info.resource_type, meta.get("namespace") or "", name,
                                       expected_rv=int(meta["resourceVersion"]))
    except StorageError as error:
        raise _store_failure(info, name, error) from None
    if _is_crd(info):
        state.crd_changed(current, None)
    return deleted


def _purge_custom_resources(state: ServerState, definition: Obj) -> None:
    rt = crd.resource_type_of(definition)
    if rt is None:
        return
    items, _, _ = state.storage.list(rt, None)
    for item in items:
        state.storage.delete(rt, item["metadata"].get("namespace") or "", item["metadata"]["name"])


def _pod_grace(current: Obj, options: DeleteOptions) -> int:
    spec = current.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    grace = options.grace_period_seconds
    if grace is None:
        configured = spec.get("terminationGracePeriodSeconds")
        grace = configured if isinstance(configured, int) else _DEFAULT_POD_GRACE
    status = current.get("status")
    phase = status.get("phase") if isinstance(status, dict) else None
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    return 1 if grace < 0 else grace


def _finalizers_after(current: list[str], options: DeleteOptions) -> list[str]:
    policy = options.propagation_policy
    if policy is None:
        return current
    kept = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if policy == "Orphan":
        kept.append(ORPHAN_FINALIZER)
    elif policy == "Foreground":
        kept.append(FOREGROUND_FINALIZER)
    return kept


def delete_object(state: ServerState, info: ResourceInfo, current: Obj, options: DeleteOptions) -> tuple[Obj, bool]:
    """Delete, or mark for deletion, ``current``; returns (object, whether it is gone now).

    Finalizers (including the garbage collector's ``orphan`` / ``foregroundDeletion``, added
    per ``propagationPolicy``) and pod grace periods turn the delete into setting
    ``deletionTimestamp``; the object then goes when a later update empties its finalizers.
    """
    return run(delete_steps(state, info, current, options))


def delete_steps(state: ServerState, info: ResourceInfo, current: Obj, options: DeleteOptions
                 ) -> Steps[tuple[Obj, bool]]:
    """:func:`delete_object` in phases: one :class:`Validating` step with ``old`` = ``current``."""
    meta = current["metadata"]
    name = meta["name"]
    if options.precondition_uid is not None and options.precondition_uid != meta.get("uid"):
        raise conflict_error(info.resource, info.group, name,
                             f"Precondition failed: UID in precondition: {options.precondition_uid}, "
                             f"UID in object meta: {meta.get('uid')}")
    if (options.precondition_resource_version is not None
            and options.precondition_resource_version != meta.get("resourceVersion")):
        raise conflict_error(info.resource, info.group, name,
                             f"Precondition failed: ResourceVersion in precondition: "
                             f"{options.precondition_resource_version}, ResourceVersion in object meta: "
                             f"{meta.get('resourceVersion')}")
    finalizers = _finalizers_after(list(meta.get("finalizers") or []), options)
    yield Validating(None, current)
    if _is_namespace(info):
        return _delete_namespace(state, info, current, finalizers, options)
    grace = _pod_grace(current, options) if info.graceful else 0
    being_deleted = bool(meta.get("deletionTimestamp"))
    if being_deleted and info.graceful:
        grace = min(grace, int(meta.get("deletionGracePeriodSeconds") or 0))
    if not finalizers and grace == 0:
        if options.dry_run:
            return current, True
        return _remove(state, info, current), True
    new = copy_object(current)
    new_meta = new["metadata"]
    if finalizers:
        new_meta["finalizers"] = finalizers
    else:
        new_meta.pop("finalizers", None)
    moment = state.clock()
    if not being_deleted or (info.graceful and grace < int(meta.get("deletionGracePeriodSeconds") or 0)):
        new_meta["deletionTimestamp"] = format_time(moment + timedelta(seconds=grace))
        new_meta["deletionGracePeriodSeconds"] = grace
    if not being_deleted and meta.get("generation"):
        new_meta["generation"] = int(meta["generation"]) + 1
    if new == current or options.dry_run:
        return (current if new == current else new), False
    try:
        stored = state.storage.update(info.resource_type, new, expected_rv=int(meta["resourceVersion"]))
    except StorageError as error:
        raise _store_failure(info, name, error) from None
    return stored, False


def _delete_namespace(state: ServerState, info: ResourceInfo, current: Obj, finalizers: list[str],
                      options: DeleteOptions) -> tuple[Obj, bool]:
    """DELETE of a namespace, as upstream's namespace storage ``Delete``.

    The first one marks it Terminating (the namespace finalizer then empties it); later ones
    answer it unchanged while ``spec.finalizers`` remain, and delete it once they are gone
    (unless ``metadata.finalizers`` still hold it).
    """
    name = current["metadata"]["name"]
    check_deletable(name)
    if not is_terminating(current):
        new = copy_object(current)
        mark_terminating(new, state.now_text(), finalizers)
        if options.dry_run:
            return new, False
        try:
            stored = state.storage.update(info.resource_type, new,
                                          expected_rv=int(current["metadata"]["resourceVersion"]))
        except StorageError as error:
            raise _store_failure(info, name, error) from None
        return stored, False
    if not is_finalized(current) or current["metadata"].get("finalizers"):
        return current, False
    if options.dry_run:
        return current, True
    return _remove(state, info, current), True
