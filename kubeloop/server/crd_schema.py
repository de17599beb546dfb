"""Structural-schema handling of custom resources: pruning, defaulting and validation.

The CRD's ``openAPIV3Schema`` is an OpenAPI 3.0 schema with Kubernetes extensions. It is
translated once into a JSON-schema (draft 4) document for ``jsonschema``: ``nullable`` admits
null, ``x-kubernetes-int-or-string`` admits an integer or a string. Pruning drops fields the
schema does not declare unless ``x-kubernetes-preserve-unknown-fields`` is set, as 1.20
servers do for structural schemas; ``apiVersion``, ``kind`` and ``metadata`` at the root (and
in embedded resources) always stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from kubeloop.api.status import FieldError, invalid, not_supported, required, type_invalid

Obj = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _to_json_schema(schema: Any) -> Any:
    """Translate an OpenAPI v3 schema (Kubernetes flavour) into a draft-4 JSON schema."""
    if isinstance(schema, list):
        return [_to_json_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: Obj = {}
    for key, value in schema.items():
        if key.startswith("x-kubernetes-") or key in ("nullable", "format", "default", "example",
                                                       "externalDocs", "description"):
            continue
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {k: _to_json_schema(v) for k, v in value.items()} if isinstance(value, Mapping) else value
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = _to_json_schema(value)
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string") is True:
        out.pop("type", None)
        out = {"allOf": [out, {"anyOf": [{"type": "integer"}, {"type": "string"}]}]}
    if schema.get("nullable") is True:
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _path_text(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class CustomResource:
    """Pruning, defaulting and validation for the objects of one served CRD version."""

    def __init__(self, schema: Mapping[str, Any], has_status: bool) -> None:
        self.schema = schema
        self.has_status = has_status
        self._validator = jsonschema.Draft4Validator(_to_json_schema(schema)) if schema else None

    @staticmethod
    def schema_problem(schema: Mapping[str, Any]) -> str:
        """Why ``schema`` cannot be used (empty when it can)."""
        try:
            jsonschema.Draft4Validator.check_schema(_to_json_schema(schema))
        except jsonschema.SchemaError as error:
            return str(error.message)
        return ""

    def prepare(self, obj: Obj) -> None:
        """Prune undeclared fields and fill schema defaults, in place."""
        if not self.schema:
            return
        _prune(obj, self.schema, root=True)

    def validate(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        errors: list[FieldError] = []
        if self._validator is None:
            return errors
        for error in sorted(self._validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            errors.append(_field_error(error))
        return errors


def _field_error(error: jsonschema.ValidationError) -> FieldError:
    path = _path_text(error.absolute_path)
    shown = path or "<root>"
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return required(f"{path}.{missing}" if path else missing)
    if error.validator == "type":
        expected = error.validator_value
        return type_invalid(shown, error.instance, f"{shown} in body must be of type {expected}: "
                                                   f"\"{_type_name(error.instance)}\"")
    if error.validator == "enum":
        return not_supported(shown, error.instance, [str(v) for v in error.validator_value])
    if error.validator == "minimum":
        return invalid(shown, error.instance, f"{shown} in body should be greater than or equal to "
                                              f"{error.validator_value}")
    if error.validator == "maximum":
        return invalid(shown, error.instance, f"{shown} in body should be less than or equal to "
                                              f"{error.validator_value}")
    return invalid(shown, error.instance, f"{shown} in body {error.message}")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _prune(value: Any, schema: Mapping[str, Any], root: bool = False) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        additional = schema.get("additionalProperties")
        keep_unknown = schema.get(_PRESERVE) is True or additional is True
        keep_meta = root or schema.get(_EMBEDDED) is True
        for key in list(value):
            if keep_meta and key in _ROOT_FIELDS:
                # Type metadata and ObjectMeta are the server's, whatever the schema says of them
                # (upstream decodes them into their Go types instead of pruning them).
                continue
            sub = properties.get(key)
            if isinstance(sub, Mapping):
                _prune(value[key], sub)
            elif isinstance(additional, Mapping):
                _prune(value[key], additional)
            elif not keep_unknown:
                del value[key]
        for key, sub in properties.items():
            if key not in value and isinstance(sub, Mapping) and "default" in sub:
                value[key] = _copy(sub["default"])
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _prune(item, items)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value

