"""The allocation step of Service writes, around the pure :mod:`.allocation` core.

:func:`before_create` and :func:`before_update` run for Services (and do nothing for any other
kind) after the generic preparation and before admission, where upstream's service storage runs
its ``BeginCreate`` / ``BeginUpdate`` hooks. What is in use is read from the stored Services at
that moment: writes are serialised on the server's event loop, so the read and the store that
follows are one atomic step, allocations persist with the Services themselves (across
restarts), and deleting a Service frees what it held with no bookkeeping of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.server.registry import ResourceInfo
from kubeloop.server.services.allocation import InUse, allocate_on_create, allocate_on_update, in_use
from kubeloop.server.services.defaults import default_service
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType

SERVICES = ResourceType("", "services")


def is_service(info: ResourceInfo) -> bool:
    return info.group == "" and info.resource == "services" and info.custom is None


def stored_in_use(state: ServerState) -> InUse:
    """The cluster IPs and node ports of every stored Service."""
    items, _, _ = state.storage.list(SERVICES, None)
    return in_use(items)


def before_create(state: ServerState, info: ResourceInfo, obj: dict[str, Any]) -> None:
    """Default a new Service and allocate its cluster IPs and node ports (422 when refused)."""
    if not is_service(info):
        return
    default_service(obj)
    allocate_on_create(obj, stored_in_use(state))


def before_update(state: ServerState, info: ResourceInfo, new: dict[str, Any], old: Mapping[str, Any]) -> None:
    """Default a replacement Service, keep what it had allocated and allocate what it now needs."""
    if not is_service(info):
        return
    default_service(new)
    allocate_on_update(new, old, stored_in_use(state))
