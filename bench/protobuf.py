"""Cost of the protobuf codec beside JSON: one pod, and a PodList of 5,000 pods (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/protobuf.py [--pods 5000] [--repeat 5]``.

Per pod and per list, the best of ``--repeat`` rounds (process CPU time, the garbage collector
off while an action runs, as ``timeit`` does), the actions taking turns within each round (so
the ratios hold on a busy machine), of:

- encoding a response: ``orjson.dumps`` (what the server writes for JSON) beside
  :func:`kubeloop.server.codec.protobuf.encode` (magic, envelope, and the message written by the
  generated writer), the first time an object is written and again (the codec keeps recently
  written bodies by the object's JSON text), and beside the pinned ``protobuf`` library's
  writing (:func:`kubeloop.server.codec.protobuf_library.encode_message`), which the codec used
  before;
- decoding a request body: ``orjson.loads`` plus the server's typed decoding
  (:func:`kubeloop.server.kinds.decode.decode_object`) beside
  :func:`kubeloop.server.codec.protobuf.decode` (the codec's own reader) of the bytes a Go client
  sends for the same object (every non-pointer field written, as Go's marshaller does), with
  and without a typed decoding pass after it (which a protobuf body does not need: the tests
  show it changes nothing), and beside the library's parser plus conversion back to a dict
  (:func:`kubeloop.server.codec.protobuf_library.decode_message`), the alternative
  docs/decisions.md weighs;
- per request, the codec's share: a create (decode the body, encode the answer the first time)
  and a get (encode an object written before).

The pod is a running, scheduled pod as the server stores it: owner reference, one container
with ports, resources, probes and mounts, tolerations, conditions and a container status.
"""

from __future__ import annotations

import argparse
import copy
import gc
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


def interleaved(repeat: int, actions: dict[str, tuple[Callable[[], Any], bool]]) -> dict[str, float]:
    """The fastest of ``repeat`` runs of each action, in seconds of this process's CPU, the
    actions taking turns within each round so that a change of the machine's load falls on all
    of them alike; an action marked cold starts with an empty cache of written messages."""
    found = dict.fromkeys(actions, float("inf"))
    for _ in range(repeat):
        for label, (action, cold) in actions.items():
            if cold:
                protobuf.clear_cache()
            # As timeit does: the collector's passes over this script's own thousands of pods
            # would fall on whichever action happens to run then.
            gc.collect()
            gc.disable()
            start = time.process_time()
            action()
            found[label] = min(found[label], time.process_time() - start)
            gc.enable()
    return found


def row(label: str, seconds: float, per: int, unit: str) -> None:
    print(f"{label:<58} {seconds / per * 1e6:10.1f} us/{unit}")


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
    json_list = orjson.dumps(pod_list)
    proto_list = protobuf.encode(pod_list)
    print(f"one pod: JSON {len(json_bodies[0])} bytes, protobuf {len(proto_bodies[0])} bytes; "
          f"list of {count}: JSON {len(json_list)} bytes, protobuf {len(proto_list)} bytes")

    def json_decode() -> None:
        for body in json_bodies:
            decode_object("", "v1", "Pod", orjson.loads(body), WARN)

    def proto_decode_typed() -> None:
        for body in proto_bodies:
            decode_object("", "v1", "Pod", protobuf.decode(body), WARN)

    per_pod: dict[str, tuple[Callable[[], Any], bool]] = {
        "encode  JSON (orjson.dumps)": (lambda: [orjson.dumps(pod) for pod in pods], False),
        "encode  protobuf, first time (codec.protobuf.encode)": (lambda: [protobuf.encode(pod) for pod in pods], True),
        "encode  protobuf, again (codec.protobuf.encode)": (lambda: [protobuf.encode(pod) for pod in pods], False),
        "encode  protobuf, the library (for comparison)":
            (lambda: [protobuf_library.encode_message(pod, name) for pod in pods], False),
        "decode  JSON (orjson.loads + typed decoding)": (json_decode, False),
        "decode  protobuf (codec.protobuf.decode)": (lambda: [protobuf.decode(body) for body in proto_bodies], False),
        "decode  protobuf + typed decoding (not needed)": (proto_decode_typed, False),
        "decode  protobuf, library parse + convert (for comparison)":
            (lambda: [protobuf_library.decode_message(raw, name) for raw in raw_messages], False),
    }
    print(f"\nper pod (best of {repeat} rounds over {count} pods, actions interleaved)")
    found = interleaved(repeat, per_pod)
    for label, seconds in found.items():
        row(label, seconds, count, "pod")
    labels = list(found)
    print("\nper request, codec only")
    row("create  JSON (decode + encode)", found[labels[4]] + found[labels[0]], count, "request")
    row("create  protobuf (decode + encode first time)", found[labels[5]] + found[labels[1]], count, "request")
    row("get     JSON (encode)", found[labels[0]], count, "request")
    row("get     protobuf (encode again)", found[labels[2]], count, "request")

    per_list: dict[str, tuple[Callable[[], Any], bool]] = {
        "encode  JSON": (lambda: orjson.dumps(pod_list), False),
        "encode  protobuf, first time": (lambda: protobuf.encode(pod_list), True),
        "encode  protobuf, again": (lambda: protobuf.encode(pod_list), False),
        "decode  JSON (orjson.loads + typed decoding)":
            (lambda: decode_object("", "v1", "PodList", orjson.loads(json_list), WARN), False),
        "decode  protobuf": (lambda: protobuf.decode(proto_list), False),
    }
    print(f"\nper list of {count} pods (best of {repeat} rounds, interleaved)")
    for label, seconds in interleaved(repeat, per_list).items():
        row(label, seconds, 1, "list")


if __name__ == "__main__":
    main()
