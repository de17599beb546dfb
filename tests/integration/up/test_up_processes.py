"""``kubeloop up``'s default layout: the server, the kubelet and the controllers as supervised
processes of their own (issue #20 item 2), driven as a user would."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from kubernetes import client, config
from process_harness import KubeloopProcess, free_port

from kubeloop.testing.polling import eventually_blocking

QUICK = ("--pod-start-delay", "0.05", "--pod-ready-delay", "0.05", "--pod-termination-delay", "0.05")
COMPONENTS = ("server", "kubelet", "controllers")


def started_pids(process: KubeloopProcess) -> dict[str, int]:
    pids = {}
    for name in COMPONENTS:
        line = process.wait_for_line(f"kubeloop: started the {name} process (pid ")
        match = re.search(r"\(pid (\d+)\)", line)
        assert match is not None, line
        pids[name] = int(match.group(1))
    return pids


def restarted_pid(process: KubeloopProcess, name: str) -> int:
    line = process.wait_for_line(f"kubeloop: restarted the {name} process (pid ", timeout=120)
    match = re.search(r"\(pid (\d+)\)", line)
    assert match is not None, line
    return int(match.group(1))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def child_of(pid: int, parent: int) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1]) == parent


def rolled_out(apps: client.AppsV1Api, name: str, replicas: int, image: str) -> bool:
    deployment = apps.read_namespaced_deployment(name, "default")
    status = deployment.status
    return (deployment.spec.template.spec.containers[0].image == image
            and status.observed_generation == deployment.metadata.generation
            and status.updated_replicas == replicas and status.available_replicas == replicas
            and (status.replicas or 0) == replicas)


def test_rollout_restarts_of_killed_children_and_sigint_stops_every_child(
        tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    data_dir = tmp_path / "cluster"
    up = KubeloopProcess("up", "--data-dir", str(data_dir), "--port", str(free_port()), "--memory",
                         "--nodes", "1", *QUICK, "--no-dashboard")
    processes.append(up)
    pids = started_pids(up)
    assert all(alive(pid) and child_of(pid, up.process.pid) for pid in pids.values())
    up.wait_for_line("kubeloop is ready", timeout=120)

    api: client.ApiClient = config.new_client_from_config(config_file=str(data_dir / "kubeconfig"))
    try:
        apps = client.AppsV1Api(api)
        labels = {"app": "web"}
        apps.create_namespaced_deployment("default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}})
        eventually_blocking(lambda: rolled_out(apps, "web", 2, "nginx:1.25"), timeout=120, interval=0.2,
                            what="2 available replicas", retry_on=(Exception,))
        apps.patch_namespaced_deployment("web", "default", {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": "nginx:1.26"}]}}}})
        eventually_blocking(lambda: rolled_out(apps, "web", 2, "nginx:1.26"), timeout=120, interval=0.2,
                            what="the rollout to nginx:1.26", retry_on=(Exception,))

        # A crashed child is reported and started again; the cluster goes on working.
        os.kill(pids["controllers"], signal.SIGKILL)
        up.wait_for_line(f"kubeloop: the controllers process (pid {pids['controllers']}) was killed by SIGKILL; "
                         "restarting it in 1s (restart 1 of at most 5 in a row)")
        pids["controllers"] = restarted_pid(up, "controllers")
        assert child_of(pids["controllers"], up.process.pid)
        up.wait_for_line("[controllers] kubeloop controllers running", timeout=120)
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
        eventually_blocking(lambda: rolled_out(apps, "web", 3, "nginx:1.26"), timeout=120, interval=0.2,
                            what="3 available replicas after the restart", retry_on=(Exception,))

        # A crashed server comes back on its port; in memory it forgot everything, the service
        # accounts too, so the kubelet and the controllers are restarted on fresh tokens.
        os.kill(pids["server"], signal.SIGKILL)
        pids["server"] = restarted_pid(up, "server")
        restarted = {}
        while len(restarted) < 2:
            line = up.wait_for_line("kubeloop: restarted the ", timeout=120)
            match = re.search(r"restarted the (\w+) process \(pid (\d+)\)", line)
            assert match is not None and match.group(1) in ("kubelet", "controllers"), line
            restarted[match.group(1)] = int(match.group(2))
        pids.update(restarted)
        apps.create_namespaced_deployment("default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "again"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}})
        eventually_blocking(lambda: rolled_out(apps, "again", 1, "nginx:1.27"), timeout=120, interval=0.2,
                            what="a Deployment rolled out after the server's restart", retry_on=(Exception,))
    finally:
        api.close()

    assert up.signal(signal.SIGINT, timeout=60) == 0
    output = up.all_output()
    assert output[-1] == "kubeloop stopped"
    for name in COMPONENTS:
        assert f"[{name}] kubeloop {name} stopped" in output  # each stopped on its own, not killed
    assert not any(alive(pid) for pid in pids.values())


def test_children_do_not_outlive_a_killed_supervisor(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    up = KubeloopProcess("up", "--data-dir", str(tmp_path / "cluster"), "--port", str(free_port()), "--memory",
                         "--nodes", "1", "--controllers", "replicaset", "--no-dashboard")
    processes.append(up)
    pids = started_pids(up)
    up.wait_for_line("kubeloop is ready", timeout=120)
    up.signal(signal.SIGKILL)
    try:
        eventually_blocking(lambda: not any(alive(pid) for pid in pids.values()), timeout=60, interval=0.2,
                            what="the children of the killed supervisor to exit")
    finally:
        for pid in pids.values():  # what a failure left behind
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
