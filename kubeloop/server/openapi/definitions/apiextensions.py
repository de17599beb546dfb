"""apiextensions.k8s.io/v1: CustomResourceDefinition and the JSON-schema type it embeds.

``JSONSchemaProps`` refers to itself; the union-valued members (``...OrBool``, ``...OrArray``,
``JSON``) have neither type nor properties, which kubectl treats as "any value". Field names and
types follow apiextensions-apiserver 1.28; the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    APIEXTENSIONS,
    META,
    Schema,
    array,
    boolean,
    definition,
    gvk,
    int64,
    integer,
    list_definition,
    map_of,
    number,
    ref,
    string,
    type_meta_fields,
)

X = APIEXTENSIONS
CRD_KIND = gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


def _props(description: str = "") -> Schema:
    return ref(X + "JSONSchemaProps", description)


def _any(description: str) -> Schema:
    """A definition holding any JSON value (no type, no properties)."""
    return {"description": description}


_JSON_SCHEMA_PROPS: dict[str, Schema] = {
    "$ref": string("A reference to another schema (not allowed in CRD schemas)."),
    "$schema": string("The JSON-schema dialect."),
    "additionalItems": ref(X + "JSONSchemaPropsOrBool", "The schema of items past those listed, or false."),
    "additionalProperties": ref(X + "JSONSchemaPropsOrBool", "The schema of properties not listed, or false."),
    "allOf": array(_props(), "Schemas that must all match."),
    "anyOf": array(_props(), "Schemas of which at least one must match."),
    "default": ref(X + "JSON", "A value applied when the field is absent."),
    "definitions": map_of(_props(), "Named sub-schemas."),
    "dependencies": map_of(ref(X + "JSONSchemaPropsOrStringArray"), "Property dependencies."),
    "description": string("Documentation of the value."),
    "enum": array(ref(X + "JSON"), "The allowed values."),
    "example": ref(X + "JSON", "An example value."),
    "exclusiveMaximum": boolean("Whether maximum itself is excluded."),
    "exclusiveMinimum": boolean("Whether minimum itself is excluded."),
    "externalDocs": ref(X + "ExternalDocumentation", "Further documentation."),
    "format": string("The string format, such as date-time or int32."),
    "id": string("The schema's ID."),
    "items": ref(X + "JSONSchemaPropsOrArray", "The schema of array items."),
    "maxItems": int64("The most items an array may have."),
    "maxLength": int64("The longest a string may be."),
    "maxProperties": int64("The most properties an object may have."),
    "maximum": number("The largest allowed number."),
    "minItems": int64("The fewest items an array may have."),
    "minLength": int64("The shortest a string may be."),
    "minProperties": int64("The fewest properties an object may have."),
    "minimum": number("The smallest allowed number."),
    "multipleOf": number("Numbers must be a multiple of this."),
    "not": _props("A schema that must not match."),
    "nullable": boolean("Whether null is allowed (and kept)."),
    "oneOf": array(_props(), "Schemas of which exactly one must match."),
    "pattern": string("A regular expression strings must match."),
    "patternProperties": map_of(_props(), "Schemas of properties by name pattern."),
    "properties": map_of(_props(), "Schemas of the object's properties."),
    "required": array(string(), "Properties that must be present."),
    "title": string("A short title."),
    "type": string("object, array, string, integer, number or boolean."),
    "uniqueItems": boolean("Whether array items must be distinct."),
    "x-kubernetes-embedded-resource": boolean("The value is a whole object with apiVersion, kind and metadata."),
    "x-kubernetes-int-or-string": boolean("The value may be an integer or a string."),
    "x-kubernetes-list-map-keys": array(string(), "The key fields of a list of type map."),
    "x-kubernetes-list-type": string("atomic, set or map."),
    "x-kubernetes-map-type": string("granular or atomic."),
    "x-kubernetes-preserve-unknown-fields": boolean("Keep fields the schema does not name."),
    "x-kubernetes-validations": array(ref(X + "ValidationRule"), "CEL rules the value must satisfy.",
                                      list_type="map", map_keys=("rule",)),
}

DEFINITIONS: dict[str, Schema] = {
    X + "CustomResourceDefinition": definition(
        "Declares a custom resource the server then serves under its own group.",
        {
            **type_meta_fields(),
            "metadata": ref(META + "ObjectMeta", "Standard object metadata; the name is <plural>.<group>."),
            "spec": ref(X + "CustomResourceDefinitionSpec", "The custom resource's names, scope and versions."),
            "status": ref(X + "CustomResourceDefinitionStatus", "The observed state of the definition."),
        },
        ["spec"],
        kinds=[CRD_KIND],
    ),
    X + "CustomResourceDefinitionList": list_definition(
        X + "CustomResourceDefinition", "A list of CustomResourceDefinitions.",
        gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinitionList"),
    ),
    X + "CustomResourceDefinitionSpec": definition(
        "What the custom resource is called and how it is served.",
        {
            "conversion": ref(X + "CustomResourceConversion", "How objects convert between versions."),
            "group": string("The API group, a DNS subdomain with at least one dot."),
            "names": ref(X + "CustomResourceDefinitionNames", "The resource's names."),
            "preserveUnknownFields": boolean("Deprecated: keep unknown fields; use the schema extension."),
            "scope": string("Namespaced or Cluster."),
            "versions": array(ref(X + "CustomResourceDefinitionVersion"),
                              "The served versions; exactly one is the storage version."),
        },
        ["group", "names", "scope", "versions"],
    ),
    X + "CustomResourceDefinitionNames": definition(
        "The names of a custom resource.",
        {
            "categories": array(string(), "Groups of resources this one belongs to, such as all."),
            "kind": string("The CamelCase kind of the objects."),
            "listKind": string("The kind of lists; <kind>List by default."),
            "plural": string("The lowercase plural used in URLs."),
            "shortNames": array(string(), "Short aliases for kubectl."),
            "singular": string("The lowercase singular name."),
        },
        ["plural", "kind"],
    ),
    X + "CustomResourceDefinitionVersion": definition(
        "One version of a custom resource.",
        {
            "additionalPrinterColumns": array(ref(X + "CustomResourceColumnDefinition"),
                                              "Extra columns kubectl get shows."),
            "deprecated": boolean("Whether the version is deprecated."),
            "deprecationWarning": string("The warning returned to clients of a deprecated version."),
            "name": string("The version name, such as v1alpha1."),
            "schema": ref(X + "CustomResourceValidation", "The schema objects of this version follow."),
            "served": boolean("Whether the version is served."),
            "storage": boolean("Whether objects are stored in this version."),
            "subresources": ref(X + "CustomResourceSubresources", "The status and scale subresources."),
        },
        ["name", "served", "storage"],
    ),
    X + "CustomResourceColumnDefinition": definition(
        "A column of the table kubectl get prints.",
        {
            "description": string("What the column shows."),
            "format": string("A format hint for the cell, such as name or date-time."),
            "jsonPath": string("A JSON path into each object giving the cell value."),
            "name": string("The column heading."),
            "priority": integer("0 shows the column always; higher numbers only in wide output."),
            "type": string("integer, number, string, boolean or date."),
        },
        ["name", "type", "jsonPath"],
    ),
    X + "CustomResourceValidation": definition(
        "The schema of a version.",
        {"openAPIV3Schema": _props("A structural OpenAPI v3 schema of the objects.")},
    ),
    X + "CustomResourceSubresources": definition(
        "Subresources a version serves.",
        {
            "scale": ref(X + "CustomResourceSubresourceScale", "Serve /scale from these paths."),
            "status": ref(X + "CustomResourceSubresourceStatus", "Serve /status for the status field."),
        },
    ),
    X + "CustomResourceSubresourceScale": definition(
        "Where the scale subresource finds its numbers.",
        {
            "labelSelectorPath": string("A JSON path to the selector string reported in status.selector."),
            "specReplicasPath": string("A JSON path to the desired replicas."),
            "statusReplicasPath": string("A JSON path to the observed replicas."),
        },
        ["specReplicasPath", "statusReplicasPath"],
    ),
    X + "CustomResourceSubresourceStatus": {
        "description": "Enables the status subresource (no settings).", "type": "object",
    },
    X + "CustomResourceConversion": definition(
        "How objects convert between versions.",
        {
            "strategy": string("None or Webhook."),
            "webhook": ref(X + "WebhookConversion", "The webhook, for strategy Webhook."),
        },
        ["strategy"],
    ),
    X + "WebhookConversion": definition(
        "A conversion webhook.",
        {
            "clientConfig": ref(X + "WebhookClientConfig", "How to reach the webhook."),
            "conversionReviewVersions": array(string(), "ConversionReview versions the webhook understands."),
        },
        ["conversionReviewVersions"],
    ),
    X + "WebhookClientConfig": definition(
        "How to reach a webhook.",
        {
            "caBundle": string("PEM CA bundle to verify the webhook's certificate.", "byte"),
            "service": ref(X + "ServiceReference", "A service in the cluster."),
            "url": string("A URL outside the cluster."),
        },
    ),
    X + "ServiceReference": definition(
        "A service that serves a webhook.",
        {
            "name": string("The service name."),
            "namespace": string("The service namespace."),
            "path": string("The URL path to call."),
            "port": integer("The service port. Defaults to 443."),
        },
        ["namespace", "name"],
    ),
    X + "CustomResourceDefinitionStatus": definition(
        "The observed state of a definition.",
        {
            "acceptedNames": ref(X + "CustomResourceDefinitionNames", "The names actually served."),
            "conditions": array(ref(X + "CustomResourceDefinitionCondition"), "The latest observations.",
                                list_type="map", map_keys=("type",)),
            "storedVersions": array(string(), "Versions objects have ever been stored in."),
        },
    ),
    X + "CustomResourceDefinitionCondition": definition(
        "One observed aspect of a definition's state.",
        {
            "lastTransitionTime": ref(META + "Time", "When the status last changed."),
            "message": string("A human-readable explanation."),
            "reason": string("A machine-readable cause."),
            "status": string("True, False or Unknown."),
            "type": string("Established, NamesAccepted, ..."),
        },
        ["type", "status"],
    ),
    X + "ExternalDocumentation": definition(
        "A link to further documentation.",
        {"description": string("What the link is about."), "url": string("The link.")},
    ),
    X + "ValidationRule": definition(
        "A CEL validation rule.",
        {
            "fieldPath": string("The field reported when the rule fails."),
            "message": string("The message when the rule fails."),
            "messageExpression": string("A CEL expression producing the message."),
            "reason": string("The machine-readable reason reported."),
            "rule": string("The CEL expression that must be true."),
        },
        ["rule"],
    ),
    X + "JSONSchemaProps": definition("A JSON schema (the OpenAPI v3 subset CRDs allow).", _JSON_SCHEMA_PROPS),
    X + "JSON": _any("Any JSON value."),
    X + "JSONSchemaPropsOrArray": _any("A schema, or a list of schemas."),
    X + "JSONSchemaPropsOrBool": _any("A schema, or a boolean (true allows anything)."),
    X + "JSONSchemaPropsOrStringArray": _any("A schema, or a list of property names."),
}
