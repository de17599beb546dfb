"""The simulated kubelet: one API client that schedules pods and runs them on fake nodes.

It is an ordinary controller on the kubeloop runtime, with no access to the server's
internals: informers on Pods and Nodes, one work queue keyed by pod, and a reconcile that

1. places a pending pod on the least-loaded fitting node (a ``pods/binding`` POST, as the
   scheduler does), or marks it ``PodScheduled=False`` (Unschedulable) and retries;
2. for a pod on one of its nodes, steps the pod's containers to now (the pure state machine
   of :mod:`~kubeloop.kubelet.containers`), writes the status drawn from them when it
   differs from the stored one, and asks to be requeued when the next timed transition is
   due (start delay, ready delay, crash back-off);
3. for a Terminating pod, waits ``min(grace period, termination delay)`` and then deletes it
   with grace period 0, as a kubelet does once the containers have stopped.

A background task registers the nodes, renews their heartbeat Leases and reports their
status. Every API failure is retried (the work queue's back-off for pods, a fixed pause for
the nodes), so the kubelet rides out a restart of the API server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from kubeloop.api.meta import format_micro_time, is_being_deleted, name_of, namespace_of, object_key, uid_of
from kubeloop.api.pods import node_name
from kubeloop.client import LEASES, NODES, PODS, AlreadyExists, ApiClient, Conflict, NotFound, is_not_found
from kubeloop.kubelet.behaviour import PodBehaviour, pod_behaviour
from kubeloop.kubelet.config import KubeletConfig
from kubeloop.kubelet.containers import IdSource
from kubeloop.kubelet.envmeta import reads_metadata, runtime_containers_meta, runtime_meta_patch
from kubeloop.kubelet.nodes import (
    NODE_LEASE_NAMESPACE,
    SimNode,
    free_pod_ip,
    lease_object,
    node_object,
    node_status,
    sim_nodes,
)
from kubeloop.kubelet.podevents import container_events, pod_ref
from kubeloop.kubelet.podstate import (
    PodMemo,
    advance_pod,
    deletion_deadline,
    deletion_started,
    memo_from_status,
    spec_containers,
)
from kubeloop.kubelet.podstatus import render_status, same_status, unschedulable_status
from kubeloop.kubelet.scheduling import node_fit_changed, pick_node, wants_scheduling
from kubeloop.kubelet.staticpods import control_plane_pods
from kubeloop.runtime.controller import Result
from kubeloop.runtime.events import ClientEventSink, EventRecorder
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers.informer import SharedIndexInformer
from kubeloop.runtime.manager import Manager
from kubeloop.runtime.predicates import Predicate

log = logging.getLogger(__name__)

NODE_INDEX = "kubelet.kubeloop.io/node"
"""Pod index: the node a pod is placed on (``""`` for pods not placed yet)."""
ACTIVE_ON_NODE_INDEX = "kubelet.kubeloop.io/active-on-node"
"""Pod index: the node of every placed pod that has not finished (a node's load is its size)."""
NODE_RETRY_SECONDS = 1.0


def random_container_id() -> str:
    return "containerd://" + secrets.token_hex(32)


def _pod_node_index(pod: dict[str, Any]) -> list[str]:
    return [node_name(pod)]


def _active_on_node_index(pod: dict[str, Any]) -> list[str]:
    node = node_name(pod)
    return [node] if node and not _is_terminal(pod) else []


def _is_terminal(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    return isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed")


class Kubelet:
    """Simulates ``config.nodes`` nodes and everything their kubelets and the scheduler do.

    Use: ``kubelet = Kubelet(client, config); await kubelet.setup(manager); await manager.start()``.
    ``wall`` is the wall clock (seconds since the epoch) used for status times and delays;
    ``new_container_id`` makes container ids.
    """

    def __init__(self, client: ApiClient, config: KubeletConfig | None = None, *,
                 wall: Callable[[], float] = time.time, new_container_id: IdSource = random_container_id) -> None:
        self.client = client
        self.config = config or KubeletConfig()
        self.nodes: list[SimNode] = sim_nodes(self.config.nodes, self.config.zones)
        self._by_name = {node.name: node for node in self.nodes}
        self._wall = wall
        self._new_id = new_container_id
        self._memos: dict[str, PodMemo] = {}
        self._node_ips: dict[str, dict[str, str]] = {}
        """Per node, the address of every pod this kubelet holds a memo for (pod key -> IP)."""
        self._assumed: dict[str, tuple[str, str]] = {}
        self._reported: set[str] = set()
        self._leases: dict[str, dict[str, Any]] = {}
        """Per node, the Lease as the server last answered this kubelet's write of it."""
        self._pods: SharedIndexInformer | None = None
        self._node_cache: SharedIndexInformer | None = None
        self._kubelet_events: EventRecorder | None = None
        self._scheduler_events: EventRecorder | None = None
        self.registered = asyncio.Event()
        """Set once every node has been registered (created or refreshed) and has a Lease."""

    # -- wiring ---------------------------------------------------------------------------
    async def setup(self, mgr: Manager) -> None:
        """Declare the kubelet's informers, its controller and its node loop on ``mgr``."""
        # Events go through the kubelet's own client (which may differ from the manager's),
        # so its recorders are its own too, run by the node loop's runnable.
        host = socket.gethostname()
        self._kubelet_events = EventRecorder(ClientEventSink(self.client), "kubelet", host=host)
        self._scheduler_events = EventRecorder(ClientEventSink(self.client), self.config.scheduler_name, host=host)
        indexers = {NODE_INDEX: _pod_node_index, ACTIVE_ON_NODE_INDEX: _active_on_node_index}
        self._pods = await mgr.factory.informer_for(PODS, indexers=indexers)
        self._node_cache = await mgr.factory.informer_for(NODES)
        await (mgr.controller("kubelet")
               .for_(PODS)
               .watches(NODES, self._pending_pods, [Predicate(update=node_fit_changed)])
               .with_options(max_concurrent_reconciles=self.config.workers)
               .complete(self.reconcile))
        mgr.add_runnable(self.run_nodes, needs_leader=False)
        mgr.add_runnable(self._run_recorders, needs_leader=False)

    async def _run_recorders(self) -> None:
        recorders = [r for r in (self._kubelet_events, self._scheduler_events) if r is not None]
        for recorder in recorders:
            await recorder.start()
        try:
            await asyncio.Event().wait()
        finally:
            for recorder in recorders:
                await recorder.stop()

    def _pending_pods(self, node: dict[str, Any]) -> list[Request]:
        # A node that appears or changes may take pods that fit nowhere before.
        if self._pods is None or name_of(node) not in self._by_name:
            return []
        return [Request.for_object(pod) for pod in self._pods.indexer.by_index(NODE_INDEX, "")]

    # -- pods -----------------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result | None:
        """Place, run or finish the pod named by ``request``; requeue when a timed step is due."""
        assert self._pods is not None
        key = request.key
        pod = self._pods.indexer.get(key)
        if pod is None:
            self._drop_memo(key)
            self._assumed.pop(key, None)
            return None
        placed_on = node_name(pod)
        if not placed_on:
            return await self._schedule(key, pod)
        self._assumed.pop(key, None)
        node = self._by_name.get(placed_on)
        if node is None or _is_terminal(pod):
            return None
        now = self._wall()
        behaviour, ignored = pod_behaviour(pod, self.config.defaults)
        self._report_ignored(pod, ignored)
        known = self._memos.get(key)
        if known is not None and known.uid != uid_of(pod):
            known = None
        memo = known or memo_from_status(pod, node.name, node.internal_ip, self._pod_ip(pod, node, key), now)
        if is_being_deleted(pod):
            return await self._terminate(key, pod, memo, known, behaviour, now)
        before = memo
        memo, due = advance_pod(pod, memo, behaviour, now, self._new_id, self.config.back_off)
        self._set_memo(key, memo)
        self._record(pod, before, memo)
        status = render_status(pod, memo, behaviour, now)
        if not same_status(status, pod.get("status")):
            try:
                await self.client.update_status(PODS, {**pod, "status": status}, namespace=namespace_of(pod))
            except Conflict:
                return Result(requeue=True)  # the cache is behind; its update event comes next
            except NotFound:
                return None
        if not await self._report_runtime_meta(pod, memo, status):
            return None
        if due is None:
            return None
        return Result(requeue_after=max(due - now, 0.001))

    async def _report_runtime_meta(self, pod: dict[str, Any], memo: PodMemo, status: Mapping[str, Any]) -> bool:
        """Write the ``runtime-containers-meta`` annotation (kruise-daemon's part) when it changed.

        Only pods with a container reading env from metadata get it: that report is what an
        in-place env-from-metadata update waits for. Returns False when the pod is gone.
        """
        if not any(reads_metadata(c) for c in spec_containers(pod)):
            return True
        started_env = {run.name: run.env for run in memo.containers if run.has_started}
        report = runtime_containers_meta(status.get("containerStatuses") or (), started_env)
        patch = runtime_meta_patch(pod, report)
        if patch is None:
            return True
        try:
            await self.client.patch(PODS, name_of(pod), patch, namespace=namespace_of(pod))
        except NotFound:
            return False
        return True

    async def _terminate(self, key: str, pod: dict[str, Any], memo: PodMemo, known: PodMemo | None,
                         behaviour: PodBehaviour, now: float) -> Result | None:
        if (pod.get("metadata") or {}).get("deletionGracePeriodSeconds") == 0:
            return None  # already deleted with grace 0: only finalizers keep it
        since = deletion_started(pod, known, now)
        deleting = replace(memo, deleting_since=since)
        self._record(pod, memo, deleting)
        self._set_memo(key, deleting)
        deadline = deletion_deadline(pod, since, behaviour)
        if now < deadline:
            # Stopping containers are no longer ready: report it while the grace period runs.
            status = render_status(pod, deleting, behaviour, now, terminating=True)
            if not same_status(status, pod.get("status")):
                try:
                    await self.client.update_status(PODS, {**pod, "status": status}, namespace=namespace_of(pod))
                except Conflict:
                    return Result(requeue=True)
                except NotFound:
                    return None
            return Result(requeue_after=deadline - now)
        with contextlib.suppress(NotFound):
            await self.client.delete(PODS, name_of(pod), namespace=namespace_of(pod), grace_period_seconds=0,
                                     preconditions={"uid": uid_of(pod)})
        return None

    def _record(self, pod: Mapping[str, Any], before: PodMemo, after: PodMemo) -> None:
        if self._kubelet_events is None:
            return
        for event in container_events(before, after, pod_ref(pod)):
            self._kubelet_events.event(pod, event.type, event.reason, event.message, kind="Pod", api_version="v1")

    def _report_ignored(self, pod: Mapping[str, Any], ignored: list[str]) -> None:
        for entry in ignored:
            marker = f"{uid_of(pod)}:{entry}"
            if marker not in self._reported:
                self._reported.add(marker)
                log.warning("pod %s: ignoring annotation %s (not a valid value)", object_key(pod), entry)

    def _set_memo(self, key: str, memo: PodMemo) -> None:
        previous = self._memos.get(key)
        if previous is not None and previous.node != memo.node:
            self._node_ips.get(previous.node, {}).pop(key, None)
        self._memos[key] = memo
        self._node_ips.setdefault(memo.node, {})[key] = memo.pod_ip

    def _drop_memo(self, key: str) -> None:
        memo = self._memos.pop(key, None)
        if memo is not None:
            self._node_ips.get(memo.node, {}).pop(key, None)

    def _pod_ip(self, pod: Mapping[str, Any], node: SimNode, key: str) -> str:
        """The pod's address: the one its status reports, else the node's lowest free one."""
        status = pod.get("status")
        if isinstance(status, Mapping) and status.get("podIP"):
            return str(status["podIP"])
        return self._free_ip(node, key)

    def _free_ip(self, node: SimNode, key: str) -> str:
        # Addresses held by pods this kubelet runs, and by pods placed on the node that it has
        # not picked up yet (after a restart their status still holds their address).
        assert self._pods is not None
        held = self._node_ips.get(node.name, {})
        used = {ip for other, ip in held.items() if other != key}
        indexer = self._pods.indexer
        for other in indexer.index_key_view(NODE_INDEX, node.name):
            if other in held or other == key:
                continue
            pod = indexer.get(other)
            status = pod.get("status") if pod is not None else None
            if isinstance(status, Mapping) and status.get("podIP"):
                used.add(str(status["podIP"]))
        return free_pod_ip(node, used)

    # -- scheduling -----------------------------------------------------------------------
    def _load(self) -> dict[str, int]:
        """Active pods per node, counting pods bound by this kubelet that the cache has not
        caught up with (entries the cache has caught up with are forgotten here)."""
        assert self._pods is not None
        load = {node.name: self._pods.indexer.index_count(ACTIVE_ON_NODE_INDEX, node.name) for node in self.nodes}
        for key, (uid, assumed_node) in list(self._assumed.items()):
            cached = self._pods.indexer.get(key)
            if cached is None or uid_of(cached) != uid or node_name(cached):
                del self._assumed[key]
                continue
            load[assumed_node] = load.get(assumed_node, 0) + 1
        return load

    async def _schedule(self, key: str, pod: dict[str, Any]) -> Result | None:
        assert self._node_cache is not None
        if not wants_scheduling(pod, self.config.scheduler_name):
            return None
        assumed = self._assumed.get(key)
        if assumed is not None and assumed[0] == uid_of(pod):
            return None  # bound already; the cache has not caught up
        nodes = [n for n in self._node_cache.indexer.list() if name_of(n) in self._by_name]
        choice, why = pick_node(pod, nodes, self._load())
        now = self._wall()
        if choice is None:
            status = unschedulable_status(pod, why, now)
            if not same_status(status, pod.get("status")):
                if self._scheduler_events is not None:
                    self._scheduler_events.event(pod, "Warning", "FailedScheduling", why, kind="Pod", api_version="v1")
                with contextlib.suppress(Conflict, NotFound):
                    await self.client.update_status(PODS, {**pod, "status": status}, namespace=namespace_of(pod))
            return Result(requeue_after=self.config.unschedulable_retry)
        # Assume before binding (as the scheduler does) so that pods placed concurrently by the
        # other workers count this one in their node's load; forget it if the binding fails.
        self._assumed[key] = (uid_of(pod), choice)
        try:
            await self.bind(pod, choice)
        except BaseException as exc:
            self._assumed.pop(key, None)
            if isinstance(exc, Conflict):
                return Result(requeue=True)  # bound by someone else meanwhile, or stale
            if isinstance(exc, NotFound):
                return None
            raise
        if self._scheduler_events is not None:
            self._scheduler_events.event(pod, "Normal", "Scheduled",
                                         f"Successfully assigned {object_key(pod)} to {choice}",
                                         kind="Pod", api_version="v1")
        return None

    async def bind(self, pod: Mapping[str, Any], node_name: str) -> None:
        """Place ``pod`` on ``node_name`` with a ``pods/binding`` POST, as the scheduler does.

        The Binding carries the pod's uid as a precondition, so a pod re-created under the same
        name is never bound by a decision taken for its predecessor.
        """
        namespace = namespace_of(pod)
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name_of(pod), "namespace": namespace, "uid": uid_of(pod)},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        await self.client.create(PODS, binding, namespace=namespace, subresource="binding")

    # -- nodes ----------------------------------------------------------------------------
    async def run_nodes(self) -> None:
        """Register the nodes, then renew their Leases and report their status, until cancelled.

        After any failure (the server restarting, a node deleted by hand) the next round
        reports the nodes again, which re-creates missing ones.
        """
        last_report: float | None = None
        while True:
            try:
                report = last_report is None or time.monotonic() - last_report >= self.config.status_report_interval
                for index, node in enumerate(self.nodes):
                    uid = await self._report_node(node) if report else ""
                    await self._renew_lease(node, uid)
                    if report and index == 0 and self.config.control_plane_pods:
                        await self._ensure_control_plane_pods(node, uid)
                if report:
                    last_report = time.monotonic()
                self.registered.set()
                await asyncio.sleep(self.config.heartbeat_interval)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("kubelet: node heartbeat failed (%s); retrying", exc)
                last_report = None
                await asyncio.sleep(NODE_RETRY_SECONDS)

    async def _report_node(self, node: SimNode) -> str:
        now = self._wall()
        try:
            current = await self.client.get(NODES, node.name)
        except NotFound:
            current = await self.client.create(NODES, node_object(node, self.config.shape, now))
        status = node_status(node, self.config.shape, now, current.get("status"))
        updated = await self.client.update_status(NODES, {**current, "status": status})
        return uid_of(updated)

    async def _ensure_control_plane_pods(self, node: SimNode, node_uid: str) -> None:
        """Create the control plane's mirror pods that are missing (deleted ones come back, as
        a kubelet re-creates the mirror pods of its static pods)."""
        seen = format_micro_time(datetime.fromtimestamp(self._wall(), UTC))
        for mirror in control_plane_pods(node.name, node_uid, seen):
            with contextlib.suppress(AlreadyExists):
                await self.client.create(PODS, mirror, namespace=mirror["metadata"]["namespace"])

    async def _renew_lease(self, node: SimNode, node_uid: str) -> None:
        """Renew the node's heartbeat Lease with one write: an update of the Lease this kubelet
        last wrote, without reading it first, as upstream's lease controller renews from its
        ``latestLease`` (k8s.io/component-helpers/apimachinery/lease/controller.go, ``sync``).
        Only when there is none, or the server refuses it (409: someone else wrote the Lease;
        404: it is gone), is the Lease read (or created) and updated from what was read.

        Why: the renewals cost the server ``nodes`` writes every heartbeat interval whatever the
        pods do; a read before each write doubled that (the 20,000-pod sweep of
        bench/rollout_sweep.py, docs/decisions.md "20,000 pods").
        """
        renew = format_micro_time(datetime.fromtimestamp(self._wall(), UTC))
        latest = self._leases.get(node.name)
        if latest is not None:
            try:
                self._leases[node.name] = await self.client.update(
                    LEASES, self._renewed(latest, node, renew), namespace=NODE_LEASE_NAMESPACE)
                return
            except (Conflict, NotFound):
                del self._leases[node.name]
        try:
            lease = await self.client.get(LEASES, node.name, namespace=NODE_LEASE_NAMESPACE)
        except Exception as exc:
            if not is_not_found(exc):
                raise
            if not node_uid:
                node_uid = uid_of(await self.client.get(NODES, node.name))
            self._leases[node.name] = await self.client.create(
                LEASES, lease_object(node.name, node_uid, self.config.lease_duration_seconds, renew),
                namespace=NODE_LEASE_NAMESPACE)
            return
        self._leases[node.name] = await self.client.update(
            LEASES, self._renewed(lease, node, renew), namespace=NODE_LEASE_NAMESPACE)

    def _renewed(self, lease: Mapping[str, Any], node: SimNode, renew: str) -> dict[str, Any]:
        spec = {**(lease.get("spec") or {}), "holderIdentity": node.name,
                "leaseDurationSeconds": self.config.lease_duration_seconds, "renewTime": renew}
        return {**lease, "spec": spec}
