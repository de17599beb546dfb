"""The OpenAPI definitions of every built-in kind: upstream's, as published for Kubernetes 1.33.

:data:`BUILTIN_DEFINITIONS` maps upstream's definition names (``io.k8s.api.apps.v1.Deployment``)
to Swagger 2.0 schemas, with upstream's descriptions, formats and vendor extensions; they are read
from the pinned ``kubernetes-validate`` package by :mod:`kubeloop.server.kinds.upstream`.
:func:`builtin_definition_name` finds the one for a served kind. Custom resources get theirs from
their CRD (:mod:`kubeloop.server.openapi.crd_definitions`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeloop.server.kinds import upstream
from kubeloop.server.openapi.dsl import Schema


class _Definitions(Mapping[str, Schema]):
    """A read-only view loaded on first use (the schemas cost 0.2 s to read: not at import)."""

    def __getitem__(self, name: str) -> Schema:
        return upstream.definitions()[name]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(upstream.definitions())

    def __len__(self) -> int:
        return len(upstream.definitions())


BUILTIN_DEFINITIONS: Mapping[str, Schema] = _Definitions()
"""Every built-in definition by name; shared, so never mutate a schema taken from it."""


def builtin_definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in group-version-kind, ``None`` when upstream has none."""
    return upstream.definition_name(group, version, kind)
