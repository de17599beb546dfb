"""The C protobuf writer writes the generated Python writers' bytes, and serves by default here.

For every kind the server serves, random objects drawn from the kind's schema (as
test_protobuf_kinds draws them: non-ASCII text and map keys, negative and 64-bit integers,
int-or-strings both ways, quantities, raw JSON, times) are written by both writers, as drawn
(before typed decoding: odder values), with some values replaced by ``None``, and after typed
decoding; the bytes must be the same, or both writers must refuse the value. Table cases pin the
edges (lengths over 127 and 16,383 bytes, mappings that are not dicts, iterables that are not
lists) and the errors.
"""

from __future__ import annotations

import copy
import random
import types
from collections import UserDict
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeloop.server.codec import protobuf, protobuf_native, protobuf_writer
from kubeloop.server.kinds import wire
from kubeloop.server.kinds.decode import IGNORE, decode_object
from tests.unit.server.codec.test_protobuf_kinds import KINDS, _message_schema, _schema_strategy

_POD = "io.k8s.api.core.v1.Pod"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
_PROPS = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"


def _outcome(write: Callable[[Any, str], bytes], obj: Any, name: str) -> bytes | type[BaseException]:
    try:
        return write(obj, name)
    except (TypeError, AttributeError, ValueError, OverflowError) as error:
        return type(error)


def _same(obj: Any, name: str) -> None:
    """Both writers give the same bytes, or both refuse ``obj``."""
    python = _outcome(protobuf_writer.python_encode_message, obj, name)
    native = _outcome(protobuf_native.encode_message, obj, name)
    if isinstance(python, bytes):
        assert native == python
    else:
        assert not isinstance(native, bytes), f"Python refused with {python.__name__}, C wrote {native!r}"


