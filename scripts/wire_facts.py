"""Extract the protobuf wire facts of the built-in kinds into ``kubeloop/server/kinds/wire.json``.

Field numbers and wire types cannot be derived from the OpenAPI schemas the server loads: they
are facts of upstream's ``generated.proto`` files. This script reads those files (and the Go
struct tags beside them, for what the ``.proto`` text does not say: the JSON name of each field,
whether Go embeds a message inline in JSON, and whether a scalar field is a pointer or carries
``omitempty``) from local git snapshots of kubernetes/api, apimachinery,
apiextensions-apiserver and kube-aggregator at one tag, and writes one compact, sorted file of
facts. No ``.proto`` text is stored.

Each message is named by its OpenAPI definition name (``io.k8s.api.core.v1.Pod``); each field is
``{"name": JSON name, "n": number, "t": type}`` plus, where they apply:

- ``"t"``: a protobuf scalar (``string``, ``int32``, ``int64``, ``bool``, ``bytes``, ``double``)
  or the definition name of a message;
- ``"rep": true`` for a repeated field; ``"map": key type`` for a map field (``"t"`` is then
  the value's type);
- ``"inline": true`` when JSON inlines the nested message's fields (Go ``json:",inline"``:
  ``Volume.volumeSource``, ``EphemeralContainer.ephemeralContainerCommon``);
- ``"ptr": true`` when the Go field is a pointer (Go writes it only when set, so a decoded zero
  is a value); ``"omit": true`` for a non-pointer scalar with ``omitempty`` (Go writes it to
  protobuf even at its zero value, but JSON leaves the zero out);
- ``"go"``: the Go field name, when it is not the JSON name capitalised (Go's decoder names
  the field in its errors: ``proto: wrong wireType = 2 for field ObjectMeta``);
- messages whose Go type is a named slice (``metav1.Verbs``, ``ExtraValue``) carry
  ``"list": true``: one repeated ``items`` field that JSON writes as a plain list.

The extractor fails loudly when a proto field has no Go field, or when a field of a message
with an OpenAPI definition matches no property of that definition, so a version bump cannot
silently drop fields.

Regenerate (from the repository root, mirrors as in docs/kinds.md)::

    PYTHONPATH=$PWD .venv/bin/python scripts/wire_facts.py --tag v0.33.9 \\
        --mirrors /work/.mirror > kubeloop/server/kinds/wire.json

Cited upstream: go-to-protobuf's output (``generated.proto`` per API package) and the
``protobuf:"..."`` struct tags of ``types.go``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeloop.server.kinds import upstream

REPOS = {
    "kubernetes+api": "",
    "kubernetes+apimachinery": "pkg/",
    "kubernetes+apiextensions-apiserver": "pkg/apis/",
    "kubernetes+kube-aggregator": "pkg/apis/",
}
"""Mirror directory -> folder prefix holding API packages."""

_SKIP_PACKAGES = ("testapigroup",)

SCALARS = frozenset({"string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64"})

_MESSAGE = re.compile(r"^message (\w+) \{$")
_FIELD = re.compile(r"^\s+(?:(optional|repeated|required) )?(map<\s*(\w+)\s*,\s*([\w.]+)\s*>|[\w.]+) (\w+) = (\d+);")
_PACKAGE = re.compile(r"^package ([\w.]+);", re.M)
_STRUCT = re.compile(r"^type (\w+) struct \{")
_SLICE = re.compile(r"^type (\w+) \[\]")
_GO_FIELD = re.compile(r"^\s+(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")
_TAG = re.compile(r'(\w+):"([^"]*)"')

_UNTAGGED_PROPERTIES = frozenset({"apiVersion", "kind"})
"""OpenAPI properties that no proto field carries: TypeMeta travels in the runtime.Unknown envelope."""


@dataclass
class GoField:
    go: str
    json: str
    inline: bool
    pointer: bool
    omitempty: bool


@dataclass
class GoPackage:
    structs: dict[str, dict[int, GoField]] = field(default_factory=dict)
    """struct name -> protobuf field number -> Go facts"""
    slices: set[str] = field(default_factory=set)


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def definition_name(proto_name: str) -> str:
    """``k8s.io.api.core.v1.Pod`` -> ``io.k8s.api.core.v1.Pod`` (the OpenAPI definition name)."""
    if not proto_name.startswith("k8s.io."):
        raise SystemExit(f"unexpected proto package in {proto_name}")
    rest = proto_name[len("k8s.io."):]
    head, _, tail = rest.partition(".")
    return "io.k8s." + head.replace("_", "-") + "." + tail


def parse_go(sources: list[str]) -> GoPackage:
    package = GoPackage()
    for text in sources:
        current: dict[int, GoField] | None = None
        for line in text.splitlines():
            if current is None:
                found = _STRUCT.match(line)
                if found:
                    current = package.structs.setdefault(found.group(1), {})
                    continue
                found = _SLICE.match(line)
                if found:
                    package.slices.add(found.group(1))
                continue
            if line.startswith("}"):
                current = None
                continue
            parsed = _GO_FIELD.match(line)
            if not parsed:
                continue
            go_name, go_type, tags_text = parsed.groups()
            tags = dict(_TAG.findall(tags_text))
            proto = tags.get("protobuf")
            if proto is None or proto == "-":
                continue
            parts = proto.split(",")
            number = int(parts[1])
            # EphemeralContainerCommon's tag has no name= part: match Go fields by number.
            proto_name = next((part[5:] for part in parts if part.startswith("name=")), str(number))
            json_tag = tags.get("json")
            json_parts = (json_tag or "").split(",")
            json_name = json_parts[0] if json_tag is not None else proto_name
            inline = json_tag is not None and json_name == "" and "inline" in json_parts[1:]
            if json_name in ("", "-") and not inline:
                json_name = proto_name
            # An embedded field (``metav1.ObjectMeta `json:...```) is named by its type.
            go_field = go_name or go_type.lstrip("*").rpartition(".")[2]
            current[number] = GoField(go=go_field, json=json_name, inline=inline, pointer=go_type.startswith("*"),
                                          omitempty="omitempty" in json_parts[1:])
    return package


def read_package(mirror: Path, tag: str, proto_path: str) -> tuple[str, list[tuple[str, list[dict[str, Any]]]]]:
    return parse_proto(git(mirror, "show", f"{tag}:{proto_path}"), proto_path)


def parse_proto(text: str, proto_path: str) -> tuple[str, list[tuple[str, list[dict[str, Any]]]]]:
    """A ``generated.proto``'s package and its messages' fields (label, type, map key, name, number)."""
    package_match = _PACKAGE.search(text)
    assert package_match is not None
    package = package_match.group(1)
    messages: list[tuple[str, list[dict[str, Any]]]] = []
    current: list[dict[str, Any]] | None = None
    for line in text.splitlines():
        found = _MESSAGE.match(line)
        if found:
            current = []
            messages.append((found.group(1), current))
            continue
        if line.startswith("}"):
            current = None
            continue
        if current is None:
            continue
        parsed = _FIELD.match(line)
        if parsed:
            label, type_text, map_key, map_value, name, number = parsed.groups()
            current.append({"label": label, "type": map_value if map_key else type_text, "map": map_key,
                            "proto": name, "n": int(number)})
        elif line.strip() and not line.strip().startswith("//"):
            raise SystemExit(f"{proto_path}: cannot read {line!r}")
    return package, messages


def resolve_type(package: str, type_text: str) -> str:
    if type_text in SCALARS:
        return type_text
    if type_text.startswith("."):
        return definition_name(type_text[1:])
    return definition_name(f"{package}.{type_text}")


def extract(mirrors: Path, tag: str) -> dict[str, Any]:
    messages: dict[str, dict[str, Any]] = {}
    parsed: list[tuple[str, str, list[tuple[str, list[dict[str, Any]]]], GoPackage]] = []
    every_struct: dict[str, list[dict[int, GoField]]] = {}
    for repo, prefix in REPOS.items():
        mirror = mirrors / repo / "repo"
        files = git(mirror, "ls-tree", "-r", "--name-only", tag).splitlines()
        for proto_path in sorted(f for f in files if f.endswith("/generated.proto") and f.startswith(prefix)):
            if any(skip in proto_path for skip in _SKIP_PACKAGES):
                continue
            folder = proto_path.rpartition("/")[0]
            go_sources = [git(mirror, "show", f"{tag}:{f}") for f in files
                          if f.rpartition("/")[0] == folder and f.endswith(".go") and not f.endswith("_test.go")
                          and not f.rpartition("/")[2].startswith(("zz_generated", "generated.pb"))]
            go = parse_go(go_sources)
            package, found = read_package(mirror, tag, proto_path)
            parsed.append((proto_path, package, found, go))
            for struct_name, struct in go.structs.items():
                every_struct.setdefault(struct_name, []).append(struct)
    for proto_path, package, found, go in parsed:
        for message, fields in found:
            if message not in go.structs and message not in go.slices:
                # ``type MatchCondition v1.MatchCondition``: a defined type over another package's
                # struct carries that struct's tags; take the one whose protobuf names agree.
                names = {f["n"] for f in fields}
                match = [s for s in every_struct.get(message, ()) if set(s) == names]
                if match:
                    go.structs[message] = match[0]
            messages[definition_name(f"{package}.{message}")] = build_message(
                proto_path, message, fields, package, go)
    check_against_openapi(messages)
    return {"release": tag, "messages": dict(sorted(messages.items()))}


def build_message(proto_path: str, message: str, fields: list[dict[str, Any]], package: str,
                  go: GoPackage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if message in go.slices:
        if [f["proto"] for f in fields] != ["items"] or fields[0]["label"] != "repeated":
            raise SystemExit(f"{proto_path}: {message} is a Go slice but not an items wrapper")
        out["list"] = True
    go_fields = go.structs.get(message, {})
    built: list[dict[str, Any]] = []
    for proto_field in fields:
        facts = go_fields.get(proto_field["n"])
        if facts is None:
            # Types that marshal themselves (Quantity, Time) carry no tags: their proto names stand.
            if go_fields:
                raise SystemExit(f"{proto_path}: {message}.{proto_field['proto']} has no Go field with that "
                                 "protobuf number")
            facts = GoField(go=proto_field["proto"][:1].upper() + proto_field["proto"][1:], json=proto_field["proto"],
                            inline=False, pointer=False, omitempty=False)
        entry: dict[str, Any] = {"name": facts.json, "n": proto_field["n"],
                                 "t": resolve_type(package, proto_field["type"])}
        if facts.go != facts.json[:1].upper() + facts.json[1:]:
            entry["go"] = facts.go
        if proto_field["map"]:
            entry["map"] = proto_field["map"]
        elif proto_field["label"] == "repeated":
            entry["rep"] = True
        if facts.inline:
            entry["inline"] = True
        if facts.pointer:
            entry["ptr"] = True
        elif facts.omitempty and entry["t"] in SCALARS and "rep" not in entry and "map" not in entry:
            entry["omit"] = True
        built.append(entry)
    out["fields"] = sorted(built, key=lambda f: f["n"])
    return out


def json_names(messages: dict[str, dict[str, Any]], name: str) -> list[str]:
    """The JSON property names a message's fields produce (inline messages contribute theirs)."""
    names: list[str] = []
    for entry in messages[name]["fields"]:
        if entry.get("inline"):
            names.extend(json_names(messages, entry["t"]))
        else:
            names.append(entry["name"])
    return names


def check_against_openapi(messages: dict[str, dict[str, Any]],
                          definitions: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Fail when a field's JSON name is not a property of the message's OpenAPI definition, or a
    property (but apiVersion and kind) has no field."""
    if definitions is None:
        definitions = upstream.definitions()
    problems: list[str] = []
    for name in messages:
        if name not in definitions:
            continue
        properties = definitions[name].get("properties")
        if not properties:
            continue
        produced = json_names(messages, name)
        problems.extend(f"{name}: proto field with JSON name {field_name!r} matches no OpenAPI property"
                        for field_name in produced if field_name not in properties)
        problems.extend(f"{name}: OpenAPI property {prop!r} has no proto field"
                        for prop in properties if prop not in produced and prop not in _UNTAGGED_PROPERTIES)
    if problems:
        raise SystemExit("wire facts disagree with the OpenAPI definitions:\n" + "\n".join(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tag", default="v0.33.9")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    facts = extract(args.mirrors, args.tag)
    sys.stdout.write(json.dumps(facts, sort_keys=True, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
