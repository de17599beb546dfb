"""The three patch types of the API server, applied as kube-apiserver applies them.

Pure functions on plain JSON values: each returns a new document and never modifies its
inputs, and every failure is a :class:`PatchError` whose ``code`` and :meth:`PatchError.api_error`
say what kube-apiserver answers.

* :func:`apply_json_patch`: ``application/json-patch+json`` (RFC 6902, evanphx/json-patch v4);
* :func:`apply_merge_patch`: ``application/merge-patch+json`` (RFC 7386, same library);
* :func:`apply_strategic_merge_patch`: ``application/strategic-merge-patch+json`` with the
  :class:`PatchSchema` of a built-in kind from :func:`patch_schema_for` (``None`` for custom
  resources, which answer 415 to strategic merge).
"""

from kubeloop.server.patch.errors import GENERIC_UNPROCESSABLE, PatchError
from kubeloop.server.patch.json_patch import MAX_OPERATIONS, apply_json_patch
from kubeloop.server.patch.kinds import kinds_with_schema, patch_schema_for
from kubeloop.server.patch.merge_patch import apply_merge_patch
from kubeloop.server.patch.schema import FieldMeta, PatchSchema
from kubeloop.server.patch.strategic import apply_strategic_merge_patch

__all__ = [
    "GENERIC_UNPROCESSABLE",
    "MAX_OPERATIONS",
    "FieldMeta",
    "PatchError",
    "PatchSchema",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "kinds_with_schema",
    "patch_schema_for",
]
