"""meta/v1 and the apimachinery value types every kind refers to.

``Time``, ``MicroTime``, ``IntOrString`` and ``Quantity`` are strings on the wire (with a
format naming their syntax), ``RawExtension`` and ``FieldsV1`` are free-form objects. Field
names and types follow apimachinery; the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    INT_OR_STRING,
    META,
    QUANTITY,
    RAW_EXTENSION,
    Schema,
    any_object,
    array,
    boolean,
    definition,
    gvk,
    int64,
    integer,
    ref,
    string,
    string_map,
    type_meta_fields,
)

SERVED_GROUP_VERSIONS = (
    ("", "v1"), ("apps", "v1"), ("autoscaling", "v1"), ("coordination.k8s.io", "v1"),
    ("events.k8s.io", "v1"), ("apiextensions.k8s.io", "v1"),
)
"""Group versions whose requests may carry meta/v1 option kinds (DeleteOptions, WatchEvent)."""


def _in_every_group(kind: str) -> list[dict[str, str]]:
    return [gvk(group, version, kind) for group, version in SERVED_GROUP_VERSIONS]


def _time(description: str) -> Schema:
    return {"description": description, "type": "string", "format": "date-time"}


DEFINITIONS: dict[str, Schema] = {
    META + "Time": _time("A point in time as an RFC 3339 string with second precision, in UTC."),
    META + "MicroTime": _time("A point in time as an RFC 3339 string with microsecond precision."),
    INT_OR_STRING: {
        "description": "Either an integer or a string (such as a percentage like \"25%\" or a port name).",
        "type": "string",
        "format": "int-or-string",
    },
    QUANTITY: {
        "description": "A decimal amount with an optional suffix: a binary (Ki, Mi, Gi, ...) or decimal "
        "(m, k, M, G, ...) multiplier or an exponent, such as 500m, 128Mi or 1e3.",
        "type": "string",
    },
    RAW_EXTENSION: any_object("An embedded object of any kind, kept as JSON."),
    META + "FieldsV1": any_object("A set of field paths in the compact trie form server-side apply uses."),
    META + "Patch": any_object("The body of a patch request; its format depends on the Content-Type."),
    META + "ObjectMeta": definition(
        "Metadata every persisted object carries.",
        {
            "annotations": string_map("Arbitrary non-identifying key-value data for tools and humans."),
            "creationTimestamp": ref(META + "Time", "When the server created the object (read-only)."),
            "deletionGracePeriodSeconds": int64("Seconds the object is given to terminate once deletion began."),
            "deletionTimestamp": ref(META + "Time", "When the object will be or was removed; set when deletion "
                                                    "is requested (read-only)."),
            "finalizers": array(string(), "Tokens that must all be removed before the object is deleted.",
                                strategy="merge"),
            "generateName": string("A prefix from which the server makes a unique name when name is empty."),
            "generation": int64("A sequence number of changes to the desired state (read-only)."),
            "labels": string_map("Key-value pairs used to select and group objects."),
            "managedFields": array(ref(META + "ManagedFieldsEntry"),
                                   "Which manager owns which fields, for server-side apply."),
            "name": string("The object's name, unique within its namespace and kind."),
            "namespace": string("The namespace the object lives in; empty for cluster-scoped kinds."),
            "ownerReferences": array(ref(META + "OwnerReference"),
                                     "Objects this one depends on; it is garbage collected when they are gone.",
                                     strategy="merge", merge_key="uid"),
            "resourceVersion": string("An opaque version that changes on every write, for optimistic "
                                      "concurrency and watches (read-only)."),
            "selfLink": string("Deprecated and unset."),
            "uid": string("A cluster-wide unique ID of this object instance (read-only)."),
        },
    ),
    META + "ListMeta": definition(
        "Metadata of a list response.",
        {
            "continue": string("A token to fetch the next page when the list was limited."),
            "remainingItemCount": int64("How many items follow this page, when known."),
            "resourceVersion": string("The version of the collection the list reflects; watch from it."),
            "selfLink": string("Deprecated and unset."),
        },
    ),
    META + "LabelSelector": definition(
        "A query over labels; all conditions must hold. An empty selector matches everything.",
        {
            "matchExpressions": array(ref(META + "LabelSelectorRequirement"), "Set-based requirements."),
            "matchLabels": string_map("Labels that must be present with exactly these values."),
        },
        map_type="atomic",
    ),
    META + "LabelSelectorRequirement": definition(
        "A requirement on one label.",
        {
            "key": string("The label key."),
            "operator": string("In, NotIn, Exists or DoesNotExist."),
            "values": array(string(), "Values for In and NotIn; empty for Exists and DoesNotExist."),
        },
        ["key", "operator"],
    ),
    META + "OwnerReference": definition(
        "Names an object that owns this one, in the same namespace or cluster-scoped.",
        {
            "apiVersion": string("API version of the owner."),
            "blockOwnerDeletion": boolean("Foreground deletion of the owner waits for this object."),
            "controller": boolean("Whether the owner is the managing controller; at most one reference is."),
            "kind": string("Kind of the owner."),
            "name": string("Name of the owner."),
            "uid": string("UID of the owner."),
        },
        ["apiVersion", "kind", "name", "uid"],
        map_type="atomic",
    ),
    META + "ManagedFieldsEntry": definition(
        "The fields one manager owns through one kind of operation.",
        {
            "apiVersion": string("The version the field set is expressed in."),
            "fieldsType": string("The format of the field set; always FieldsV1."),
            "fieldsV1": ref(META + "FieldsV1", "The owned fields."),
            "manager": string("The manager's name."),
            "operation": string("Apply or Update."),
            "subresource": string("The subresource the operation went through, if any."),
            "time": ref(META + "Time", "When the entry last changed."),
        },
    ),
    META + "Preconditions": definition(
        "Conditions the object must meet for the operation to proceed.",
        {
            "resourceVersion": string("The object's resourceVersion must equal this."),
            "uid": string("The object's UID must equal this."),
        },
    ),
    META + "DeleteOptions": definition(
        "Options of a delete request.",
        {
            **type_meta_fields(),
            "dryRun": array(string(), "All to validate without persisting."),
            "gracePeriodSeconds": int64("Seconds before the object is removed; 0 deletes at once."),
            "orphanDependents": boolean("Deprecated: use propagationPolicy Orphan."),
            "preconditions": ref(META + "Preconditions", "Must hold for the delete to happen."),
            "propagationPolicy": string("Orphan, Background or Foreground: what happens to dependents."),
        },
        kinds=_in_every_group("DeleteOptions"),
    ),
    META + "StatusCause": definition(
        "One reason an operation failed.",
        {
            "field": string("The field the cause is about, as a path such as spec.replicas."),
            "message": string("A human-readable description."),
            "reason": string("A machine-readable cause, such as FieldValueInvalid."),
        },
    ),
    META + "StatusDetails": definition(
        "Extra data about a failure.",
        {
            "causes": array(ref(META + "StatusCause"), "Individual causes."),
            "group": string("Group of the resource involved."),
            "kind": string("Kind of the resource involved."),
            "name": string("Name of the resource involved."),
            "retryAfterSeconds": integer("Seconds to wait before retrying."),
            "uid": string("UID of the resource involved."),
        },
    ),
    META + "Status": definition(
        "The result of an operation that does not return an object, and every error.",
        {
            **type_meta_fields(),
            "code": integer("The HTTP status code."),
            "details": ref(META + "StatusDetails", "Extra data about the result."),
            "message": string("A human-readable description."),
            "metadata": ref(META + "ListMeta", "Standard list metadata."),
            "reason": string("A machine-readable cause, such as NotFound or Conflict."),
            "status": string("Success or Failure."),
        },
        kinds=[gvk("", "v1", "Status")],
    ),
    META + "WatchEvent": definition(
        "One event of a watch stream.",
        {
            "object": ref(RAW_EXTENSION, "The object (or a Status for ERROR events)."),
            "type": string("ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."),
        },
        ["type", "object"],
        kinds=_in_every_group("WatchEvent"),
    ),
}
