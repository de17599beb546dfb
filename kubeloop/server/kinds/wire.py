"""Protobuf wire facts of the built-in kinds: field numbers, wire types, Go presence.

The facts are extracted from upstream's ``generated.proto`` files and Go struct tags by
``scripts/wire_facts.py`` into ``wire.json`` beside this module (regeneration command in that
script's docstring and docs/kinds.md). Messages are named by their OpenAPI definition names, the
same names :mod:`kubeloop.server.kinds.upstream` uses, so a kind's definition name leads to both
its schema and its wire form. Read once, on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

import orjson

from kubeloop.server.kinds import upstream

Message = Mapping[str, Any]
"""``{"fields": [{"name", "n", "t", ...}], "list"?: True}``, as scripts/wire_facts.py documents."""

META = "io.k8s.apimachinery.pkg.apis.meta."
_META_GROUP = "meta.k8s.io"


@functools.cache
def _facts() -> Mapping[str, Any]:
    data = resources.files("kubeloop.server.kinds").joinpath("wire.json").read_bytes()
    facts: Mapping[str, Any] = orjson.loads(data)
    return facts


def messages() -> Mapping[str, Message]:
    """Every message by definition name."""
    found: Mapping[str, Message] = _facts()["messages"]
    return found


def release() -> str:
    """The upstream tag the facts were extracted from."""
    return str(_facts()["release"])


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


@functools.cache
def message_name(api_version: str, kind: str) -> str | None:
    """The message carrying ``kind`` at ``api_version`` in protobuf, ``None`` when there is none.

    Built-in kinds are found through their OpenAPI tags; ``meta.k8s.io`` kinds (PartialObjectMetadata
    and its list at v1 and v1beta1, Status, WatchEvent) live in apimachinery's meta packages, the
    v1beta1 ones mostly as aliases of v1's types.
    """
    group, version = split_api_version(api_version)
    known = messages()
    name = upstream.definition_name(group, version, kind)
    if name is not None and name in known:
        return name
    if group == _META_GROUP or (group == "" and kind == "Status"):
        for candidate in (f"{META}{version}.{kind}", f"{META}v1.{kind}"):
            if candidate in known:
                return candidate
    # Kinds OpenAPI does not tag (the connect options: PodExecOptions...) live in the package
    # of the group version's tagged kinds.
    package = _packages().get((group, version))
    candidate = f"{package}.{kind}"
    return candidate if package is not None and candidate in known else None


@functools.cache
def _packages() -> Mapping[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for group, version, _, name in upstream.tagged_kinds():
        package = name.rpartition(".")[0]
        if not package.startswith(META):
            found.setdefault((group, version), package)
    return found
