"""Cost of the protobuf codec beside JSON: one pod, and a PodList of 5,000 pods (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/protobuf.py [--pods 5000] [--repeat 5]``.

Per pod and per list, in one run (so the ratios hold on a busy machine), the best of
``--repeat`` timings (process CPU time) of:

- encoding a response: ``orjson.dumps`` (what the server writes for JSON) beside
  :func:`kubeloop.server.codec.protobuf.encode` (magic, envelope, and the message written by the
  pinned ``protobuf`` library), the first time an object is written and again (the codec keeps
  recently written messages by the object's JSON text);
- decoding a request body: ``orjson.loads`` plus the server's typed decoding
  (:func:`kubeloop.server.kinds.decode.decode_object`) beside
  :func:`kubeloop.server.codec.protobuf.decode` (the codec's own reader) of the bytes a Go client
  sends for the same object (every non-pointer field written, as Go's marshaller does), and
  beside the library's parser plus conversion back to a dict
  (:func:`kubeloop.server.codec.protobuf_library.decode_message`), the alternative
  docs/decisions.md weighs.

The pod is a running, scheduled pod as the server stores it: owner reference, one container
with ports, resources, probes and mounts, tolerations, conditions and a container status.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from typing import Any

import orjson

from kubeloop.server.codec import protobuf, protobuf_library
from kubeloop.server.kinds import wire
from kubeloop.server.kinds.decode import WARN, decode_object

_TIME = "2026-11-27T10:00:00Z"

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
        "name": "web-7f9c9d5b8-abcde", "generateName": "web-7f9c9d5b8-", "namespace": "default",
        "uid": "0b7c6f3e-5b5e-4c1c-9d5a-1a2b3c4d5e6f", "resourceVersion": "123456", "creationTimestamp": _TIME,
        "labels": {"app": "web", "pod-template-hash": "7f9c9d5b8"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7f9c9d5b8",
                             "uid": "1b7c6f3e-5b5e-4c1c-9d5a-1a2b3c4d5e6f", "controller": True,
                             "blockOwnerDeletion": True}]},
    "spec": {
        "containers": [{
            "name": "nginx", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}},
            "readinessProbe": {"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "periodSeconds": 10,
                               "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                              "readOnly": True}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "nodeName": "node-1", "securityContext": {},
        "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}]},
    "status": {
        "phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}],
        "startTime": _TIME, "qosClass": "Burstable",
        "conditions": [{"type": t, "status": "True", "lastTransitionTime": _TIME}
                       for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "containerStatuses": [{"name": "nginx", "ready": True, "started": True, "restartCount": 0,
                               "image": "nginx:1.25", "imageID": "docker.io/library/nginx@sha256:0123",
                               "containerID": "containerd://0123", "state": {"running": {"startedAt": _TIME}}}]},
}


def best(repeat: int, action: Callable[[], Any], cold: bool = False) -> float:
    """The fastest of ``repeat`` runs, in seconds of this process's CPU; ``cold`` empties the
    codec's cache of written messages before each run."""
    times = []
    for _ in range(repeat):
        if cold:
            protobuf.clear_cache()
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def row(label: str, seconds: float, per: int, unit: str) -> None:
    print(f"{label:<46} {seconds / per * 1e6:10.1f} us/{unit}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    count, repeat = args.pods, args.repeat
    name = wire.message_name("v1", "Pod")
    assert name is not None
    pods = [copy.deepcopy(POD) for _ in range(count)]
    for index, pod in enumerate(pods):
        pod["metadata"]["name"] = f"web-7f9c9d5b8-{index:05d}"
        pod["status"]["podIP"] = f"10.244.{index // 250}.{index % 250}"
    items = [{k: v for k, v in pod.items() if k not in ("apiVersion", "kind")} for pod in pods]
    pod_list = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "123456"}, "items": items}

    json_bodies = [orjson.dumps(pod) for pod in pods]
    proto_bodies = [protobuf.encode(pod) for pod in pods]
    raw_messages = [protobuf.encode_message(pod, "v1", "Pod") for pod in pods]
    print(f"one pod: JSON {len(json_bodies[0])} bytes, protobuf {len(proto_bodies[0])} bytes; "
          f"list of {count}: JSON {len(orjson.dumps(pod_list))} bytes, protobuf {len(protobuf.encode(pod_list))} bytes")

    def json_decode() -> None:
        for body in json_bodies:
            decode_object("", "v1", "Pod", orjson.loads(body), WARN)

    print(f"\nper pod (best of {repeat} runs over {count} pods)")
    row("encode  JSON (orjson.dumps)", best(repeat, lambda: [orjson.dumps(pod) for pod in pods]), count, "pod")
    row("encode  protobuf, first time (codec.protobuf)",
        best(repeat, lambda: [protobuf.encode(pod) for pod in pods], cold=True), count, "pod")
    row("encode  protobuf, again (codec.protobuf)", best(repeat, lambda: [protobuf.encode(pod) for pod in pods]),
        count, "pod")
    row("decode  JSON (orjson.loads + typed decoding)", best(repeat, json_decode), count, "pod")
    row("decode  protobuf (codec.protobuf.decode)",
        best(repeat, lambda: [protobuf.decode(body) for body in proto_bodies]), count, "pod")
    row("decode  protobuf (library parse + convert)",
        best(repeat, lambda: [protobuf_library.decode_message(raw, name) for raw in raw_messages]), count, "pod")

    json_list = orjson.dumps(pod_list)
    proto_list = protobuf.encode(pod_list)
    print(f"\nper list of {count} pods (best of {repeat})")
    row("encode  JSON", best(repeat, lambda: orjson.dumps(pod_list)), 1, "list")
    row("encode  protobuf, first time", best(repeat, lambda: protobuf.encode(pod_list), cold=True), 1, "list")
    row("encode  protobuf, again", best(repeat, lambda: protobuf.encode(pod_list)), 1, "list")
    row("decode  JSON (orjson.loads + typed decoding)",
        best(repeat, lambda: decode_object("", "v1", "PodList", orjson.loads(json_list), WARN)), 1, "list")
    row("decode  protobuf", best(repeat, lambda: protobuf.decode(proto_list)), 1, "list")


if __name__ == "__main__":
    main()
