"""Server-side apply through real HTTP: PATCH with ``application/apply-patch+yaml``.

Each test replays a sequence a user reported or a sibling of it, and reads the object back
with GET, so both the response and what was stored are checked.
"""

from __future__ import annotations

from typing import Any

import orjson
from server_harness import Cluster

from kubeloop.server.apply import decode_fields, path_text

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
Obj = dict[str, Any]


def apply(cluster: Cluster, body: Obj, manager: str, *, name: str = "cm", force: bool = False,
          collection: str = CONFIGMAPS) -> tuple[int, Obj]:
    """One apply request (YAML is a superset of JSON, so the JSON text is a valid body)."""
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    status, _, raw = cluster.raw("PATCH", f"{collection}/{name}{query}",
                                 headers={"Content-Type": "application/apply-patch+yaml"}, body=orjson.dumps(body))
    decoded: Obj = orjson.loads(raw)
    return status, decoded


def get(cluster: Cluster, name: str = "cm", collection: str = CONFIGMAPS) -> Obj:
    status, _, raw = cluster.raw("GET", f"{collection}/{name}")
    assert status == 200, raw
    decoded: Obj = orjson.loads(raw)
    return decoded


def configmap(name: str = "cm", **fields: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def owned(obj: Obj) -> dict[str, set[str]]:
    """Each manager's fields as path texts (``.data.k``)."""
    return {entry["manager"]: {path_text(p) for p in decode_fields(entry["fieldsV1"])}
            for entry in obj["metadata"].get("managedFields", [])}


def test_apply_into_an_empty_map_it_applied_before_keeps_the_data(cluster: Cluster) -> None:
    status, _ = apply(cluster, configmap(data={}), "m1")
    assert status == 201
    status, body = apply(cluster, configmap(data={"k": "v"}), "m1")
    assert status == 200
    for obj in (body, get(cluster)):
        assert obj["data"] == {"k": "v"}
        assert owned(obj) == {"m1": {".data.k"}}


def test_null_in_a_configuration_removes_the_field_and_conflicts_with_its_other_owner(cluster: Cluster) -> None:
    assert apply(cluster, configmap(data={"a": "1", "b": "2"}), "m1")[0] == 201
    status, body = apply(cluster, configmap(data={"a": None, "b": "2"}, metadata={"name": "cm", "labels": {
        "x": None}}), "m1")
    assert status == 200
    for obj in (body, get(cluster)):
        assert obj["data"] == {"b": "2"}, "a null is never stored"
        assert "labels" not in obj["metadata"]
    status, body = apply(cluster, configmap(data={"b": None}), "m2")
    assert status == 409
    assert [c["field"] for c in body["details"]["causes"]] == [".data.b"]
    status, body = apply(cluster, configmap(data={"b": None}), "m2", force=True)
    # Emptied by a null: the applier still owns the map, which Go writes back without it (omitempty).
    assert status == 200 and "data" not in body
    assert owned(body) == {"m1": {".data.a", ".metadata.labels.x"}, "m2": {".data.b"}}


def test_an_empty_map_deeper_down_keeps_what_is_applied_into_it(cluster: Cluster) -> None:
    assert apply(cluster, configmap(metadata={"name": "cm", "labels": {}}), "m1")[0] == 201
    status, body = apply(cluster, configmap(metadata={"name": "cm", "labels": {"app": "web"}}), "m1")
    assert status == 200
    assert get(cluster)["metadata"]["labels"] == {"app": "web"}
    assert owned(body) == {"m1": {".metadata.labels.app"}}
    # Another manager's empty map stays its own while the first fills the map.
    assert apply(cluster, configmap(metadata={"name": "cm", "labels": {}}), "m2")[0] == 200
    status, body = apply(cluster, configmap(metadata={"name": "cm"}), "m1")
    assert status == 200
    assert "labels" not in get(cluster)["metadata"]  # empty, so omitted as Go writes it
    assert owned(body) == {"m2": {".metadata.labels"}}


def test_an_applied_empty_set_list_owns_nothing(cluster: Cluster) -> None:
    status, body = apply(cluster, configmap(metadata={"name": "cm", "finalizers": []}, data={"k": "v"}), "m1")
    assert status == 201
    assert owned(body) == {"m1": {".data.k"}}


def test_apply_after_an_update_conflicts_on_the_updated_field_only(cluster: Cluster) -> None:
    assert apply(cluster, configmap(data={}), "m1")[0] == 201
    status, _, raw = cluster.raw("PATCH", f"{CONFIGMAPS}/cm?fieldManager=editor",
                                 headers={"Content-Type": "application/merge-patch+json"},
                                 body=orjson.dumps({"data": {"k": "edited"}}))
    assert status == 200, raw
    # The editor's key joins the applier's empty map: the map stays the applier's.
    assert owned(get(cluster)) == {"m1": {".data"}, "editor": {".data.k"}}
    status, body = apply(cluster, configmap(data={"k": "applied"}), "m1")
    assert status == 409 and body["details"]["causes"][0]["message"] == 'conflict with "editor" using v1'
    status, body = apply(cluster, configmap(data={"k": "applied", "j": "1"}), "m1", force=True)
    assert status == 200
    assert body["data"] == {"k": "applied", "j": "1"}
    assert owned(body) == {"m1": {".data.k", ".data.j"}}
    # The applier drops k, which nobody else owns any more: it goes, j stays.
    status, body = apply(cluster, configmap(data={"j": "1"}), "m1")
    assert body["data"] == {"j": "1"}
