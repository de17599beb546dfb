"""Random server-side apply sequences of several managers against an independent model.

The model below restates structured-merge-diff's ownership rules on plain nested values, in
its own terms (it shares no code with :mod:`kubeloop.server.apply`):

* an applier owns the leaves of its configuration: scalars, ``null`` (the field's absence),
  empty maps, atomic lists, and each element of a keyed or set list (a keyed element also
  owns its fields); an empty keyed or set list owns nothing;
* the configuration merges into the live object: maps field by field (``null`` removes),
  keyed lists by ``name`` (live order, new elements appended), set lists by value, anything
  else replaced;
* what the applier owned before and nobody owns now is removed, unless someone owns a field
  below it; a map or list left empty by a removal goes too unless someone owns it;
* another manager's field conflicts when the apply changes its value (a map stays a map
  whatever its fields; a leaf the configuration nulls changed); with ``force`` the applier
  takes it, and every manager loses the fields whose value changed or went away.

Each example sends its applies as real PATCH requests to one in-process server and checks,
after each, the status (201/200/409), the stored object and every manager's ``managedFields``.
"""

from __future__ import annotations

import copy
import itertools
import json
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import ServerThread

from kubeloop.server.app import ServerConfig

Obj = dict[str, Any]
FieldPath = tuple[str, ...]
"""A path of FieldsV1 elements: ``f:name``, ``k:{"name":"a"}``, ``v:"x"``."""

MANAGERS = ("m1", "m2", "m3")
GROUP = "model.example.com"
SERVER_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                   "managedFields")


# --- the model -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Kind:
    """Which lists of a kind are keyed by ``name`` or are sets (by their field names)."""

    keyed: frozenset[tuple[str, ...]]
    sets: frozenset[tuple[str, ...]]

    def list_type(self, names: tuple[str, ...]) -> str:
        if names in self.keyed:
            return "keyed"
        return "set" if names in self.sets else "atomic"


