"""A whole Kubernetes-like cluster in one process, for tests: API server, simulated kubelet, controllers.

:class:`EmbeddedCluster` is what the ``kubeloop_cluster`` pytest fixture yields: the one-process
assembly of :mod:`kubeloop.cluster.inprocess` (which ``kubeloop up --single-process`` runs too)
plus a few waiting helpers that poll until something holds (or fail after a timeout); they
never assert on timing.

    cluster = EmbeddedCluster(ClusterConfig(data_dir=tmp_path))
    await cluster.start()
    try:
        await cluster.client.create(DEPLOYMENTS, manifest, namespace="default")
        await cluster.wait_for(DEPLOYMENTS, "web", lambda d: d["status"].get("readyReplicas") == 3)
    finally:
        await cluster.stop()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kubeloop.client import Resource, is_not_found
from kubeloop.cluster.inprocess import ClientLimits, ClusterConfig, InProcessCluster, all_controllers
from kubeloop.kubelet import BackOff, BehaviourDefaults, KubeletConfig
from kubeloop.testing.polling import eventually

__all__ = ["ClientLimits", "ClusterConfig", "EmbeddedCluster", "all_controllers", "has_condition",
           "quick_kubelet_config"]

Obj = dict[str, Any]
POLL_SECONDS = 0.05


def quick_kubelet_config(nodes: int = 3) -> KubeletConfig:
    """A kubelet for tests: pods run and turn ready at once, deletions and restarts take 50 ms.

    Pods can still ask for delays and failures with the ``sim.kubeloop.io/*`` annotations.
    """
    return KubeletConfig(
        nodes=nodes,
        defaults=BehaviourDefaults(start_delay=0.0, ready_delay=0.0, termination_delay=0.05),
        back_off=BackOff(initial=0.05, maximum=1.0),
        heartbeat_interval=1.0,
        unschedulable_retry=0.2,
    )


class EmbeddedCluster(InProcessCluster):
    """The server, the kubelet and the controllers of one process; ``start`` then ``stop``."""

    async def __aenter__(self) -> EmbeddedCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- waiting --------------------------------------------------------------------------
    async def wait_until(self, check: Callable[[], Awaitable[bool] | bool], timeout: float = 30.0,
                         message: str = "condition") -> None:
        """Poll ``check`` (sync or async) until it returns true; ``TimeoutError`` after ``timeout``
        (a :class:`~kubeloop.testing.polling.PollTimeout`)."""
        await eventually(check, timeout=timeout, interval=POLL_SECONDS, what=message)

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until every cache has synced and every simulated node is registered."""
        await self.wait_until(self.ready, timeout, "caches to sync")
        if self.kubelet is not None:
            async with asyncio.timeout(timeout):
                await self.kubelet.registered.wait()

    async def wait_for(self, resource: Resource | str, name: str, predicate: Callable[[Obj], bool] = bool, *,
                       namespace: str | None = "default", timeout: float = 30.0) -> Obj:
        """Poll the object until ``predicate(object)`` holds; return that object.

        A missing object counts as "not yet". ``TimeoutError`` names the last state seen.
        """
        last: list[Obj | None] = [None]

        async def check() -> bool:
            try:
                current = await self.client.get(resource, name, namespace=namespace)
            except Exception as exc:
                if not is_not_found(exc):
                    raise
                last[0] = None
                return False
            last[0] = current
            return predicate(current)

        try:
            await self.wait_until(check, timeout, f"{_plural(resource)} {name}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; last seen: {last[0]}") from None
        assert last[0] is not None
        return last[0]

    async def wait_for_condition(self, resource: Resource | str, name: str, condition_type: str,
                                 status: str = "True", *, namespace: str | None = "default",
                                 timeout: float = 30.0) -> Obj:
        """Wait until the object has ``status.conditions[type=condition_type].status == status``."""
        return await self.wait_for(resource, name, lambda obj: has_condition(obj, condition_type, status),
                                   namespace=namespace, timeout=timeout)

    async def wait_deleted(self, resource: Resource | str, name: str, *, namespace: str | None = "default",
                           timeout: float = 30.0) -> None:
        """Wait until the object is gone."""

        async def gone() -> bool:
            try:
                await self.client.get(resource, name, namespace=namespace)
            except Exception as exc:
                if is_not_found(exc):
                    return True
                raise
            return False

        await self.wait_until(gone, timeout, f"{_plural(resource)} {name} to be deleted")


def _plural(resource: Resource | str) -> str:
    return resource.plural if isinstance(resource, Resource) else resource


def has_condition(obj: Mapping[str, Any], condition_type: str, status: str = "True") -> bool:
    """Whether ``obj`` has the condition with the given status."""
    conditions = (obj.get("status") or {}).get("conditions") or ()
    return any(isinstance(c, Mapping) and c.get("type") == condition_type and c.get("status") == status
               for c in conditions)

