"""Template equality, new/old ReplicaSets and the pod-template-hash (upstream
``deployment/util/deployment_util.go`` ``EqualIgnoreHash``, ``FindNewReplicaSet``, ``FindOldReplicaSets``;
``controller_utils.go`` ``ComputeHash``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from deployment_builders import Obj, deployment, pod_template, replica_set

from kubeloop.controllers.deployment.templates import (
    POD_TEMPLATE_HASH,
    compute_hash,
    equal_ignore_hash,
    find_new_replica_set,
    find_old_replica_sets,
    fnv32a,
    quantity_value,
    safe_encode,
    template_for_rollback,
)


def _template(name: str, node: str, annotations: dict[str, str], labels: dict[str, str]) -> Obj:
    return {
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
    }


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1", "x": "y"}),
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1", "x": "y"}),
            True,
        ),
        (
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1", "x": "y"}),
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-2", "x": "y"}),
            True,
        ),
        (
            _template("foo", "n", {}, {"x": "y"}),
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-2", "x": "y"}),
            True,
        ),
        (
            _template("foo", "n", {}, {"something": "else"}),
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-2"}),
            False,
        ),
        (
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1"}),
            _template("foo", "n", {}, {"something": "else"}),
            False,
        ),
        (
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1"}),
            _template("foo", "n", {}, {POD_TEMPLATE_HASH: "value-1", "something": "else"}),
            False,
        ),
        (_template("foo", "n", {"former": "value"}, {}), _template("foo", "n", {"latter": "value"}, {}), False),
        (
            _template("foo-1", "n", {}, {POD_TEMPLATE_HASH: "1"}),
            _template("foo-2", "n", {}, {POD_TEMPLATE_HASH: "2"}),
            False,
        ),
        (
            _template("foo-1", "n1", {}, {"a": "b"}),
            _template("foo-2", "n2", {}, {POD_TEMPLATE_HASH: "2", "a": "b"}),
            False,
        ),
        (_template("foo", "n1", {}, {"something": "x"}), _template("foo", "n2", {}, {"nothing": "x"}), False),
    ],
)
def test_equal_ignore_hash(a: Obj, b: Obj, expected: bool) -> None:
    assert equal_ignore_hash(a, b) is expected
    assert equal_ignore_hash(b, a) is expected
    assert a["metadata"]["labels"] == dict(a["metadata"]["labels"])  # inputs untouched
    if POD_TEMPLATE_HASH in b["metadata"]["labels"]:
        assert POD_TEMPLATE_HASH in b["metadata"]["labels"]


def test_equality_is_semantic() -> None:
    bare = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    noisy = {
        "metadata": {"labels": {"a": "b"}, "annotations": {}, "creationTimestamp": None},
        "spec": {
            "containers": [{"name": "c", "image": "i", "env": [], "resources": {}}],
            "volumes": None,
        },
    }
    assert equal_ignore_hash(bare, noisy)
    cpu_a = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1000m", "memory": "1Gi"}}}]}}
    cpu_b = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1024Mi"}}}]}}
    cpu_c = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1024Mi"}}}]}}
    assert equal_ignore_hash(cpu_a, cpu_b)
    assert not equal_ignore_hash(cpu_a, cpu_c)
    # Outside quantity maps strings compare exactly.
    assert not equal_ignore_hash({"spec": {"hostname": "1000m"}}, {"spec": {"hostname": "1"}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", Decimal(1)),
        ("1000m", Decimal(1)),
        ("1Ki", Decimal(1024)),
        ("1.5G", Decimal(1500000000)),
        ("1e3", Decimal(1000)),
        ("abc", None),
        ("1Z", None),
    ],
)
def test_quantity_value(text: str, expected: Decimal | None) -> None:
    assert quantity_value(text) == expected


NOW = datetime(2020, 1, 1, tzinfo=UTC)


def _with_template(name: str, template: Obj, created: datetime, replicas: int = 1) -> Obj:
    return replica_set(name, replicas, created=created, template=template)


def test_find_new_replica_set_prefers_the_oldest_match() -> None:
    d = deployment(1)
    hashed = pod_template({"foo": "bar", POD_TEMPLATE_HASH: "hash"})
    new = _with_template("new", hashed, NOW + timedelta(minutes=1))
    duplicate = _with_template("dup", pod_template({"foo": "bar", POD_TEMPLATE_HASH: "different-hash"}), NOW)
    old = _with_template("old", pod_template(container="other"), NOW - timedelta(minutes=1))
    assert find_new_replica_set(d, [new, old]) is new
    assert find_new_replica_set(d, [new, old, duplicate]) is duplicate
    assert find_new_replica_set(d, [old]) is None


def test_find_old_replica_sets() -> None:
    d = deployment(1)
    new = _with_template("new", pod_template({"foo": "bar", POD_TEMPLATE_HASH: "hash"}), NOW + timedelta(minutes=1))
    duplicate = _with_template("dup", pod_template({"foo": "bar", POD_TEMPLATE_HASH: "x"}), NOW)
    old = _with_template("old", pod_template(container="other"), NOW - timedelta(minutes=1), replicas=0)
    assert find_old_replica_sets(d, [new, old]) == ([], [old])
    assert find_old_replica_sets(d, [old]) == ([], [old])
    assert find_old_replica_sets(d, [old, new, duplicate]) == ([new], [old, new])
    assert find_old_replica_sets(d, [new]) == ([], [])


def test_hash_distinguishes_many_templates() -> None:
    hashes = {compute_hash(pod_template(image=f"image-{i}"), None) for i in range(1000)}
    assert len(hashes) == 1000


def test_hash_is_stable_and_depends_on_template_and_collision_count() -> None:
    template = pod_template({"a": "1", "b": "2"})
    reordered = pod_template({"b": "2", "a": "1"})
    assert compute_hash(template, None) == compute_hash(reordered, None)
    assert compute_hash(template, 1) == compute_hash(pod_template({"a": "1", "b": "2"}), 1)
    assert compute_hash({}, 1) != compute_hash({}, 2)
    assert compute_hash({}, None) != compute_hash({}, 2**31 - 1)
    assert compute_hash(template, None) != compute_hash(pod_template({"a": "1", "b": "3"}), None)
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", compute_hash(template, 7))


def test_fnv32a_and_safe_encoding() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C  # published FNV-1a test vector
    assert safe_encode("0123456789") == "456789bcdf"
    assert safe_encode("48") == "8d"


def test_template_for_rollback_drops_the_hash_label() -> None:
    rs = replica_set("rs", 1, template=pod_template({"foo": "bar", POD_TEMPLATE_HASH: "abc"}))
    template = template_for_rollback(rs)
    assert template["metadata"]["labels"] == {"foo": "bar"}
    assert rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH] == "abc"