def _enc(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def owned_by_config(config: Any, kind: Kind, names: tuple[str, ...] = (), at: FieldPath = ()) -> set[FieldPath]:
    out: set[FieldPath] = set()
    if isinstance(config, dict) and config:
        for key, value in config.items():
            out |= owned_by_config(value, kind, (*names, key), (*at, f"f:{key}"))
        return out
    if isinstance(config, list) and kind.list_type(names) == "keyed":
        for item in config:
            element = (*at, "k:" + _enc({"name": item["name"]}))
            out.add(element)
            for key, value in item.items():
                out |= owned_by_config(value, kind, (*names, key), (*element, f"f:{key}"))
        return out
    if isinstance(config, list) and kind.list_type(names) == "set":
        return {(*at, "v:" + _enc(v)) for v in config}
    return {at} if at else set()


def drop_nulls(value: Any) -> Any:
    """Nulls are never stored, nor maps that held nothing but nulls."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if v is not None and (drop_nulls(v) != {} or v == {}):
                out[k] = drop_nulls(v)
        return out
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def merge(live: Any, config: Any, kind: Kind, names: tuple[str, ...] = ()) -> Any:
    if isinstance(live, dict) and isinstance(config, dict):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, kind, (*names, key))
            elif drop_nulls(value) != {} or value == {}:
                out[key] = drop_nulls(value)
        return out
    if isinstance(live, list) and isinstance(config, list) and kind.list_type(names) == "keyed":
        out_list = [copy.deepcopy(item) for item in live]
        for item in config:
            position = next((i for i, old in enumerate(out_list) if old["name"] == item["name"]), None)
            if position is None:
                out_list.append(drop_nulls(item))
            else:
                out_list[position] = merge(out_list[position], item, kind, names)
        return out_list
    if isinstance(live, list) and isinstance(config, list) and kind.list_type(names) == "set":
        return live + [v for v in config if v not in live]
    return drop_nulls(config)


MISSING = object()


def value_at(obj: Any, path: FieldPath) -> Any:
    node = obj
    for element in path:
        tag, _, body = element.partition(":")
        if tag == "f" and isinstance(node, dict) and body in node:
            node = node[body]
        elif tag == "k" and isinstance(node, list):
            name = json.loads(body)["name"]
            node = next((i for i in node if isinstance(i, dict) and i.get("name") == name), MISSING)
        elif tag == "v" and isinstance(node, list) and json.loads(body) in node:
            node = json.loads(body)
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


def delete_at(obj: Any, path: FieldPath) -> None:
    parent = value_at(obj, path[:-1])
    tag, _, body = path[-1].partition(":")
    if tag == "f" and isinstance(parent, dict):
        parent.pop(body, None)
    elif tag == "k" and isinstance(parent, list):
        name = json.loads(body)["name"]
        parent[:] = [i for i in parent if not (isinstance(i, dict) and i.get("name") == name)]
    elif tag == "v" and isinstance(parent, list):
        parent[:] = [i for i in parent if i != json.loads(body)]


def changed(before: Any, after: Any) -> bool:
    """Whether a field's value changed, a map staying a map whatever its fields."""
    if before is MISSING or after is MISSING:
        return before is not after
    if isinstance(before, dict) and isinstance(after, dict):
        return False
    return bool(before != after)


def always_valid(obj: Obj) -> bool:
    return True


@dataclass
class Model:
    kind: Kind
    valid: Callable[[Obj], bool] = always_valid
    obj: Obj | None = None
    owners: dict[str, set[FieldPath]] = field(default_factory=dict)
    typed: bool = False
    """A built-in kind: the live object is what Go writes back (:func:`omitempty`), so an empty
    map an applier owns is absent from it, and the next applier's map appears there afresh."""

    def apply(self, manager: str, config: Obj, force: bool) -> tuple[int, set[str]]:
        """The expected status, and the managers that conflict (when 409)."""
        tracked = {k: v for k, v in config.items() if k not in ("apiVersion", "kind")}
        tracked["metadata"] = {k: v for k, v in config["metadata"].items() if k not in SERVER_METADATA}
        if not tracked["metadata"]:
            del tracked["metadata"]
        live = self.obj or {}
        merged = merge(copy.deepcopy(live), tracked, self.kind)
        mine = owned_by_config(tracked, self.kind)
        previous = self.owners.get(manager, set())
        held = set(mine).union(*(s for m, s in self.owners.items() if m != manager))
        for path in sorted(previous - held, key=len):
            if any(h[:len(path)] == path for h in held):
                continue
            delete_at(merged, path)
            for depth in range(len(path) - 1, 0, -1):
                parent = path[:depth]
                if parent in held or value_at(merged, parent) not in ({}, []):
                    break
                delete_at(merged, parent)
        nulled = {p for p in mine if value_at(tracked, p) is None}
        conflicting: set[str] = set()
        losses: dict[str, set[FieldPath]] = {}
        for other, paths in self.owners.items():
            if other == manager:
                continue
            for path in paths:
                before, after = value_at(live, path), value_at(merged, path)
                gone = before is not MISSING and after is MISSING
                # A map with fields is no leaf: it goes with its fields, which are what is removed.
                leaf_before = before is not MISSING and not (isinstance(before, dict) and before
                                                             and not path[-1].startswith("k:"))
                if (after is not MISSING and changed(before, after)) or (gone and path in nulled and leaf_before):
                    conflicting.add(other)
                if (after is not MISSING and changed(before, after)) or (gone and leaf_before):
                    losses.setdefault(other, set()).add(path)
        if conflicting and not force:
            return 409, conflicting
        if not self.valid(merged):
            return 422, set()
        for other, lost in losses.items():
            self.owners[other] -= lost
        self.owners[manager] = set(mine)
        self.owners = {m: s for m, s in self.owners.items() if s}
        status = 201 if self.obj is None else 200
        self.obj = omitempty(merged) if self.typed else merged
        return status, set()


# --- the server ------------------------------------------------------------------------------

class Client:
    """One keep-alive HTTPS session to an in-process server (no handshake per request)."""

    def __init__(self, server: ServerThread) -> None:
        self.server = server
        context = ssl.create_default_context(cafile=server.ca_file)

        async def open_session() -> aiohttp.ClientSession:
            return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context),
                                         headers={"Authorization": f"Bearer {server.token}"})

        self.session: aiohttp.ClientSession = server.call(open_session())

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> tuple[
            int, Obj]:
        async def go() -> tuple[int, Obj]:
            data = orjson.dumps(body) if body is not None else None
            async with self.session.request(method, self.server.url + path, data=data,
                                            headers={"Content-Type": content_type}) as response:
                decoded: Obj = orjson.loads(await response.read())
                return response.status, decoded

        result: tuple[int, Obj] = self.server.call(go())
        return result

    def close(self) -> None:
        self.server.call(self.session.close())


