"""A pod's life on a simulated node, through the official client: start, ready, gates, restart, end."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from cluster_thread import ClusterThread
from kubernetes.client import V1Pod

from kubeloop.testing.polling import eventually_blocking

NS = "default"


def pod(name: str, annotations: dict[str, str] | None = None, image: str = "nginx:1.25", **spec: Any
        ) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": [{"name": "app", "image": image}], **spec}}


def read(kube: ClusterThread, name: str) -> V1Pod:
    result: V1Pod = kube.core.read_namespaced_pod(name, NS)
    return result


def condition(p: V1Pod, condition_type: str) -> Any:
    return next((c for c in p.status.conditions or () if c.type == condition_type), None)


def is_true(p: V1Pod, condition_type: str) -> bool:
    found = condition(p, condition_type)
    return found is not None and found.status == "True"


def wait_pod(kube: ClusterThread, name: str, check: Callable[[V1Pod], Any], message: str) -> V1Pod:
    """Poll the pod until ``check`` passes on it; return that version of it."""

    def satisfied() -> V1Pod | None:
        current = read(kube, name)
        return current if check(current) else None

    return eventually_blocking(satisfied, what=message, timeout=30)


def test_a_pod_runs_and_becomes_ready(kube: ClusterThread) -> None:
    created = kube.core.create_namespaced_pod(NS, pod("web"))
    ready = wait_pod(kube, "web", lambda p: is_true(p, "Ready"), "Ready")
    status = ready.status
    assert ready.metadata.uid == created.metadata.uid
    assert status.phase == "Running"
    assert status.host_ip.startswith("10.0.0.") and status.pod_ip.startswith("10.244.")
    assert isinstance(status.start_time, datetime)
    for condition_type in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert is_true(ready, condition_type), condition_type
        assert condition(ready, condition_type).last_transition_time is not None
    [container] = status.container_statuses
    assert (container.name, container.image, container.ready, container.restart_count) == (
        "app", "nginx:1.25", True, 0)
    assert container.image_id.startswith("nginx@sha256:")
    assert container.container_id.startswith("containerd://")
    assert container.state.running.started_at is not None
    assert container.started is True

    def messages() -> dict[str, str]:
        events = kube.core.list_namespaced_event(NS, field_selector="involvedObject.name=web").items
        return {e.reason: e.message for e in events}

    wanted = {"Scheduled", "Pulled", "Created", "Started"}
    assert eventually_blocking(lambda: wanted <= set(messages()), what="the kubelet's and the scheduler's events",
                               timeout=30)
    assert messages()["Created"] == "Created container: app"
    assert messages()["Started"] == "Started container app"
    assert messages()["Pulled"] == 'Container image "nginx:1.25" already present on machine'


def test_pods_get_distinct_addresses_and_container_ids(kube: ClusterThread) -> None:
    for i in range(4):
        kube.core.create_namespaced_pod(NS, pod(f"many-{i}", nodeName="kubeloop-node-1"))
    pods = [wait_pod(kube, f"many-{i}", lambda p: is_true(p, "Ready"), "Ready") for i in range(4)]
    assert len({p.status.pod_ip for p in pods}) == 4
    assert len({p.status.container_statuses[0].container_id for p in pods}) == 4
    assert {p.status.host_ip for p in pods} == {"10.0.0.2"}


def test_ready_honours_readiness_gates(kube: ClusterThread) -> None:
    gate = "example.com/load-balancer"
    kube.core.create_namespaced_pod(NS, pod("gated", readinessGates=[{"conditionType": gate}]))
    waiting = wait_pod(kube, "gated", lambda p: is_true(p, "ContainersReady"), "ContainersReady")
    ready = condition(waiting, "Ready")
    assert (ready.status, ready.reason) == ("False", "ReadinessGatesNotReady")
    assert gate in ready.message

    # A controller (here: the test) sets the gate's condition: the kubelet turns Ready True.
    conditions = [c for c in kube.api.sanitize_for_serialization(waiting.status)["conditions"]]
    conditions.append({"type": gate, "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"})
    kube.core.patch_namespaced_pod_status("gated", NS, {"status": {"conditions": conditions}})
    ready_pod = wait_pod(kube, "gated", lambda p: is_true(p, "Ready"), "Ready with the gate passed")
    assert condition(ready_pod, gate).status == "True"  # the controller's condition is kept

    # The gate goes False again: Ready follows, the containers stay ready.
    conditions = [{**c, "status": "False"} if c["type"] == gate else c
                  for c in kube.api.sanitize_for_serialization(ready_pod.status)["conditions"]]
    kube.core.patch_namespaced_pod_status("gated", NS, {"status": {"conditions": conditions}})
    unready = wait_pod(kube, "gated", lambda p: not is_true(p, "Ready"), "Ready to drop")
    assert condition(unready, "Ready").reason == "ReadinessGatesNotReady"
    assert is_true(unready, "ContainersReady")
    assert condition(unready, "Ready").last_transition_time >= condition(ready_pod, "Ready").last_transition_time


def test_an_image_change_restarts_the_container_in_place(kube: ClusterThread) -> None:
    delay = {"sim.kubeloop.io/ready-delay": "0.2"}
    created = kube.core.create_namespaced_pod(NS, pod("inplace", delay, image="nginx:1.25"))
    before = wait_pod(kube, "inplace", lambda p: is_true(p, "Ready"), "Ready").status.container_statuses[0]

    kube.core.patch_namespaced_pod("inplace", NS, {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}})
    restarted = wait_pod(kube, "inplace", lambda p: p.status.container_statuses[0].restart_count == 1, "a restart")
    after = restarted.status.container_statuses[0]
    assert restarted.metadata.uid == created.metadata.uid
    assert after.image == "nginx:1.26" and after.image_id != before.image_id
    assert after.container_id != before.container_id
    assert after.last_state.terminated.container_id == before.container_id
    assert after.state.running is not None
    # ContainersReady went False at the restart and comes back after the ready delay.
    assert after.ready is False and not is_true(restarted, "ContainersReady")
    ready_again = wait_pod(kube, "inplace", lambda p: is_true(p, "Ready"), "Ready after the restart")
    assert ready_again.status.container_statuses[0].container_id == after.container_id


def test_start_and_ready_delays(kube: ClusterThread) -> None:
    annotations = {"sim.kubeloop.io/start-delay": "0.3", "sim.kubeloop.io/ready-delay": "0.3"}
    kube.core.create_namespaced_pod(NS, pod("slow", annotations))
    creating = wait_pod(kube, "slow", lambda p: p.status.container_statuses, "a first status")
    assert creating.status.phase == "Pending"
    assert creating.status.container_statuses[0].state.waiting.reason == "ContainerCreating"
    running = wait_pod(kube, "slow", lambda p: p.status.phase == "Running", "Running")
    assert running.status.container_statuses[0].ready is False
    assert not is_true(running, "Ready")
    ready = wait_pod(kube, "slow", lambda p: is_true(p, "Ready"), "Ready")
    started_at = running.status.container_statuses[0].state.running.started_at
    assert condition(ready, "Ready").last_transition_time >= started_at


def test_never_ready(kube: ClusterThread) -> None:
    kube.core.create_namespaced_pod(NS, pod("lazy", {"sim.kubeloop.io/never-ready": "true"}))
    running = wait_pod(kube, "lazy", lambda p: p.status.phase == "Running", "Running")
    # With no ready delay a ready container would be reported ready in this very status.
    assert running.status.container_statuses[0].state.running is not None
    assert running.status.container_statuses[0].ready is False
    assert condition(running, "Ready").status == "False"


def test_crash_loop(kube: ClusterThread) -> None:
    kube.core.create_namespaced_pod(NS, pod("crashy", {"sim.kubeloop.io/crash-loop": "true"}))
    crashing = wait_pod(kube, "crashy", lambda p: p.status.container_statuses
                        and p.status.container_statuses[0].restart_count >= 2, "restarts")
    [container] = crashing.status.container_statuses
    assert crashing.status.phase == "Running"
    assert container.ready is False and not is_true(crashing, "Ready")
    assert container.last_state.terminated.exit_code == 1
    assert container.last_state.terminated.reason == "Error"
    waiting = wait_pod(kube, "crashy", lambda p: p.status.container_statuses[0].state.waiting is not None, "back-off")
    assert waiting.status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"


def test_image_pull_error(kube: ClusterThread) -> None:
    kube.core.create_namespaced_pod(NS, pod("unpullable", {"sim.kubeloop.io/image-pull-error": "true"}))

    def reason(p: V1Pod) -> str | None:
        statuses = p.status.container_statuses
        return statuses[0].state.waiting.reason if statuses and statuses[0].state.waiting else None

    first = wait_pod(kube, "unpullable", lambda p: reason(p) in ("ErrImagePull", "ImagePullBackOff"), "pull error")
    assert first.status.phase == "Pending"
    assert first.status.container_statuses[0].image_id == ""
    assert "containerID" not in kube.api.sanitize_for_serialization(first.status)["containerStatuses"][0]
    wait_pod(kube, "unpullable", lambda p: reason(p) == "ImagePullBackOff", "ImagePullBackOff")

    # Fixing the image (here: dropping the annotation) lets it start.
    kube.core.patch_namespaced_pod("unpullable", NS,
                                   {"metadata": {"annotations": {"sim.kubeloop.io/image-pull-error": None}}})
    wait_pod(kube, "unpullable", lambda p: is_true(p, "Ready"), "Ready once the image pulls")


def test_a_deleted_pod_stays_terminating_for_its_termination_delay(kube: ClusterThread) -> None:
    annotations = {"sim.kubeloop.io/termination-delay": "2"}
    kube.core.create_namespaced_pod(NS, pod("leaving", annotations, nodeName="kubeloop-node-1"))
    wait_pod(kube, "leaving", lambda p: is_true(p, "Ready"), "Ready")
    deleted = kube.core.delete_namespaced_pod("leaving", NS)
    assert deleted.metadata.deletion_grace_period_seconds == 30
    terminating = read(kube, "leaving")  # the kubelet holds it for the termination delay
    assert terminating.metadata.deletion_timestamp is not None
    # While it stops, the pod is no longer ready (what `kubectl wait --for=condition=Ready=false` sees).
    unready = wait_pod(kube, "leaving", lambda p: condition(p, "Ready").status == "False", "Ready=False")
    assert unready.metadata.deletion_timestamp is not None
    assert condition(unready, "ContainersReady").status == "False"
    assert [c.ready for c in unready.status.container_statuses] == [False]
    eventually_blocking(lambda: not [p for p in kube.core.list_namespaced_pod(NS).items
                                     if p.metadata.name == "leaving"],
                        what="the pod to go", timeout=30)


def test_the_grace_period_caps_the_termination_delay(kube: ClusterThread) -> None:
    annotations = {"sim.kubeloop.io/termination-delay": "3600"}
    kube.core.create_namespaced_pod(NS, pod("capped", annotations, nodeName="kubeloop-node-2",
                                            terminationGracePeriodSeconds=1))
    wait_pod(kube, "capped", lambda p: is_true(p, "Ready"), "Ready")
    kube.core.delete_namespaced_pod("capped", NS)
    assert read(kube, "capped").metadata.deletion_grace_period_seconds == 1
    eventually_blocking(lambda: not [p for p in kube.core.list_namespaced_pod(NS).items
                                     if p.metadata.name == "capped"],
                        what="the pod to go after its grace period", timeout=30)


def test_a_pod_with_a_finalizer_waits_for_it_after_termination(kube: ClusterThread) -> None:
    body = pod("held", nodeName="kubeloop-node-3")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    kube.core.create_namespaced_pod(NS, body)
    wait_pod(kube, "held", lambda p: is_true(p, "Ready"), "Ready")
    kube.core.delete_namespaced_pod("held", NS)
    # The kubelet finishes its part (grace period 0); the finalizer keeps the object.
    held = wait_pod(kube, "held", lambda p: p.metadata.deletion_grace_period_seconds == 0, "the kubelet's delete")
    assert held.metadata.finalizers == ["example.com/hold"]
    kube.core.patch_namespaced_pod("held", NS, {"metadata": {"finalizers": None}})
    eventually_blocking(lambda: not [p for p in kube.core.list_namespaced_pod(NS).items
                                     if p.metadata.name == "held"],
                        what="the pod to go", timeout=30)
