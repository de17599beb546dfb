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
