"""Objects as multi-document YAML, the way ``kubeloop manifests`` prints them and ``deploy/``
stores them: keys in the order the generator wrote them, block style, ``---`` between documents."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml


def to_yaml(objects: Iterable[dict[str, Any]]) -> str:
    return "---\n".join(yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=120)
                        for obj in objects)


def from_yaml(text: str) -> list[dict[str, Any]]:
    """The objects of a multi-document YAML text (empty documents skipped)."""
    return [doc for doc in yaml.safe_load_all(text) if doc]
