"""A namespace deletion survives kill -9 of the server mid-purge (issue #18 item 4: after a kill
5-80 ms into the DELETE the namespace came back Active, with part of its objects gone)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from process_harness import KubeloopProcess, free_port

from kubeloop.testing.polling import eventually_blocking

OBJECTS = 300


def serve(processes: list[KubeloopProcess], data_dir: Path, port: int) -> client.ApiClient:
    server = KubeloopProcess("server", "--data-dir", str(data_dir), "--port", str(port))
    processes.append(server)
    server.wait_for_line("listening")
    api: client.ApiClient = config.new_client_from_config(config_file=str(data_dir / "kubeconfig"))
    return api


def test_a_namespace_deletion_killed_mid_purge_resumes(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    data_dir, port = tmp_path / "data", free_port()
    with serve(processes, data_dir, port) as api:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "team"}})
        for index in range(OBJECTS):
            core.create_namespaced_config_map("team", {"metadata": {"name": f"cm-{index}"}})
        core.delete_namespace("team")  # acknowledged: from here the deletion must finish
    processes[0].signal(signal.SIGKILL, timeout=10)
    with serve(processes, data_dir, port) as api:
        core = client.CoreV1Api(api)
        try:
            phase = core.read_namespace("team").status.phase
        except ApiException as error:
            assert error.status == 404
        else:
            assert phase == "Terminating"
            with pytest.raises(ApiException) as refused:
                core.create_namespaced_config_map("team", {"metadata": {"name": "late"}})
            assert refused.value.status in (403, 404)

        def gone() -> bool:
            try:
                core.read_namespace("team")
            except ApiException as error:
                return error.status == 404
            return False

        eventually_blocking(gone, timeout=60, what="the namespace to finish deleting after the restart",
                            interval=0.1, retry_on=(Exception,))
        assert core.list_namespaced_config_map("team").items == []
