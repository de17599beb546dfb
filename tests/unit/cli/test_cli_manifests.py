from pathlib import Path

import pytest

from kubeloop.cli.manifests import _contains, load_manifests


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
