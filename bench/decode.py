"""Cost of typed decoding of a pod against its upstream schema, beside the JSON round trip and
validation of the same pod (not a test).

Run: ``.venv/bin/python bench/decode.py [--pods N]``. Prints microseconds per pod for each, measured
in one run on this machine, so the ratios hold even on a busy machine.
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

import orjson

from kubeloop.server.admission import default_object, validate_create
from kubeloop.server.kinds.decode import WARN, decode_object

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u",
                                      "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                             "resources": {"requests": {"cpu": "100m"}},
                             "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}],
             "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
             "securityContext": {}, "schedulerName": "default-scheduler",
             "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
    "status": {"phase": "Running",
               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}],
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "nginx", "imageID": "",
                                      "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]},
}


def per_pod(label: str, count: int, action: Any) -> float:
    pods = [copy.deepcopy(POD) for _ in range(count)]
    start = time.perf_counter()
    for pod in pods:
        action(pod)
    micros = (time.perf_counter() - start) / count * 1e6
    print(f"{label:<28} {micros:8.1f} us/pod")
    return micros


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    count = parser.parse_args().pods
    decode_object("", "v1", "Pod", copy.deepcopy(POD), WARN)  # load and compile the schema first
    decoded = per_pod("typed decoding", count, lambda pod: decode_object("", "v1", "Pod", pod, WARN))
    json = per_pod("orjson round trip", count, lambda pod: orjson.loads(orjson.dumps(pod)))

    def validate(pod: dict[str, Any]) -> None:
        default_object("", "v1", "Pod", pod)
        validate_create("", "v1", "Pod", pod, namespaced=True)

    validated = per_pod("defaulting + validation", count, validate)
    print(f"decoding / round trip = {decoded / json:.2f}x, decoding / validation = {decoded / validated:.2f}x")


if __name__ == "__main__":
    main()
