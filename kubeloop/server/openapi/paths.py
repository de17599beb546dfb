"""The ``paths`` section: one Swagger operation per verb of every served resource.

kubectl reads little of it, but what it reads must be there: ``kubectl diff`` and any
``--dry-run=server`` look for the first path whose PATCH operation carries the kind's
``x-kubernetes-group-version-kind`` and accept the kind only when that operation has a ``dryRun``
query parameter. Parameters are written out in full at each operation (no ``#/parameters``
references), which keeps the protobuf form free of references to resolve.
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.openapi.dsl import AUTOSCALING, GVK_EXTENSION, META, Schema, ref
from kubeloop.server.openapi.served import ServedResource

ACTION_EXTENSION = "x-kubernetes-action"
PATCH_CONTENT_TYPES = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]
# Custom resources take no strategic merge patch (the server answers 415), and kubectl reads
# this list to choose its patch type: listing it for a CRD would make ``apply`` try one.
CUSTOM_PATCH_CONTENT_TYPES = [t for t in PATCH_CONTENT_TYPES if t != "application/strategic-merge-patch+json"]


def _query(name: str, kind: str, description: str) -> Schema:
    return {"name": name, "in": "query", "type": kind, "uniqueItems": True, "description": description}


def _path(name: str, description: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "type": "string", "uniqueItems": True,
            "description": description}


def _body(schema_name: str) -> Schema:
    return {"name": "body", "in": "body", "required": True, "schema": ref(schema_name)}


_PRETTY = _query("pretty", "string", "Indent the JSON output.")
_DRY_RUN = _query("dryRun", "string", "All: validate and admit the request without persisting it.")
_FIELD_MANAGER = _query("fieldManager", "string", "The name of the actor making the change, for field ownership.")
_FORCE = _query("force", "boolean", "Apply requests only: take over fields other managers own.")
_FIELD_VALIDATION = _query("fieldValidation", "string",
                           "Ignore, Warn (the default) or Strict: what happens to fields the kind does not declare.")
# Built-in kinds are decoded strictly by the server, so their writes declare fieldValidation:
# kubectl 1.25+ then leaves unknown-field checks to the server. Custom resources are pruned
# without strict errors here, so kubectl keeps checking them on its side.
_WRITE = [_DRY_RUN, _FIELD_MANAGER]
_BUILTIN_WRITE = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
_LIST = [
    _query("allowWatchBookmarks", "boolean", "Watch only: ask for BOOKMARK events."),
    _query("continue", "string", "The token of the next page of a limited list."),
    _query("fieldSelector", "string", "Only objects whose fields match, such as metadata.name=web."),
    _query("labelSelector", "string", "Only objects whose labels match, such as app=web."),
    _query("limit", "integer", "The most objects to return; the rest come with a continue token."),
    _query("resourceVersion", "string", "Read at or after this version."),
    _query("resourceVersionMatch", "string", "Exact or NotOlderThan: how resourceVersion applies."),
    _query("timeoutSeconds", "integer", "End a list or watch after this many seconds."),
    _query("watch", "boolean", "Stream changes instead of listing."),
]
_DELETE = [
    _DRY_RUN,
    _query("gracePeriodSeconds", "integer", "Seconds before the object is removed; 0 deletes at once."),
    _query("orphanDependents", "boolean", "Deprecated: use propagationPolicy Orphan."),
    _query("propagationPolicy", "string", "Orphan, Background or Foreground: what happens to dependents."),
]


_DESCRIPTIONS = {
    "read": "Read{part} a {kind}.",
    "replace": "Replace{part} a {kind}.",
    "patch": "Partially update{part} a {kind}.",
    "create": "Create a {kind}.",
    "delete": "Delete a {kind}.",
    "list": "List or watch {kind} objects.",
    "deletecollection": "Delete every {kind} that matches the selectors.",
}


def _part(op_id: str) -> str:
    """`` the status of`` / `` the scale of`` for subresource operations, else nothing."""
    for suffix in ("Status", "Scale"):
        if op_id.endswith(suffix):
            return f" the {suffix.lower()} of"
    return ""


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").split(".") if part)


def _responses(schema_name: str, *codes: str) -> dict[str, Any]:
    texts = {"200": "OK", "201": "Created", "202": "Accepted"}
    found: dict[str, Any] = {code: {"description": texts[code], "schema": ref(schema_name)} for code in codes}
    found["401"] = {"description": "Unauthorized"}
    return found


class _Builder:
    """Operations of one resource; ``operation`` fills in what every operation shares."""

    def __init__(self, served: ServedResource, definition: str, list_definition: str | None) -> None:
        self.served = served
        self.definition = definition
        self.list_definition = list_definition
        group = served.group.split(".")[0] if served.group.endswith(".k8s.io") else served.group
        self.tag = f"{(served.group or 'core').replace('.', '_')}_{served.version}"
        self.id_part = f"{_camel(group or 'core')}{_camel(served.version)}"

    def _patch_types(self) -> list[str]:
        return list(CUSTOM_PATCH_CONTENT_TYPES if self.served.custom else PATCH_CONTENT_TYPES)

    def operation(self, verb: str, action: str, op_id: str, response: str, codes: tuple[str, ...],
                  parameters: list[Schema], kind: dict[str, str] | None = None) -> Schema:
        served = self.served
        gvk = kind or {"group": served.group, "version": served.version, "kind": served.kind}
        operation: Schema = {
            "description": _DESCRIPTIONS[verb].format(kind=served.kind, part=_part(op_id)),
            "operationId": f"{verb}{self.id_part}{op_id}",
            "consumes": self._patch_types() if action == "patch" else ["*/*"],
            "produces": ["application/json"],
            "schemes": ["https"],
            "tags": [self.tag],
            "responses": _responses(response, *codes),
            ACTION_EXTENSION: action,
            GVK_EXTENSION: gvk,
        }
        if parameters:
            operation["parameters"] = parameters
        return operation

    def object_item(self, op_id: str, schema_name: str, kind: dict[str, str] | None = None) -> Schema:
        """GET/PUT/PATCH (and DELETE on the object itself) of one named object or subresource."""
        verbs = self.served.verbs
        item: Schema = {}
        if "get" in verbs:
            item["get"] = self.operation("read", "get", op_id, schema_name, ("200",), [], kind)
        if "update" in verbs:
            item["put"] = self.operation("replace", "put", op_id, schema_name, ("200", "201"),
                                         [_body(schema_name), *self.write_parameters], kind)
        if "patch" in verbs:
            item["patch"] = self.operation("patch", "patch", op_id, schema_name, ("200", "201"),
                                           [_body(META + "Patch"), *self.write_parameters, _FORCE], kind)
        return item

    @property
    def write_parameters(self) -> list[Schema]:
        return _WRITE if self.served.custom else _BUILTIN_WRITE


def resource_paths(served: ServedResource) -> dict[str, Schema]:
    """Path items of ``served`` keyed by URL template; empty for a kind without a definition."""
    definition, list_definition = served.definition_name, served.list_definition_name
    if definition is None or (list_definition is None and "list" in served.verbs):
        return {}
    build = _Builder(served, definition, list_definition)
    verbs = served.verbs
    base = f"/apis/{served.group}/{served.version}" if served.group else f"/api/{served.version}"
    scope = "Namespaced" if served.namespaced else ""
    collection_url = f"{base}/namespaces/{{namespace}}/{served.resource}" if served.namespaced \
        else f"{base}/{served.resource}"
    scope_params = [_path("namespace", "The object's namespace.")] if served.namespaced else []
    name_params = [_path("name", f"The name of the {served.kind}."), *scope_params, _PRETTY]
    paths: dict[str, Schema] = {}

    collection: Schema = {}
    if list_definition is not None:
        collection["get"] = build.operation("list", "list", f"{scope}{served.kind}", list_definition, ("200",),
                                            list(_LIST))
    if "create" in verbs:
        collection["post"] = build.operation("create", "post", f"{scope}{served.kind}", definition,
                                             ("200", "201", "202"), [_body(definition), *build.write_parameters])
    if "deletecollection" in verbs:
        collection["delete"] = build.operation("deletecollection", "deletecollection", f"{scope}{served.kind}",
                                               META + "Status", ("200",),
                                               [_body(META + "DeleteOptions"), *_LIST, *_DELETE])
    if collection:
        collection["parameters"] = [*scope_params, _PRETTY]
        paths[collection_url] = collection

    item = build.object_item(f"{scope}{served.kind}", definition)
    if "delete" in verbs:
        item["delete"] = build.operation("delete", "delete", f"{scope}{served.kind}", META + "Status",
                                         ("200", "202"), [_body(META + "DeleteOptions"), *_DELETE])
    if item:
        item["parameters"] = name_params
        paths[f"{collection_url}/{{name}}"] = item

    if served.namespaced and list_definition is not None:
        paths[f"{base}/{served.resource}"] = {
            "get": build.operation("list", "list", f"{served.kind}ForAllNamespaces", list_definition, ("200",),
                                   list(_LIST)),
            "parameters": [_PRETTY],
        }
    if served.status:
        status = build.object_item(f"{scope}{served.kind}Status", definition)
        status["parameters"] = name_params
        paths[f"{collection_url}/{{name}}/status"] = status
    if served.scale:
        scale_kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        scale = build.object_item(f"{scope}{served.kind}Scale", AUTOSCALING + "Scale", scale_kind)
        scale["parameters"] = name_params
        paths[f"{collection_url}/{{name}}/scale"] = scale
    return paths
