"""What makes an update's managedFields cheap must not change them.

- ``compare`` diffs keyed lists member by member; a property test checks it against walking
  both lists whole (``_diff_members`` switched off), on pods with random changes;
- the FieldsV1 memos (``kubeloop.server.fieldsv1``) answer what ``decode_fields`` and
  ``encode_fields`` answer, hand out fresh documents, and stay bounded;
- ``record_update`` gives the same entries when the writer sends back the entries it read
  (skipped comparison) as when it sends equal entries decoded differently.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.server import apply, fieldsv1
from kubeloop.server.apply import Manager, builtin_shape, compare, record_update

POD = builtin_shape("", "Pod")


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "ns", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                 "resources": {"requests": {"cpu": "100m"}}},
                {"name": "side", "image": "busybox", "args": ["-x"], "env": [{"name": "A", "value": "1"}]},
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
    }


CONTAINER_CHANGES = st.sampled_from([
    ("image", "nginx:2"), ("image", None), ("args", ["-y"]), ("args", []), ("resources", {}),
    ("resources", {"limits": {"cpu": "1"}}), ("ports", []), ("ports", [{"containerPort": 81}]),
    ("ports", [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"}]),
    ("env", [{"name": "A", "value": "2"}, {"name": "B"}]), ("env", [{"name": "A"}, {"name": "A"}]),
    ("env", "text"), ("name", "renamed"), ("extra", {"x": {}}),
])
LIST_CHANGES = st.sampled_from(["drop first", "drop last", "swap", "add", "duplicate", "unkeyed", "empty"])


def _changed(base: dict[str, Any], container_changes: list[tuple[int, tuple[str, Any]]],
             list_change: str | None) -> dict[str, Any]:
    new = copy.deepcopy(base)
    containers = new["spec"]["containers"]
    for position, (field, value) in container_changes:
        if not containers:
            break
        item = containers[position % len(containers)]
        if value is None:
            item.pop(field, None)
        else:
            item[field] = copy.deepcopy(value)
    if list_change == "drop first":
        del containers[:1]
    elif list_change == "drop last":
        del containers[-1:]
    elif list_change == "swap":
        containers.reverse()
    elif list_change == "add":
        containers.append({"name": "more", "image": "x"})
    elif list_change == "duplicate":
        containers.extend(copy.deepcopy(containers[:1]))
    elif list_change == "unkeyed":
        containers.append({"image": "no-name"})
    elif list_change == "empty":
        containers.clear()
    return new


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), CONTAINER_CHANGES), max_size=4), st.none() | LIST_CHANGES,
       st.lists(st.tuples(st.integers(0, 3), CONTAINER_CHANGES), max_size=3), st.none() | LIST_CHANGES)
def test_members_diffed_one_by_one_give_the_paths_of_whole_lists(
        first: list[tuple[int, tuple[str, Any]]], first_list: str | None,
        second: list[tuple[int, tuple[str, Any]]], second_list: str | None) -> None:
    old = _changed(pod(), first, first_list)
    new = _changed(old, second, second_list)
    fast = compare(old, new, POD)
    original = apply._diff_members
    apply._diff_members = lambda *args: False  # type: ignore[assignment]
    try:
        whole = compare(old, new, POD)
    finally:
        apply._diff_members = original
    assert fast == whole


def test_members_are_diffed_one_by_one() -> None:
    # The container that changed is the only one compared below its element.
    old = pod()
    new = _changed(old, [(0, ("image", "nginx:2"))], None)
    change = compare(old, new, POD)
    element = ("f:spec", "f:containers", 'k:{"name":"web"}')
    assert change.modified == {(*element, "f:image")}
    assert not change.added and not change.removed


@pytest.mark.parametrize("paths", [
    frozenset(),
    frozenset({("f:a",)}),
    frozenset({("f:spec", "f:containers", 'k:{"name":"web"}'),
               ("f:spec", "f:containers", 'k:{"name":"web"}', "f:image"), ("f:metadata", "f:labels", "f:app")}),
])
def test_memoised_documents_are_the_pure_encoding_and_fresh(paths: frozenset[tuple[str, ...]]) -> None:
    first = fieldsv1.document_of(paths)
    assert first == fieldsv1.encode_fields(paths)
    first["f:changed"] = {}
    second = fieldsv1.document_of(paths)
    assert second == fieldsv1.encode_fields(paths)
    assert fieldsv1.fields_of(second) == paths == fieldsv1.decode_fields(second)


@pytest.mark.parametrize("document", [
    None, "text", {}, {"f:a": {}}, {"f:a": "x", "f:b": {".": {}, "f:c": {}}}, {1: {}}, {"f:big": {"f:n": 2**70}},
])
def test_memoised_field_sets_are_the_pure_decoding(document: Any) -> None:
    assert fieldsv1.fields_of(document) == fieldsv1.decode_fields(document)
    assert fieldsv1.fields_of(document) == fieldsv1.decode_fields(document)


def test_memos_are_bounded() -> None:
    for index in range(fieldsv1.MEMO_SIZE + 10):
        fieldsv1.fields_of({f"f:x{index}": {}})
        fieldsv1.document_of(frozenset({(f"f:y{index}",)}))
    assert len(fieldsv1._DECODED) <= fieldsv1.MEMO_SIZE
    assert len(fieldsv1._ENCODED) <= fieldsv1.MEMO_SIZE


def test_entries_sent_back_as_read_and_reordered_give_the_same_entries() -> None:
    manager = Manager("ctl", "Update", "v1")
    other = Manager("kubectl", "Update", "v1")
    created = pod()
    created["metadata"]["managedFields"] = record_update(None, created, POD, other, "2026-01-01T00:00:00Z")
    old = copy.deepcopy(created)
    new = _changed(old, [(0, ("image", "nginx:2"))], None)
    new["metadata"]["labels"]["x"] = "y"
    sent_back = record_update(old, new, POD, manager, "2026-01-02T00:00:00Z",
                              base=copy.deepcopy(old["metadata"]["managedFields"]))
    reordered = copy.deepcopy(old["metadata"]["managedFields"])
    reordered[0]["fieldsV1"] = dict(reversed(list(reordered[0]["fieldsV1"].items())))
    decoded_again = record_update(old, new, POD, manager, "2026-01-02T00:00:00Z", base=reordered)
    assert sent_back == decoded_again
    owners = {entry["manager"]: fieldsv1.decode_fields(entry["fieldsV1"]) for entry in sent_back}
    image = ("f:spec", "f:containers", 'k:{"name":"web"}', "f:image")
    assert image in owners["ctl"] and image not in owners["kubectl"]
    assert ("f:metadata", "f:labels", "f:x") in owners["ctl"]