def gadget_crd() -> Obj:
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "x-kubernetes-preserve-unknown-fields": True,
                            "properties": {"name": {"type": "string"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    data_dir: Path = tmp_path_factory.mktemp("apply-model")
    server = ServerThread(ServerConfig(data_dir=data_dir, port=0, memory=True))
    http = Client(server)
    try:
        status, body = http.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadget_crd())
        assert status == 201, body
        yield http
    finally:
        http.close()
        server.stop()


# --- random configurations -------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c"])
SCALARS = st.sampled_from(["x", "y", 1, True])
labels = st.dictionaries(st.sampled_from(["app", "tier", "team"]), st.sampled_from(["v1", "v2"]) | st.none(),
                         max_size=3)
finalizers = st.lists(st.sampled_from(["example.com/a", "example.com/b"]), unique=True, max_size=2)


def metadata(draw: st.DrawFn) -> Obj:
    meta: Obj = {"name": "set-by-run"}
    for key, values in (("labels", labels), ("annotations", labels), ("finalizers", finalizers)):
        if draw(st.booleans()):
            meta[key] = draw(values)
    return meta


nested = st.recursive(SCALARS | st.none() | st.lists(SCALARS, max_size=2),
                      lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
items = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["i1", "i2", "i3"])},
                                       optional={"size": SCALARS | st.none(), "opts": nested}),
                 max_size=3, unique_by=lambda i: i["name"])
GADGET = Kind(keyed=frozenset({("spec", "items")}), sets=frozenset({("spec", "tags"), ("metadata", "finalizers")}))


@st.composite
def gadget(draw: st.DrawFn) -> Obj:
    spec: Obj = draw(st.dictionaries(KEYS, nested, max_size=3))
    if draw(st.booleans()):
        spec["items"] = draw(items)
    if draw(st.booleans()):
        spec["tags"] = draw(st.lists(st.sampled_from(["t1", "t2", "t3"]), unique=True, max_size=2))
    body: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": metadata(draw)}
    if spec or draw(st.booleans()):
        body["spec"] = spec
    return body


CONFIGMAP = Kind(keyed=frozenset(), sets=frozenset({("metadata", "finalizers")}))


@st.composite
def configmap(draw: st.DrawFn) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(draw)}
    if draw(st.booleans()):
        body["data"] = draw(st.dictionaries(KEYS, st.sampled_from(["1", "2"]) | st.none(), max_size=3))
    return body


CONTAINERS = ("spec", "template", "spec", "containers")
DEPLOYMENT = Kind(keyed=frozenset({CONTAINERS, (*CONTAINERS, "env")}), sets=frozenset({("metadata", "finalizers")}))
containers = st.lists(st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "side"]), "image": st.sampled_from(["nginx:1", "nginx:2"])},
    optional={"env": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["A", "B"])},
                                                    optional={"value": st.sampled_from(["1", "2"]) | st.none()}),
                              max_size=2, unique_by=lambda e: e["name"]),
              "args": st.lists(st.sampled_from(["-x", "-y"]), max_size=2)}),
    min_size=1, max_size=2, unique_by=lambda c: c["name"])


def images_set(obj: Obj) -> bool:
    """Whether every container still has an image (a prune can take one away: then 422)."""
    return all("image" in c for c in obj["spec"]["template"]["spec"]["containers"])


@st.composite
def deployment(draw: st.DrawFn) -> Obj:
    # Every configuration keeps the object valid on its own: selector, matching labels, images.
    spec: Obj = {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": draw(containers)}}}
    if draw(st.booleans()):
        spec["minReadySeconds"] = draw(st.sampled_from([0, 5]) | st.none())
    if draw(st.booleans()):
        spec["paused"] = draw(st.booleans())
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata(draw), "spec": spec}