def _nulled(value: Any, rng: random.Random) -> Any:
    """``value`` with about a fifth of its dicts' values (at any depth) made ``None``."""
    if isinstance(value, dict):
        return {key: None if rng.random() < 0.2 else _nulled(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [_nulled(item, rng) for item in value]
    return value


@pytest.mark.parametrize(("api_version", "kind"), KINDS, ids=[f"{a}/{k}" for a, k in KINDS])
def test_native_writes_the_python_writers_bytes(api_version: str, kind: str) -> None:
    name = wire.message_name(api_version, kind)
    assert name is not None
    group, _, version = api_version.rpartition("/")

    @settings(max_examples=6, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_schema_strategy(_message_schema(name), 0), st.randoms(use_true_random=False))
    def same(drawn: dict[str, Any], rng: random.Random) -> None:
        _same(drawn, name)
        _same(_nulled(drawn, rng), name)
        typed = copy.deepcopy(drawn)
        decode_object(group, version, kind, typed, IGNORE)
        _same(typed, name)

    same()


def _pod(**meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", **meta},
            "spec": {"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}]}}


class _Mapping(UserDict[str, Any]):
    """A Mapping that is not a dict: read through ``get``."""


class _Dict(dict[str, Any]):
    """A dict subclass whose ``get`` the writers must use."""

    def get(self, key: str, default: Any = None) -> Any:
        return "overridden" if key == "name" else super().get(key, default)


def _labels(n: int) -> dict[str, str]:
    return {f"k{i}": "v" * i for i in range(n)}


_EQUAL_CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "non-ASCII and empty map keys": (lambda: _pod(labels={"é": "1", "": "2", "z": "3", "\U0001f600": "4", "a": "é"}),
                                     _POD),
    "negative ints (ten bytes)": (lambda: {"generation": -1, "deletionGracePeriodSeconds": -(2**63)}, _META),
    "uint64 beyond int64": (lambda: {"spec": {"securityContext": {"runAsUser": 2**64 - 1}}}, _POD),
    "bool in an int field": (lambda: {"generation": True}, _META),
    "int and string int-or-strings": (lambda: {"spec": {"containers": [{"name": "c", "livenessProbe": {
        "httpGet": {"port": 8080}, "tcpSocket": {"port": "http"}}}]}}, _POD),
    "quantities as str, int and float": (lambda: {"spec": {"containers": [{"name": "c", "resources": {
        "limits": {"cpu": "100m", "memory": 5, "x": 1.5}}}]}}, _POD),
    "raw JSON and times": (lambda: _pod(managedFields=[{"manager": "m", "fieldsV1": {"f:a": {"é": [1, None]}},
                                                        "time": "2024-05-06T07:08:09Z"}],
                                        creationTimestamp="1970-01-01T00:00:00Z"), _POD),
    "None and absent fields": (lambda: {"metadata": None, "spec": {"containers": None, "nodeName": None}}, _POD),
    "a long message (two-byte length)": (lambda: _pod(labels=_labels(40)), _POD),
    "a longer message (three-byte length)": (lambda: _pod(annotations={"a": "x" * 20_000}), _POD),
    "a Mapping that is not a dict": (lambda: {"metadata": _Mapping(name="m", labels=_Mapping(a="b"))}, _POD),
    "a dict subclass read through its get": (lambda: {"metadata": _Dict(name="n", namespace="ns")}, _POD),
    "a mapping proxy": (lambda: {"metadata": types.MappingProxyType({"name": "x"})}, _POD),
    "a list where a message goes (written as {})": (lambda: {"metadata": ["x"], "spec": "y"}, _POD),
    "a tuple and a generator as repeated fields": (lambda: {"spec": {
        "containers": ({"name": "a"}, {"name": "b"}), "imagePullSecrets": ({"name": str(i)} for i in range(3))}},
        _POD),
    "bytes fields (base64)": (lambda: {"data": {"a": "aGVsbG8=", "b": ""}, "metadata": {"name": "s"}},
                              "io.k8s.api.core.v1.Secret"),
    "doubles from floats, ints and text": (lambda: {"maximum": 1.5, "minimum": -3, "multipleOf": "2.5"}, _PROPS),
    "JSONSchemaProps unions (Python writers called back)": (lambda: {"spec": {"versions": [{"name": "v1", "schema": {
        "openAPIV3Schema": {"type": "object", "additionalProperties": False, "items": [{"type": "string"}],
                            "dependencies": {"a": ["b"], "c": {"type": "integer"}}, "properties": {
                                "x": {"type": "string", "enum": ["a", 1], "default": {"k": "v"}}}}}}]}}, _CRD),
    "an empty object": (lambda: {}, _POD),
}


@pytest.mark.parametrize("case", list(_EQUAL_CASES))
def test_native_bytes_equal_python_bytes(case: str) -> None:
    make, name = _EQUAL_CASES[case]
    assert protobuf_native.encode_message(make(), name) == protobuf_writer.python_encode_message(make(), name)


def test_length_prefixes_of_every_size_are_read_back() -> None:
    """Nested lengths of one, two and three bytes, and the whole body's, through the reader."""
    for size in (0, 100, 127, 128, 16_383, 16_384, 70_000):
        pod = {"apiVersion": "v1", "kind": "Pod", **_pod(annotations={"a": "x" * size})}
        body = protobuf_writer.encode_delimited(b"head", pod, _POD, b"tail")
        python = bytearray(b"head")
        start = len(python)
        protobuf_writer.python_writer(_POD)(pod, python)
        python[start:start] = protobuf_writer.varint(len(python) - start)
        assert body == bytes(python) + b"tail"
        assert protobuf.decode(protobuf.encode(pod))["metadata"]["annotations"] == {"a": "x" * size}


def test_write_into_appends() -> None:
    out = bytearray(b"before")
    protobuf_native.writer(_META)({"name": "n"}, out)
    assert out == b"before" + protobuf_writer.python_encode_message({"name": "n"}, _META)


_ERROR_CASES: dict[str, tuple[Any, str, type[BaseException]]] = {
    "an int in a string field": ({"name": 5}, _META, TypeError),
    "bytes in a string field": ({"name": b"x"}, _META, TypeError),
    "a non-str map value": ({"labels": {"a": 1}}, _META, TypeError),
    "a non-str map key": ({"labels": {1: "a"}}, _META, TypeError),
    "None in a repeated string field": ({"finalizers": ["a", None]}, _META, TypeError),
    "a float in an int field": ({"generation": 1.0}, _META, TypeError),
    "a str in an int field": ({"generation": "1"}, _META, TypeError),
    "a non-iterable repeated field": ({"finalizers": 3}, _META, TypeError),
    "a list in a double field": ({"maximum": [1]}, _PROPS, TypeError),
    "text that is no number in a double field": ({"maximum": "x"}, _PROPS, ValueError),
    "bad base64 padding": ({"data": {"a": "abc"}}, "io.k8s.api.core.v1.Secret", ValueError),
}


@pytest.mark.parametrize("case", list(_ERROR_CASES))
def test_native_refuses_what_python_refuses(case: str) -> None:
    obj, name, error = _ERROR_CASES[case]
    with pytest.raises(error):
        protobuf_native.encode_message(obj, name)
    with pytest.raises((TypeError, AttributeError, ValueError, OverflowError)):
        protobuf_writer.python_encode_message(obj, name)


def test_an_int_past_uint64_is_refused() -> None:
    """Where the two differ: the Python writer writes 2**64 as a varint Go's reader refuses
    (overflow); the C writer refuses to write it."""
    with pytest.raises(OverflowError):
        protobuf_native.encode_message({"generation": 2**64}, _META)
    with pytest.raises(OverflowError):
        protobuf_native.encode_message({"generation": -(2**63) - 1}, _META)


def test_deep_nesting_raises_recursion_error() -> None:
    props: dict[str, Any] = {}
    for _ in range(20_000):
        props = {"properties": {"p": props}}
    with pytest.raises(RecursionError):
        protobuf_native.encode_message(props, _PROPS)


def test_default_writer_is_native_on_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension is built by the install (pip install -e, as scripts/test does), so the
    default serves with it: a build that silently stops working fails here."""
    monkeypatch.delenv(protobuf_native.ENV_VAR, raising=False)
    assert protobuf_native.available()
    assert protobuf_native.resolve(protobuf_native.mode(), protobuf_native.available()) is True


# --- kube's special types written in C, and their fallback to the Python specials ------------------

_LEASE = "io.k8s.api.coordination.v1.Lease"


class _Str(str):
    """A str subclass: the C fast paths leave it to the Python specials."""


class _Encoded(str):
    """A str subclass whose ``encode`` the Python specials call: only they write it right."""

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return b"encoded"


_TIMES = [
    "2024-05-06T07:08:09Z", "2024-05-06t07:08:09z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
    "2024-02-29T12:00:00.5Z", "2024-05-06T07:08:09.123456789Z", "2024-05-06T07:08:09.1234567891234Z",
    "2024-05-06T07:08:09.000000999Z", "2024-05-06T07:08:09.000001Z", "2024-05-06T07:08:09+05:30",
    "2024-05-06T07:08:09.25-08:00", "2024-05-06T07:08:09-00:00", "9999-12-31T23:59:59.999999999-23:59",
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000999Z", "0001-01-01T00:00:00.000001Z",
    "0001-01-01T05:30:00+05:30", "2000-03-01T00:00:00Z", "1900-03-01T00:00:00Z", "2100-12-31T00:00:00Z",
    # lenient as calendar.timegm is: two-digit days, hours, minutes, seconds add up
    "2024-01-00T99:99:99Z", "2023-02-31T24:60:60Z",
    # read by the Python special only (the C path hands them over): a final newline, non-ASCII
    # digits, a str subclass
    "2024-05-06T07:08:09Z\n", "\uff12\uff10\uff12\uff14-05-06T07:08:09Z", _Str("2024-05-06T07:08:09Z"),
    # refused by both
    "0000-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-05-06T07:08:09",
    "2024-05-06T07:08:09.Z", "2024-05-06 07:08:09Z", "2024-05-06T07:08:09+0530", "2024-05-06T07:08:09Zx",
    "2024-5-06T07:08:09Z", "", "\ud800", 5, None,
]


@pytest.mark.parametrize("text", _TIMES, ids=repr)
def test_times_in_c_as_the_python_special(text: Any) -> None:
    _same({"creationTimestamp": text, "deletionTimestamp": text}, _META)  # metav1.Time
    _same({"spec": {"acquireTime": text, "renewTime": text}}, _LEASE)  # metav1.MicroTime


_INT_OR_STRINGS = [0, 1, 127, 128, -1, 2**31, 2**63 - 1, -(2**63), 2**63, 2**64 + 5, -(2**63) - 1, True, False,
                   "", "http", "é\U0001f600", "x" * 200, _Str("http"), _Encoded("http"), "\ud800", 1.5, None,
                   [1]]


@pytest.mark.parametrize("value", _INT_OR_STRINGS, ids=repr)
def test_int_or_strings_in_c_as_the_python_special(value: Any) -> None:
    _same({"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": value}}}]}}, _POD)


_QUANTITIES = ["100m", "", "1Gi", "é", "x" * 200, _Str("5"), _Encoded("5"), 5, 1.5, True, -(2**70), "\ud800", None, [1]]


@pytest.mark.parametrize("value", _QUANTITIES, ids=repr)
def test_quantities_in_c_as_the_python_special(value: Any) -> None:
    _same({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": value}}}]}}, _POD)


@pytest.mark.parametrize(("special", "obj", "name", "fast"), [
    ("_time", {"creationTimestamp": "2031-01-02T03:04:05Z"}, _META, True),
    ("_time", {"creationTimestamp": "2031-01-02T03:04:05Z\n"}, _META, False),
    ("_time", {"creationTimestamp": _Str("2031-01-02T03:04:06Z")}, _META, False),
    ("_microtime", {"spec": {"renewTime": "2031-01-02T03:04:05.123456Z"}}, _LEASE, True),
    ("_microtime", {"spec": {"renewTime": "\uff12\uff10\uff13\uff11-01-02T03:04:05.123456Z"}}, _LEASE, False),
    ("_intstr", {"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": 31_337}}}]}}, _POD, True),
    ("_intstr", {"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": "p31"}}}]}}, _POD, True),
    ("_intstr", {"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": True}}}]}}, _POD, False),
    ("_quantity", {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "313m"}}}]}}, _POD, True),
    ("_quantity", {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 313}}}]}}, _POD, False),
], ids=lambda value: repr(value)[:40])
def test_usual_values_do_not_call_python(special: str, obj: dict[str, Any], name: str, fast: bool) -> None:
    """The fast paths are taken for the usual values (the Python special, an lru cache, sees no
    call) and the Python special for the rest: a fast path silently never taken fails here."""
    function = getattr(protobuf_writer, special)
    function.cache_clear()
    protobuf_native.encode_message(obj, name)
    info = function.cache_info()
    assert (info.hits + info.misses == 0) is fast
