"""The memos of nested messages (kubeloop.server.codec.protobuf_memo): a hit answers exactly what
the reader or writer would, each read gets a dict of its own, and values JSON would not carry
exactly bypass the memo."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.server.codec import protobuf, protobuf_library, protobuf_memo, protobuf_writer
from kubeloop.server.kinds import wire

_SPEC = "io.k8s.api.core.v1.PodSpec"


def _pod(name: str, image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m"}}}],
                     "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 300}]}}


def test_the_memoized_messages() -> None:
    assert protobuf_memo.memoized(_SPEC)
    assert protobuf_memo.memoized("io.k8s.api.core.v1.Container")
    assert not protobuf_memo.memoized(wire.META + "v1.ObjectMeta")  # never recurs
    assert not protobuf_memo.memoized("io.k8s.api.core.v1.LocalObjectReference")  # too small to gain
    # Its numbers are doubles: a JSON round trip would not give a NaN back.
    assert not protobuf_memo.memoized("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")


def test_a_read_hit_is_the_readers_answer_in_a_dict_of_its_own() -> None:
    calls: list[bytes] = []

    def read(data: bytes, position: int, end: int) -> Any:
        calls.append(data[position:end])
        return {"text": data[position:end].decode(), "items": [{"n": 1}]}

    memo = protobuf_memo.memo_reader(read)
    first = memo(b"..abc..", 2, 5)
    first["items"][0]["n"] = 2  # what a handler's defaulting does to what it got
    again = memo(b"xabc", 1, 4)
    assert again == {"text": "abc", "items": [{"n": 1}]}
    assert calls == [b"abc"]
    assert memo(b"abd", 0, 3)["text"] == "abd"
    assert calls == [b"abc", b"abd"]


def test_a_write_hit_is_the_writers_bytes_for_the_same_json_text() -> None:
    calls: list[Any] = []

    def write(value: Any, out: bytearray) -> None:
        calls.append(value)
        out += repr(value).encode()

    class Text(str):
        pass

    written = protobuf_memo.memo_writer(lambda: write, protobuf_writer.varint)
    assert written({"a": 1}) == b"\x08{'a': 1}"
    assert written({"a": 1}) == b"\x08{'a': 1}"
    assert len(calls) == 1
    # 1, 1.0 and True are written differently, and have different JSON texts.
    assert [written({"a": value}) for value in (1.0, True)] == [b"\x0a{'a': 1.0}", b"\x0b{'a': True}"]
    assert len(calls) == 3
    # A str subclass is not JSON's to name: written every time.
    written({"a": Text("x")})
    written({"a": Text("x")})
    assert len(calls) == 5


def test_pods_of_one_template_read_and_write_as_without_the_memos() -> None:
    protobuf.clear_cache()
    pods = [_pod("a", "nginx:1"), _pod("b", "nginx:1"), _pod("c", "nginx:2")]
    bodies = [protobuf.encode(pod) for pod in pods]
    name = wire.message_name("v1", "Pod")
    assert name is not None
    for pod, body in zip(pods, bodies, strict=True):
        raw = protobuf.encode_message(pod, "v1", "Pod")
        assert protobuf_library.reserialize(raw, name) == protobuf_library.encode_message(pod, name)
        assert body.endswith(raw + b"\x1a\x00\x22\x00")
    decoded = [protobuf.decode(body) for body in bodies]
    assert decoded[0]["spec"] == decoded[1]["spec"] != decoded[2]["spec"]
    assert decoded[2]["spec"]["containers"][0]["image"] == "nginx:2"
    decoded[0]["spec"]["containers"][0]["image"] = "changed"
    assert protobuf.decode(bodies[1])["spec"]["containers"][0]["image"] == "nginx:1"
    # A spec changed in place after it was written is written anew.
    changed = copy.deepcopy(pods[1])
    changed["spec"]["containers"][0]["image"] = "nginx:3"
    assert protobuf.decode(protobuf.encode(changed))["spec"]["containers"][0]["image"] == "nginx:3"