# --- the checks ------------------------------------------------------------------------------

def owned_in(obj: Obj) -> dict[str, set[FieldPath]]:
    """Each Apply manager's fields as FieldsV1 paths (members marked ``.`` and leaves)."""
    out: dict[str, set[FieldPath]] = {}

    def visit(node: Obj, prefix: FieldPath, into: set[FieldPath]) -> None:
        for key, child in node.items():
            if key == ".":
                into.add(prefix)
            elif child:
                visit(child, (*prefix, key), into)
            else:
                into.add((*prefix, key))

    for entry in obj["metadata"].get("managedFields", []):
        assert entry["operation"] == "Apply", entry
        visit(entry["fieldsV1"], (), out.setdefault(entry["manager"], set()))
    return out


def project(stored: Obj, expected: Any) -> Any:
    """``stored`` cut to the fields the model knows of (the server defaults others it adds)."""
    if isinstance(stored, dict) and isinstance(expected, dict):
        return {k: project(v, expected[k]) for k, v in stored.items() if k in expected}
    if isinstance(stored, list) and isinstance(expected, list) and len(stored) == len(expected):
        return [project(s, e) for s, e in zip(stored, expected, strict=True)]
    return stored


def omitempty(value: Any) -> Any:
    """A built-in object as Go writes it: the optional fields these tests generate (maps and
    lists of ConfigMaps and Deployments) are ``omitempty``, so an empty one is left out."""
    if isinstance(value, dict):
        kept = {k: omitempty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [omitempty(v) for v in value]
    return value


def tracked(stored: Obj) -> Obj:
    out = {k: v for k, v in stored.items() if k not in ("apiVersion", "kind", "status")}
    meta = {k: v for k, v in out["metadata"].items() if k not in SERVER_METADATA}
    if meta:
        out["metadata"] = meta
    else:
        del out["metadata"]
    return out


NAMES = itertools.count()


def run(client: Client, model: Model, collection: str, configs: list[tuple[str, Obj, bool]], defaulted: bool) -> None:
    # A fresh object per example: finalizers keep deleted ones around.
    name = f"o{next(NAMES)}"
    for manager, config, force in configs:
        config["metadata"]["name"] = name
        expected_status, conflicting = model.apply(manager, config, force)
        query = f"?fieldManager={manager}" + ("&force=true" if force else "")
        status, body = client.request("PATCH", f"{collection}/{name}{query}", config, "application/apply-patch+yaml")
        assert status == expected_status, (manager, config, body)
        if status == 422:
            assert body["reason"] == "Invalid"
        if status == 409:
            named = {cause["message"].split('"')[1] for cause in body["details"]["causes"]}
            assert named == conflicting
        status, stored = client.request("GET", f"{collection}/{name}")
        assert status == 200
        assert model.obj is not None
        got = tracked(stored)
        assert (project(got, model.obj) if defaulted else got) == model.obj
        assert owned_in(stored) == model.owners


def steps(configs: st.SearchStrategy[Obj]) -> st.SearchStrategy[list[tuple[str, Obj, bool]]]:
    return st.lists(st.tuples(st.sampled_from(MANAGERS), configs, st.booleans()), min_size=1, max_size=6)


FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@FAST
@given(steps(gadget()))
def test_random_applies_to_a_custom_resource_follow_the_model(client: Client,
                                                              configs: list[tuple[str, Obj, bool]]) -> None:
    run(client, Model(GADGET), f"/apis/{GROUP}/v1/namespaces/default/gadgets", configs, defaulted=False)


@FAST
@given(steps(configmap()))
def test_random_applies_to_a_configmap_follow_the_model(client: Client, configs: list[tuple[str, Obj, bool]]) -> None:
    run(client, Model(CONFIGMAP, typed=True), "/api/v1/namespaces/default/configmaps", configs, defaulted=False)


@FAST
@given(steps(deployment()))
def test_random_applies_to_a_deployment_follow_the_model(client: Client,
                                                         configs: list[tuple[str, Obj, bool]]) -> None:
    run(client, Model(DEPLOYMENT, images_set, typed=True), "/apis/apps/v1/namespaces/default/deployments", configs,
        defaulted=True)
