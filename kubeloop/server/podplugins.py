"""kube-apiserver's default admission plugins that mutate pods, wired to the server's state.

The pure cores live in the admission package (:mod:`.admission.serviceaccount`,
:mod:`.admission.priority`, :mod:`.admission.tolerationseconds`); this module only reads what
they need from the store and runs them in upstream's plugin order (ServiceAccount, Priority,
DefaultTolerationSeconds), after API defaulting and before validation. Creations run all three;
main-endpoint updates run Priority's carry-over and DefaultTolerationSeconds; subresource
writes (``/status``, ``/binding``) run none, as upstream's plugins ignore subresources.

ServiceAccounts and PriorityClasses are read through the store only when their kinds are
served; a missing ServiceAccount is not refused here (see :mod:`.admission.serviceaccount`).
A create passes in the ServiceAccount its earlier existence check found
(:mod:`kubeloop.server.serviceaccount_admission`), and the ``globalDefault`` PriorityClass is
chosen once per change of the PriorityClasses (memoised in :attr:`ServerState.derived`), not
by listing them on every pod create.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from kubeloop.server.admission.priority import admit_priority_create, keep_priority_on_update
from kubeloop.server.admission.serviceaccount import admit_service_account, default_service_account_name
from kubeloop.server.admission.tolerationseconds import add_default_tolerations
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.state import ServerState
from kubeloop.server.strategy import generate_name

Obj = dict[str, Any]
Mutation = Callable[[Obj], None]

_SCHEDULING_GROUP = "scheduling.k8s.io"
_DEFAULT_CLASS_KEY = "podplugins.default_priority_class"


class _LookUp:
    """The ServiceAccount is not known yet: :func:`mutate_new_pod` looks it up."""


LOOK_UP = _LookUp()


def _is_pod(info: ResourceInfo) -> bool:
    return info.group == "" and info.kind == "Pod"


def _service_account(state: ServerState, namespace: str, name: str) -> Mapping[str, Any] | None:
    info = state.registry.lookup("", "v1", "serviceaccounts")
    if info is None or not name:
        return None
    return state.storage.get(info.resource_type, namespace, name)


def _priority_class_info(state: ServerState) -> ResourceInfo | None:
    return state.registry.lookup(_SCHEDULING_GROUP, "v1", "priorityclasses")


def _priority_class(state: ServerState, name: str) -> Mapping[str, Any] | None:
    info = _priority_class_info(state)
    return None if info is None else state.storage.get(info.resource_type, "", name)


def _default_priority_class(state: ServerState) -> Mapping[str, Any] | None:
    """:func:`_choose_default_class`, recomputed only after the PriorityClasses changed."""
    info = _priority_class_info(state)
    if info is None:
        return None
    version = state.storage.last_change(info.resource_type)
    memo = state.derived.get(_DEFAULT_CLASS_KEY)
    if memo is not None and memo[0] == version:
        chosen: Mapping[str, Any] | None = memo[1]
        return chosen
    chosen = _choose_default_class(state, info)
    state.derived[_DEFAULT_CLASS_KEY] = (version, chosen)
    return chosen


def _choose_default_class(state: ServerState, info: ResourceInfo) -> Mapping[str, Any] | None:
    """The ``globalDefault`` class with the lowest value, as upstream picks among several."""
    items, _, _ = state.storage.list(info.resource_type, None)
    chosen: Mapping[str, Any] | None = None
    for item in items:
        value = item.get("value")
        if item.get("globalDefault") is True and isinstance(value, int):
            chosen_value = chosen.get("value") if chosen is not None else None
            if not isinstance(chosen_value, int) or value < chosen_value:
                chosen = item
    return chosen


def _new_suffix() -> str:
    return generate_name("")


def mutate_new_pod(state: ServerState, pod: Obj,
                   service_account: Mapping[str, Any] | _LookUp | None = LOOK_UP) -> None:
    """ServiceAccount, Priority and DefaultTolerationSeconds on a new, defaulted pod (in place).

    ``service_account``: the pod's ServiceAccount as its create already found it (None for a
    pod that names none), or :data:`LOOK_UP` to default the name and read it here.
    """
    if isinstance(service_account, _LookUp):
        meta = pod.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        account_name = default_service_account_name(pod)
        account = _service_account(state, namespace if isinstance(namespace, str) else "", account_name)
    elif service_account is not None and state.registry.lookup("", "v1", "serviceaccounts") is not None:
        account = service_account
    else:
        account = None
    admit_service_account(pod, account, _new_suffix)
    admit_priority_create(pod, partial(_priority_class, state), _default_priority_class(state))
    add_default_tolerations(pod)


def mutate_updated_pod(new: Obj, old: Obj) -> None:
    """Priority's carry-over and DefaultTolerationSeconds on a main-endpoint pod update."""
    keep_priority_on_update(new, old)
    add_default_tolerations(new)


def create_mutation(state: ServerState, info: ResourceInfo,
                    service_account: Mapping[str, Any] | _LookUp | None = LOOK_UP) -> Mutation | None:
    """The admission plugins' mutation of a new object of ``info``'s kind, if any; for a pod,
    ``service_account`` as :func:`mutate_new_pod` takes it."""
    return partial(mutate_new_pod, state, service_account=service_account) if _is_pod(info) else None


def update_mutation(info: ResourceInfo, old: Obj) -> Mutation | None:
    """The admission plugins' mutation of a main-endpoint update of ``old``, if any."""
    return partial(_update_of, old) if _is_pod(info) else None


def _update_of(old: Obj, new: Obj) -> None:
    mutate_updated_pod(new, old)
