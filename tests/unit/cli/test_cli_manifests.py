from pathlib import Path

import pytest

from kubeloop.cli.manifests import LAST_APPLIED, _contains, last_applied_text, load_manifests, merge_patch


@pytest.mark.parametrize(
    ("current", "wanted", "expected"),
    [
        ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, {"b": 1}, False),
        ({"l": [{"name": "x", "image": "i", "imagePullPolicy": "Always"}]}, {"l": [{"name": "x", "image": "i"}]}, True),
        ({"l": [{"name": "x"}, {"name": "y"}]}, {"l": [{"name": "x"}]}, False),
        ({"l": [1, 2]}, {"l": [2, 1]}, False),
        ({"n": None}, {"n": None}, True),
    ],
)
def test_contains(current: object, wanted: object, expected: bool) -> None:
    assert _contains(current, wanted) is expected


def test_load_manifests(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n"
                    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n")
    assert [m["metadata"]["name"] for m in load_manifests(path)] == ["a", "b"]
    path.write_text("just: text\n")
    with pytest.raises(ValueError, match="apiVersion and kind"):
        load_manifests(path)


@pytest.mark.parametrize(("old", "new", "patch"), [
    ({"a": 1}, {"a": 1}, {}),
    ({"a": 1}, {"a": 2}, {"a": 2}),
    ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
    ({"s": {"x": 1, "y": 2}}, {"s": {"x": 1, "y": 3}}, {"s": {"y": 3}}),
    ({"s": {"x": 1}}, {"s": {"x": 1}, "t": [1]}, {"t": [1]}),
    ({"l": [{"n": "a", "i": "1"}]}, {"l": [{"n": "a", "i": "2"}]}, {"l": [{"n": "a", "i": "2"}]}),
    ({"a": None}, {}, {"a": None}),
])
def test_merge_patch(old: dict[str, object], new: dict[str, object], patch: dict[str, object]) -> None:
    assert merge_patch(old, new) == patch


def test_last_applied_is_compact_sorted_json_without_itself() -> None:
    manifest = {"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "c", "annotations": {LAST_APPLIED: "old", "keep": "é"}}}
    assert last_applied_text(manifest) == ('{"apiVersion":"v1","kind":"ConfigMap","metadata":'
                                           '{"annotations":{"keep":"é"},"name":"c"}}\n')
    bare = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "annotations": {LAST_APPLIED: "x"}}}
    assert last_applied_text(bare) == '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}\n'
