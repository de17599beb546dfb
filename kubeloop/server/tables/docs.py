"""Column descriptions taken from the API's field documentation, as upstream derives them.

kube-apiserver's printers (``pkg/printers/internalversion/printers.go``) describe most columns
with the Go doc of the field they show (``metav1.ObjectMeta{}.SwaggerDoc()["name"]``). The same
texts are the ``description`` of each property in the OpenAPI definitions the server already
loads (:mod:`kubeloop.server.kinds.upstream`), so a :class:`FieldDoc` names the definition and the
property and is resolved on first use, not at import (loading the definitions costs a parse of
1.4 MB). Where upstream reads the doc of an API version that 1.33 no longer serves
(``extensions/v1beta1``, ``batch/v1beta1``, ...), the v1 definition of the same type is used.
A field without documentation (upstream asks ``ObjectMeta`` for ``handler``) reads as ``""``,
as Go's map lookup gives.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kubeloop.server.kinds.upstream import definitions

_PREFIXES = ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis.", "io.k8s.kube-aggregator.pkg.apis.")


@dataclass(frozen=True)
class FieldDoc:
    """The documentation of ``field`` in the definition ``type_name`` (``core.v1.ServiceSpec``;
    ``meta.v1.ObjectMeta`` for apimachinery's types)."""

    type_name: str
    field: str

    def text(self) -> str:
        return field_doc(self.type_name, self.field)


@functools.cache
def field_doc(type_name: str, field: str) -> str:
    """The description of ``field`` in the first definition named ``<prefix><type_name>``."""
    loaded = definitions()
    for prefix in _PREFIXES:
        schema = loaded.get(prefix + type_name)
        if schema is not None:
            prop = schema.get("properties", {}).get(field)
            description = prop.get("description") if isinstance(prop, dict) else None
            return description if isinstance(description, str) else ""
    return ""


def meta(field: str) -> FieldDoc:
    """A field of ``ObjectMeta`` (``name``, ``creationTimestamp``)."""
    return FieldDoc("meta.v1.ObjectMeta", field)
