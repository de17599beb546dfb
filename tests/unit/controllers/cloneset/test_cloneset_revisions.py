"""ControllerRevision content, hash, selection and history (kruise
``revision/cloneset_revision.go``, ``cloneset_revision_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from cloneset_pods import make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.revisions import (
    SAFE_ALPHABET,
    active_revisions,
    apply_revision,
    canonical_json,
    fnv1_32,
    hash_revision_data,
    live_revision_names,
    new_revision,
    revision_data,
    revisions_to_delete,
    safe_encode,
    sort_revisions,
    template_from_revision,
)


def _with_image(image: str) -> dict[str, Any]:
    cs = make_cloneset(2, name="foo")
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return cs


def test_fnv1_is_not_fnv1a() -> None:
    assert fnv1_32(b"") == 0x811C9DC5
    assert fnv1_32(b"a") == 0x050C5D7E
    assert fnv1_32(b"foobar") == 0x31F0B262


def test_safe_encoding_and_hash_alphabet() -> None:
    assert safe_encode("0123456789") == "456789bcdf"
    value = hash_revision_data(b"data", 0)
    assert set(value) <= set(SAFE_ALPHABET)
    assert hash_revision_data(b"data", 0) == value
    assert hash_revision_data(b"data", 1) != value
    assert hash_revision_data(b"data", None) != value


def test_revision_content() -> None:
    cs = _with_image("nginx:1.9.1")
    cs["metadata"]["annotations"] = {"note": "x"}
    revision = new_revision(cs, 3, 0)
    assert canonical_json(revision["data"]).startswith(b'{"spec":{"template":{"$patch":"replace","metadata"')
    assert revision["revision"] == 3
    name = revision["metadata"]["name"]
    revision_hash = name.removeprefix("foo-")
    assert revision["metadata"]["labels"] == {"app": "foo", kruise.REVISION_HASH_LABEL: revision_hash}
    assert revision["metadata"]["annotations"] == {"note": "x", kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION: ""}
    assert revision["metadata"]["ownerReferences"][0]["controller"] is True
    assert new_revision(_with_image("nginx:1.9.1"), 7, 0)["metadata"]["name"] == name
    assert new_revision(_with_image("nginx:1.9.2"), 3, 0)["metadata"]["name"] != name


def test_only_the_template_is_versioned() -> None:
    cs = _with_image("a")
    other = _with_image("a")
    other["spec"]["replicas"] = 9
    other["spec"]["updateStrategy"]["partition"] = 3
    assert revision_data(cs) == revision_data(other)


def test_key_order_does_not_change_the_name() -> None:
    cs = _with_image("a")
    reordered = _with_image("a")
    container = reordered["spec"]["template"]["spec"]["containers"][0]
    reordered["spec"]["template"]["spec"]["containers"][0] = dict(reversed(list(container.items())))
    assert new_revision(cs, 1, 0)["metadata"]["name"] == new_revision(reordered, 1, 0)["metadata"]["name"]


def test_apply_revision_restores_the_template() -> None:
    revision = new_revision(_with_image("a"), 1, 0)
    modified = _with_image("b")
    restored = apply_revision(modified, revision)
    assert template_from_revision(revision) == restored["spec"]["template"]
    assert new_revision(restored, 1, 0)["data"] == revision["data"]
    assert modified["spec"]["template"]["spec"]["containers"][0]["image"] == "b"


def test_volume_claim_templates_hash() -> None:
    cs = _with_image("a")
    cs["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {}}]
    assert new_revision(cs, 1, 0)["metadata"]["annotations"][kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION] != ""


def _existing(image: str, number: int) -> dict[str, Any]:
    return new_revision(_with_image(image), number, 0)


def test_active_revisions_reuse_create_and_bump() -> None:
    rev_a, rev_b = _existing("a", 1), _existing("b", 2)
    newest = active_revisions(_with_image("b"), [rev_a, rev_b])
    assert (newest.action, newest.update_revision["metadata"]["name"]) == ("none", rev_b["metadata"]["name"])
    rolled_back = active_revisions(_with_image("a"), [rev_a, rev_b])
    assert rolled_back.action == "bump"
    assert rolled_back.update_revision["metadata"]["name"] == rev_a["metadata"]["name"]
    assert rolled_back.update_revision["revision"] == 3
    assert rev_a["revision"] == 1
    fresh = active_revisions(_with_image("c"), [rev_a, rev_b])
    assert fresh.action == "create"
    assert fresh.update_revision["revision"] == 3
    empty = active_revisions(_with_image("c"), [])
    assert (empty.action, empty.update_revision["revision"]) == ("create", 1)


def test_current_revision_comes_from_status() -> None:
    rev_a, rev_b = _existing("a", 1), _existing("b", 2)
    cs = _with_image("b")
    assert active_revisions(cs, [rev_a, rev_b]).current_revision is rev_b
    cs["status"] = {"currentRevision": rev_a["metadata"]["name"], "collisionCount": 0}
    assert active_revisions(cs, [rev_a, rev_b]).current_revision is rev_a
    cs["status"]["currentRevision"] = "gone"
    assert active_revisions(cs, [rev_a, rev_b]).current_revision is rev_b


def test_collision_count_changes_the_name() -> None:
    cs = _with_image("z")
    first = active_revisions(cs, [])
    second = active_revisions(cs, [], collision_count=1)
    assert second.collision_count == 1
    assert first.update_revision["metadata"]["name"] != second.update_revision["metadata"]["name"]


def test_sort_revisions() -> None:
    revisions = [
        {"metadata": {"name": "b"}, "revision": 2},
        {"metadata": {"name": "c", "creationTimestamp": "2020-01-01T00:00:01Z"}, "revision": 1},
        {"metadata": {"name": "a", "creationTimestamp": "2020-01-01T00:00:02Z"}, "revision": 1},
    ]
    assert [r["metadata"]["name"] for r in sort_revisions(revisions)] == ["c", "a", "b"]


@pytest.mark.parametrize(("limit", "expected"), [(10, []), (2, ["r1", "r2"]), (0, ["r1", "r2", "r3", "r4"])])
def test_history_truncation(limit: int, expected: list[str]) -> None:
    revisions = [{"metadata": {"name": f"r{i}"}, "revision": i} for i in range(1, 8)]
    pods = [make_pod("p", "r5")]
    live = live_revision_names("r6", "r7", pods, revisions)
    assert live == {"r5", "r6", "r7"}
    assert [r["metadata"]["name"] for r in revisions_to_delete(revisions, live, limit)] == expected
