"""Events, as core/v1 ``Event`` and as events.k8s.io/v1 ``Event``.

Both versions are one internal type upstream, so they share one set of rules and error paths
use the internal field names (``involvedObject``, ``message``, ``source``, ``count``) whatever
the request version. core/v1 requests get only the lenient legacy checks (what client-go's
recorder and kopf send); events.k8s.io/v1 requests get the full ``ValidateEventCreate`` /
``ValidateEventUpdate`` rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import go_quote, invalid, required
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    go_time,
    semantically_equal,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)

EVENTS_GROUP = "events.k8s.io"
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024

# events.k8s.io/v1 field -> internal (core/v1) field.
_NEW_TO_INTERNAL = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_OBJECT_REFERENCE_FIELDS = (
    ("Kind", "kind"), ("Namespace", "namespace"), ("Name", "name"), ("UID", "uid"),
    ("APIVersion", "apiVersion"), ("ResourceVersion", "resourceVersion"), ("FieldPath", "fieldPath"),
)


def internal_event(event: Mapping[str, Any], group: str) -> dict[str, Any]:
    """The event with internal field names (``reportingComponent`` becomes ``reportingController``)."""
    view: dict[str, Any] = {}
    for field_name, value in event.items():
        if group == EVENTS_GROUP:
            view[_NEW_TO_INTERNAL.get(field_name, field_name)] = value
        elif field_name == "reportingComponent":
            view["reportingController"] = value
        else:
            view[field_name] = value
    meta = event.get("metadata")
    view["namespace"] = meta.get("namespace") if isinstance(meta, Mapping) else None
    return view


def _text(view: Mapping[str, Any], name: str) -> str:
    value = view.get(name)
    return value if isinstance(value, str) else ""


def _involved(view: Mapping[str, Any]) -> Mapping[str, Any]:
    value = view.get("involvedObject")
    return value if isinstance(value, Mapping) else {}


def _legacy(view: Mapping[str, Any], group: str) -> Errors:
    """Rules every request version gets (``legacyValidateEvent``)."""
    errs: Errors = []
    namespace = _text(view, "namespace")
    involved_namespace = _involved(view).get("namespace")
    involved_namespace = involved_namespace if isinstance(involved_namespace, str) else ""
    mismatch = "does not match event.namespace"
    if not view.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                errs.append(invalid("involvedObject.namespace", involved_namespace, mismatch))
        elif namespace != involved_namespace:
            errs.append(invalid("involvedObject.namespace", involved_namespace, mismatch))
    else:
        controller_field = "reportingComponent" if group == "" else "reportingController"
        if not involved_namespace and namespace not in ("default", "kube-system"):
            errs.append(invalid("involvedObject.namespace", involved_namespace, mismatch))
        controller = _text(view, "reportingController")
        if not controller:
            errs.append(required(controller_field))
        errs.extend(invalid(controller_field, controller, m) for m in names.qualified_name_errors(controller))
        for field_name, limit in (("reportingInstance", REPORTING_INSTANCE_LIMIT), ("action", ACTION_LIMIT),
                                  ("reason", REASON_LIMIT)):
            value = _text(view, field_name)
            if not value:
                errs.append(required(field_name))
            if len(value) > limit:
                errs.append(invalid(field_name, "", f"can have at most {limit} characters"))
        if len(_text(view, "message")) > NOTE_LIMIT:
            errs.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    errs.extend(invalid("namespace", namespace, m) for m in names.dns1123_subdomain_errors(namespace))
    return errs


def _series(view: Mapping[str, Any]) -> Errors:
    series = view.get("series")
    if not isinstance(series, Mapping):
        return []
    errs: Errors = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def validate_event_create(event: Mapping[str, Any], group: str) -> Errors:
    view = internal_event(event, group)
    errs = _legacy(view, group)
    if group != EVENTS_GROUP:
        return errs
    errs.extend(validate_object_meta(event, True, name_is_dns_subdomain))
    errs.extend(_series(view))
    if not view.get("eventTime"):
        errs.append(required("eventTime"))
    event_type = _text(view, "type")
    if event_type not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {event_type}"))
    for field_name in ("firstTimestamp", "lastTimestamp", "count"):
        if view.get(field_name):
            errs.append(invalid(field_name, "", "needs to be unset"))
    source = view.get("source")
    if isinstance(source, Mapping) and (source.get("component") or source.get("host")):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def _go_reference(ref: Any) -> GoLiteral:
    if not isinstance(ref, Mapping):
        return GoLiteral("null")
    body = ", ".join(f"{go_name}:{go_quote(str(ref.get(json_name) or ''))}"
                     for go_name, json_name in _OBJECT_REFERENCE_FIELDS)
    return GoLiteral(f"core.ObjectReference{{{body}}}")


def _go_source(source: Any) -> GoLiteral:
    source = source if isinstance(source, Mapping) else {}
    return GoLiteral(f"core.EventSource{{Component:{go_quote(str(source.get('component') or ''))}, "
                     f"Host:{go_quote(str(source.get('host') or ''))}}}")


def _shown_time(value: Any) -> GoLiteral:
    return go_time(value) or GoLiteral("0001-01-01 00:00:00 +0000 UTC")


def validate_event_update(new: Mapping[str, Any], old: Mapping[str, Any], group: str) -> Errors:
    new_view = internal_event(new, group)
    errs = _legacy(new_view, group)
    if group != EVENTS_GROUP:
        return errs
    old_view = internal_event(old, group)
    errs.extend(validate_object_meta_update(new, old))
    if not semantically_equal(new_view.get("series"), old_view.get("series")):
        errs.extend(_series(new_view))
    checks: list[tuple[str, Any]] = [
        ("involvedObject", _go_reference(new_view.get("involvedObject"))),
        ("reason", _text(new_view, "reason")),
        ("message", _text(new_view, "message")),
        ("source", _go_source(new_view.get("source"))),
        ("firstTimestamp", _shown_time(new_view.get("firstTimestamp"))),
        ("lastTimestamp", _shown_time(new_view.get("lastTimestamp"))),
        ("count", new_view.get("count") or 0),
        ("reason", _text(new_view, "reason")),
        ("type", _text(new_view, "type")),
        ("eventTime", _shown_time(new_view.get("eventTime"))),
        ("action", _text(new_view, "action")),
        ("related", _go_reference(new_view.get("related"))),
        ("reportingController", _text(new_view, "reportingController")),
        ("reportingInstance", _text(new_view, "reportingInstance")),
    ]
    for field_name, shown in checks:
        if field_name in ("firstTimestamp", "lastTimestamp", "eventTime"):
            same = _shown_time(new_view.get(field_name)) == _shown_time(old_view.get(field_name))
        else:
            same = semantically_equal(new_view.get(field_name), old_view.get(field_name))
        if not same:
            errs.append(invalid(field_name, shown, FIELD_IMMUTABLE))
    return errs
