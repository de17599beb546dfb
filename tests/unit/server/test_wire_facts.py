"""The wire facts: what scripts/wire_facts.py reads from upstream, and the committed fact file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubeloop.server.kinds import upstream, wire

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "wire_facts.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wire_facts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("wire_facts", module)
    spec.loader.exec_module(module)
    return module


facts_script = _script()

PROTO = """
syntax = "proto2";

package k8s.io.api.demo.v1;

import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";

// Thing is a demo.
message Thing {
  // +optional
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;

  optional ThingSource thingSource = 2;

  optional int32 replicas = 3;

  optional int32 minReady = 4;

  map<string, string> labels = 5;

  repeated string names = 6;

  optional string mode = 7;
}

message ThingSource {
  optional string path = 1;
}

message Words {
  // items, if empty, will result in an empty slice
  repeated string items = 1;
}
"""

GO = """
type Thing struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	ThingSource `json:",inline" protobuf:"bytes,2,opt,name=thingSource"`
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,3,opt,name=replicas"`
	MinReady int32 `json:"minReady,omitempty" protobuf:"varint,4,opt,name=minReady"`
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,5,rep,name=labels"`
	Names []string `json:"names" protobuf:"bytes,6,rep,name=names"`
	Mode string `json:"mode" protobuf:"bytes,7,opt,name=mode"`
}

type ThingSource struct {
	Path string `json:"$path,omitempty" protobuf:"bytes,1,opt,name=path"`
}

type Words []string
"""


def _messages() -> dict[str, dict[str, Any]]:
    package, found = facts_script.parse_proto(PROTO, "demo/v1/generated.proto")
    go = facts_script.parse_go([GO])
    return {facts_script.definition_name(f"{package}.{name}"): facts_script.build_message(
        "demo/v1/generated.proto", name, fields, package, go) for name, fields in found}


def test_fields_carry_json_names_numbers_types_and_go_presence() -> None:
    messages = _messages()
    thing = {field["n"]: field for field in messages["io.k8s.api.demo.v1.Thing"]["fields"]}
    assert thing[1] == {"name": "metadata", "n": 1, "go": "ObjectMeta",
                        "t": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    assert thing[2] == {"name": "", "n": 2, "go": "ThingSource", "inline": True, "t": "io.k8s.api.demo.v1.ThingSource"}
    assert thing[3] == {"name": "replicas", "n": 3, "ptr": True, "t": "int32"}
    assert thing[4] == {"name": "minReady", "n": 4, "omit": True, "t": "int32"}
    assert thing[5] == {"name": "labels", "n": 5, "map": "string", "t": "string"}
    assert thing[6] == {"name": "names", "n": 6, "rep": True, "t": "string"}
    assert thing[7] == {"name": "mode", "n": 7, "t": "string"}
    assert messages["io.k8s.api.demo.v1.ThingSource"]["fields"][0]["name"] == "$path"
    assert messages["io.k8s.api.demo.v1.Words"]["list"] is True


def test_a_field_without_a_go_field_fails_loudly() -> None:
    package, found = facts_script.parse_proto(PROTO.replace("optional string mode = 7;", "optional string mode = 8;"),
                                              "demo/v1/generated.proto")
    go = facts_script.parse_go([GO])
    with pytest.raises(SystemExit, match=r"Thing\.mode has no Go field"):
        for name, fields in found:
            facts_script.build_message("demo/v1/generated.proto", name, fields, package, go)


def test_fields_and_openapi_properties_must_match() -> None:
    messages = _messages()
    properties = {"metadata": {}, "$path": {}, "replicas": {}, "minReady": {}, "labels": {}, "names": {},
                  "mode": {}, "apiVersion": {}, "kind": {}}
    facts_script.check_against_openapi(messages, {"io.k8s.api.demo.v1.Thing": {"properties": properties}})
    renamed = {**{k: v for k, v in properties.items() if k != "mode"}, "modes": {}}
    with pytest.raises(SystemExit) as caught:
        facts_script.check_against_openapi(messages, {"io.k8s.api.demo.v1.Thing": {"properties": renamed}})
    assert "JSON name 'mode' matches no OpenAPI property" in str(caught.value)
    assert "OpenAPI property 'modes' has no proto field" in str(caught.value)


def test_an_unreadable_proto_line_fails_loudly() -> None:
    with pytest.raises(SystemExit, match="cannot read"):
        facts_script.parse_proto(PROTO.replace("optional string mode = 7;", "oneof mode { string a = 7; }"),
                                 "demo/v1/generated.proto")


def test_the_committed_facts_cover_every_schema_with_properties() -> None:
    """Every OpenAPI definition with properties has its message, field for property."""
    messages = wire.messages()
    assert wire.release() == "v0.33.9"
    facts_script.check_against_openapi(dict(messages))
    missing = [name for name, schema in upstream.definitions().items()
               if schema.get("properties") and name not in messages]
    # /version's Info is served as JSON only; upstream has no message for it.
    assert missing == ["io.k8s.apimachinery.pkg.version.Info"]
