"""HorizontalPodAutoscalers between ``autoscaling/v1`` and ``autoscaling/v2`` (the storage version).

Pure functions on plain dicts with the semantics of upstream's
``pkg/apis/autoscaling/v1/conversion.go`` (``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_...``
and back) and ``pkg/apis/autoscaling/v2/conversion.go``; v2 stands in for the internal type, which
it mirrors field for field.

v2 -> v1 (:func:`hpa_v2_to_v1`):

- the first ``Resource`` ``cpu`` metric with a ``Utilization`` target becomes
  ``spec.targetCPUUtilizationPercentage``; every other metric goes, in v1's metric format, to the
  ``autoscaling.alpha.kubernetes.io/metrics`` annotation;
- every current metric (the cpu one too: its raw value is kept) goes to ``.../current-metrics``,
  and a cpu utilization among them sets ``status.currentCPUUtilizationPercentage``;
- ``spec.behavior`` goes to ``.../behavior`` in the *internal* type's encoding (Go field names,
  ``null`` for unset pointers: upstream marshals the internal struct, which has no JSON tags);
- ``status.conditions`` go to ``.../conditions``;
- round-trip annotations the object already carried are dropped first, so only converted ones show.

v1 -> v2 (:func:`hpa_v1_to_v2`) reverses it: annotation metrics come first, the cpu target last;
an annotation that does not decode is ignored (as upstream, which only moves well-formed data);
the current metrics of the annotation replace the one ``currentCPUUtilizationPercentage`` gives;
without any metric the v1 implicit default, 80% cpu utilization, is made explicit; the round-trip
annotations are dropped. A v2 write or read drops them too (:func:`drop_round_trip_annotations`).

Annotations hold JSON as Go's ``encoding/json`` writes it: declaration order, no spaces, ``<``,
``>`` and ``&`` escaped. Quantities are passed through as written (they are not canonicalized).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

Obj = dict[str, Any]

METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS = (METRIC_SPECS_ANNOTATION, BEHAVIOR_ANNOTATION, METRIC_STATUSES_ANNOTATION,
                          CONDITIONS_ANNOTATION)
"""Upstream's ``DropRoundTripHorizontalPodAutoscalerAnnotations`` set (``pkg/apis/autoscaling/annotations.go``)."""

DEFAULT_CPU_UTILIZATION = 80
"""``autoscaling.DefaultCPUUtilization``: v1's implicit target, made explicit on conversion."""

_ZERO = "0"
"""A zero ``resource.Quantity`` as Go marshals it (v1 writes non-pointer quantities always)."""


class _Malformed(Exception):
    """An annotation whose JSON does not decode into v1's types (``json.Unmarshal`` fails)."""


# --- Go's encoding/json ------------------------------------------------------------------------


def go_json(value: Any) -> str:
    """``value`` as ``json.Marshal`` writes it (compact; ``<``, ``>``, ``&`` escaped as HTML-safe)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _field(source: Mapping[str, Any], name: str) -> Any:
    """``source[name]``, matched as ``json.Unmarshal`` matches struct fields (exact, else ignoring case)."""
    if name in source:
        return source[name]
    folded = name.casefold()
    for key, value in source.items():
        if key.casefold() == folded:
            return value
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _struct(value: Any) -> Mapping[str, Any] | None:
    """A JSON object field of an annotation (``None`` for null/absent; anything else is malformed)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _Malformed
    return value


def _string(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Malformed
    return value


def _int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise _Malformed
    return int(value)


def _quantity(value: Any) -> str | None:
    """A ``resource.Quantity`` from annotation JSON (Go accepts a string or a number)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed
    return str(int(value)) if float(value).is_integer() else repr(value)


def _put(out: Obj, key: str, value: Any) -> None:
    """Set an ``omitempty`` field: unset, empty string and empty collections are left out."""
    if value is None or value == "" or value == [] or value == {}:
        return
    out[key] = value


# --- metric specs --------------------------------------------------------------------------------


def _reference(ref: Mapping[str, Any]) -> Obj:
    """A ``CrossVersionObjectReference`` (same fields in both versions)."""
    out: Obj = {"kind": ref.get("kind") or "", "name": ref.get("name") or ""}
    _put(out, "apiVersion", ref.get("apiVersion"))
    return out


def _is_cpu_utilization(metric: Mapping[str, Any]) -> bool:
    resource = metric.get("resource")
    return (metric.get("type") == "Resource" and isinstance(resource, Mapping) and resource.get("name") == "cpu"
            and _mapping(resource.get("target")).get("averageUtilization") is not None)


def _spec_to_v1(metric: Mapping[str, Any]) -> Obj:
    """A v2 ``MetricSpec`` in v1's (annotation) ``MetricSpec`` form."""
    out: Obj = {"type": metric.get("type") or ""}
    if isinstance(metric.get("object"), Mapping):
        source = metric["object"]
        target, ident = _mapping(source.get("target")), _mapping(source.get("metric"))
        obj: Obj = {"target": _reference(_mapping(source.get("describedObject"))),
                    "metricName": ident.get("name") or "", "targetValue": target.get("value") or _ZERO}
        _put(obj, "selector", ident.get("selector"))
        _put(obj, "averageValue", target.get("averageValue"))
        out["object"] = obj
    if isinstance(metric.get("pods"), Mapping):
        source = metric["pods"]
        target, ident = _mapping(source.get("target")), _mapping(source.get("metric"))
        pods: Obj = {"metricName": ident.get("name") or "", "targetAverageValue": target.get("averageValue") or _ZERO}
        _put(pods, "selector", ident.get("selector"))
        out["pods"] = pods
    if isinstance(metric.get("resource"), Mapping):
        source = metric["resource"]
        target = _mapping(source.get("target"))
        resource: Obj = {"name": source.get("name") or ""}
        _put(resource, "targetAverageUtilization", target.get("averageUtilization"))
        _put(resource, "targetAverageValue", target.get("averageValue"))
        out["resource"] = resource
    if isinstance(metric.get("containerResource"), Mapping):
        source = metric["containerResource"]
        target = _mapping(source.get("target"))
        container: Obj = {"name": source.get("name") or ""}
        _put(container, "targetAverageUtilization", target.get("averageUtilization"))
        _put(container, "targetAverageValue", target.get("averageValue"))
        container["container"] = source.get("container") or ""
        out["containerResource"] = container
    if isinstance(metric.get("external"), Mapping):
        source = metric["external"]
        target, ident = _mapping(source.get("target")), _mapping(source.get("metric"))
        external: Obj = {"metricName": ident.get("name") or ""}
        _put(external, "metricSelector", ident.get("selector"))
        _put(external, "targetValue", target.get("value"))
        _put(external, "targetAverageValue", target.get("averageValue"))
        out["external"] = external
    return out


def _identifier(name: Any, selector: Any) -> Obj:
    out: Obj = {"name": _string(name)}
    _put(out, "selector", _struct(selector))
    return out


def _target(kind: str, value: str | None = None, average: str | None = None, utilization: int | None = None) -> Obj:
    out: Obj = {"type": kind}
    _put(out, "value", value)
    _put(out, "averageValue", average)
    _put(out, "averageUtilization", utilization)
    return out


def _spec_to_v2(metric: Any) -> Obj:
    """A v1 annotation ``MetricSpec`` as v2 (``Convert_v1_*MetricSource_To_autoscaling_*``)."""
    metric = _struct(metric) or {}
    out: Obj = {"type": _string(_field(metric, "type"))}
    source = _struct(_field(metric, "object"))
    if source is not None:
        average = _quantity(_field(source, "averageValue"))
        value = _quantity(_field(source, "targetValue")) or _ZERO
        out["object"] = {
            "describedObject": _reference_in(_field(source, "target")),
            "target": _target("AverageValue" if average is not None else "Value", value, average),
            "metric": _identifier(_field(source, "metricName"), _field(source, "selector")),
        }
    source = _struct(_field(metric, "pods"))
    if source is not None:
        out["pods"] = {
            "metric": _identifier(_field(source, "metricName"), _field(source, "selector")),
            "target": _target("AverageValue", average=_quantity(_field(source, "targetAverageValue")) or _ZERO),
        }
    for key in ("resource", "containerResource"):
        source = _struct(_field(metric, key))
        if source is None:
            continue
        utilization = _int(_field(source, "targetAverageUtilization"))
        average = _quantity(_field(source, "targetAverageValue"))
        resource: Obj = {"name": _string(_field(source, "name")),
                         "target": _target("Utilization" if utilization is not None else "AverageValue",
                                           average=average, utilization=utilization)}
        if key == "containerResource":
            resource["container"] = _string(_field(source, "container"))
        out[key] = resource
    source = _struct(_field(metric, "external"))
    if source is not None:
        external_value = _quantity(_field(source, "targetValue"))
        out["external"] = {
            "metric": _identifier(_field(source, "metricName"), _field(source, "metricSelector")),
            "target": _target("Value" if external_value is not None else "AverageValue", external_value,
                              _quantity(_field(source, "targetAverageValue"))),
        }
    return out


def _reference_in(value: Any) -> Obj:
    ref = _struct(value) or {}
    out: Obj = {"kind": _string(_field(ref, "kind")), "name": _string(_field(ref, "name"))}
    _put(out, "apiVersion", _string(_field(ref, "apiVersion")))
    return out


# --- metric statuses -----------------------------------------------------------------------------


def _status_to_v1(metric: Mapping[str, Any]) -> Obj:
    """A v2 ``MetricStatus`` in v1's (annotation) ``MetricStatus`` form."""
    out: Obj = {"type": metric.get("type") or ""}
    if isinstance(metric.get("object"), Mapping):
        source = metric["object"]
        current, ident = _mapping(source.get("current")), _mapping(source.get("metric"))
        obj: Obj = {"target": _reference(_mapping(source.get("describedObject"))),
                    "metricName": ident.get("name") or "", "currentValue": current.get("value") or _ZERO}
        _put(obj, "selector", ident.get("selector"))
        _put(obj, "averageValue", current.get("averageValue"))
        out["object"] = obj
    if isinstance(metric.get("pods"), Mapping):
        source = metric["pods"]
        current, ident = _mapping(source.get("current")), _mapping(source.get("metric"))
        pods: Obj = {"metricName": ident.get("name") or "",
                     "currentAverageValue": current.get("averageValue") or _ZERO}
        _put(pods, "selector", ident.get("selector"))
        out["pods"] = pods
    for key in ("resource", "containerResource"):
        if not isinstance(metric.get(key), Mapping):
            continue
        source = metric[key]
        current = _mapping(source.get("current"))
        resource: Obj = {"name": source.get("name") or ""}
        _put(resource, "currentAverageUtilization", current.get("averageUtilization"))
        resource["currentAverageValue"] = current.get("averageValue") or _ZERO
        if key == "containerResource":
            resource["container"] = source.get("container") or ""
        out[key] = resource
    if isinstance(metric.get("external"), Mapping):
        source = metric["external"]
        current, ident = _mapping(source.get("current")), _mapping(source.get("metric"))
        external: Obj = {"metricName": ident.get("name") or ""}
        _put(external, "metricSelector", ident.get("selector"))
        external["currentValue"] = current.get("value") or _ZERO
        _put(external, "currentAverageValue", current.get("averageValue"))
        out["external"] = external
    return out


def _current(value: str | None = None, average: str | None = None, utilization: int | None = None) -> Obj:
    out: Obj = {}
    _put(out, "value", value)
    _put(out, "averageValue", average)
    _put(out, "averageUtilization", utilization)
    return out


def _status_to_v2(metric: Any) -> Obj:
    """A v1 annotation ``MetricStatus`` as v2 (``Convert_v1_*MetricStatus_To_autoscaling_*``)."""
    metric = _struct(metric) or {}
    out: Obj = {"type": _string(_field(metric, "type"))}
    source = _struct(_field(metric, "object"))
    if source is not None:
        out["object"] = {
            "metric": _identifier(_field(source, "metricName"), _field(source, "selector")),
            "current": _current(_quantity(_field(source, "currentValue")) or _ZERO,
                                _quantity(_field(source, "averageValue"))),
            "describedObject": _reference_in(_field(source, "target")),
        }
    source = _struct(_field(metric, "pods"))
    if source is not None:
        out["pods"] = {
            "metric": _identifier(_field(source, "metricName"), _field(source, "selector")),
            "current": _current(average=_quantity(_field(source, "currentAverageValue")) or _ZERO),
        }
    for key in ("resource", "containerResource"):
        source = _struct(_field(metric, key))
        if source is None:
            continue
        resource: Obj = {"name": _string(_field(source, "name")),
                         "current": _current(average=_quantity(_field(source, "currentAverageValue")) or _ZERO,
                                             utilization=_int(_field(source, "currentAverageUtilization")))}
        if key == "containerResource":
            resource["container"] = _string(_field(source, "container"))
        out[key] = resource
    source = _struct(_field(metric, "external"))
    if source is not None:
        out["external"] = {
            "metric": _identifier(_field(source, "metricName"), _field(source, "metricSelector")),
            "current": _current(_quantity(_field(source, "currentValue")) or _ZERO,
                                _quantity(_field(source, "currentAverageValue"))),
        }
    return out


# --- conditions and behavior ---------------------------------------------------------------------


def _condition_to_v1(condition: Mapping[str, Any]) -> Obj:
    # lastTransitionTime is a struct (metav1.Time): omitempty does not apply, a zero one is null.
    out: Obj = {"type": condition.get("type") or "", "status": condition.get("status") or "",
                "lastTransitionTime": condition.get("lastTransitionTime")}
    _put(out, "reason", condition.get("reason"))
    _put(out, "message", condition.get("message"))
    return out


def _condition_to_v2(condition: Any) -> Obj:
    condition = _struct(condition) or {}
    out: Obj = {"type": _string(_field(condition, "type")), "status": _string(_field(condition, "status"))}
    _put(out, "lastTransitionTime", _string(_field(condition, "lastTransitionTime")))
    _put(out, "reason", _string(_field(condition, "reason")))
    _put(out, "message", _string(_field(condition, "message")))
    return out


_RULE_FIELDS = (("StabilizationWindowSeconds", "stabilizationWindowSeconds"), ("SelectPolicy", "selectPolicy"),
                ("Policies", "policies"), ("Tolerance", "tolerance"))
_POLICY_FIELDS = (("Type", "type"), ("Value", "value"), ("PeriodSeconds", "periodSeconds"))
_DIRECTIONS = (("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown"))


def _behavior_to_internal(behavior: Mapping[str, Any]) -> Obj:
    """``spec.behavior`` as upstream's internal ``HorizontalPodAutoscalerBehavior`` marshals: Go
    field names, every field present, ``null`` where a pointer or slice is unset."""
    def rules(value: Any) -> Obj | None:
        if not isinstance(value, Mapping):
            return None
        out: Obj = {}
        for go_name, name in _RULE_FIELDS:
            item = value.get(name)
            if name == "policies" and isinstance(item, list):
                item = [{go: _mapping(policy).get(field, "" if go == "Type" else 0) for go, field in _POLICY_FIELDS}
                        for policy in item]
            out[go_name] = item
        return out

    return {go_name: rules(behavior.get(name)) for go_name, name in _DIRECTIONS}


def _policy_to_v2(value: Any) -> Obj:
    policy = _struct(value) or {}
    return {"type": _string(_field(policy, "Type")), "value": _int(_field(policy, "Value")) or 0,
            "periodSeconds": _int(_field(policy, "PeriodSeconds")) or 0}


def _behavior_to_v2(value: Any) -> Obj | None:
    """The internal-type JSON of the behavior annotation as v2 ``spec.behavior`` (``None`` when empty)."""
    behavior = _struct(value) or {}
    out: Obj = {}
    for go_name, name in _DIRECTIONS:
        source = _struct(_field(behavior, go_name))
        if source is None:
            continue
        rules: Obj = {}
        _put(rules, "stabilizationWindowSeconds", _int(_field(source, "StabilizationWindowSeconds")))
        _put(rules, "selectPolicy", _string(_field(source, "SelectPolicy")) or None)
        policies = _field(source, "Policies")
        if policies is not None:
            if not isinstance(policies, list):
                raise _Malformed
            rules["policies"] = [_policy_to_v2(policy) for policy in policies]
        _put(rules, "tolerance", _quantity(_field(source, "Tolerance")))
        out[name] = rules
    return out or None


def _decoded_list(annotations: Mapping[str, str], key: str, convert: Callable[[Any], Obj]) -> list[Obj] | None:
    """The annotation's JSON list, each item converted; ``None`` when absent or malformed."""
    raw = annotations.get(key)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
        if value is None:
            return []
        if not isinstance(value, list):
            raise _Malformed
        return [convert(item) for item in value]
    except (ValueError, _Malformed):
        return None


# --- whole objects -------------------------------------------------------------------------------


def drop_round_trip_annotations(hpa: Obj) -> Obj:
    """``hpa`` without the round-trip annotations (the same object when it has none); an
    annotation map left empty goes too (``omitempty``)."""
    meta = hpa.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if not isinstance(annotations, Mapping) or not any(key in annotations for key in ROUND_TRIP_ANNOTATIONS):
        return hpa
    out = dict(hpa)
    out["metadata"] = new_meta = dict(meta)  # type: ignore[arg-type]
    kept = {key: value for key, value in annotations.items() if key not in ROUND_TRIP_ANNOTATIONS}
    if kept:
        new_meta["annotations"] = kept
    else:
        del new_meta["annotations"]
    return out


def _with_annotations(meta: Obj, annotations: dict[str, str]) -> Obj:
    out = dict(meta)
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    return out


def hpa_v2_to_v1(hpa: Obj, api_version: str = "autoscaling/v1") -> Obj:
    """A stored (v2) HorizontalPodAutoscaler as ``autoscaling/v1`` serves it."""
    meta = _mapping(hpa.get("metadata"))
    spec = _mapping(hpa.get("spec"))
    status = _mapping(hpa.get("status"))
    annotations = {key: value for key, value in _mapping(meta.get("annotations")).items()
                   if key not in ROUND_TRIP_ANNOTATIONS}
    metrics = [m for m in spec.get("metrics") or () if isinstance(m, Mapping)]
    current = [m for m in status.get("currentMetrics") or () if isinstance(m, Mapping)]
    conditions = [c for c in status.get("conditions") or () if isinstance(c, Mapping)]
    others = [_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRIC_SPECS_ANNOTATION] = go_json(others)
    if current:
        annotations[METRIC_STATUSES_ANNOTATION] = go_json([_status_to_v1(m) for m in current])
    if isinstance(spec.get("behavior"), Mapping):
        annotations[BEHAVIOR_ANNOTATION] = go_json(_behavior_to_internal(spec["behavior"]))
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = go_json([_condition_to_v1(c) for c in conditions])

    v1_spec: Obj = {}
    for key in ("scaleTargetRef", "minReplicas", "maxReplicas"):
        if key in spec:
            v1_spec[key] = spec[key]
    for metric in metrics:
        if _is_cpu_utilization(metric):
            v1_spec["targetCPUUtilizationPercentage"] = metric["resource"]["target"]["averageUtilization"]
            break

    v1_status: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if key in status:
            v1_status[key] = status[key]
    v1_status["currentReplicas"] = status.get("currentReplicas") or 0
    v1_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    for metric in current:
        resource = metric.get("resource")
        if metric.get("type") == "Resource" and isinstance(resource, Mapping) and resource.get("name") == "cpu":
            utilization = _mapping(resource.get("current")).get("averageUtilization")
            if utilization is not None:
                v1_status["currentCPUUtilizationPercentage"] = utilization

    out: Obj = {"apiVersion": api_version, "kind": hpa.get("kind") or "HorizontalPodAutoscaler",
                "metadata": _with_annotations(dict(meta), annotations), "spec": v1_spec, "status": v1_status}
    return out


def _cpu_metric(utilization: Any) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                      "averageUtilization": utilization}}}


def hpa_v1_to_v2(hpa: Obj, api_version: str = "autoscaling/v2") -> Obj:
    """An ``autoscaling/v1`` HorizontalPodAutoscaler (decoded against v1's schema) in its stored (v2) form."""
    meta = _mapping(hpa.get("metadata"))
    spec = _mapping(hpa.get("spec"))
    status = _mapping(hpa.get("status"))
    annotations = {key: value for key, value in _mapping(meta.get("annotations")).items() if isinstance(key, str)}

    v2_spec: Obj = {}
    for key in ("scaleTargetRef", "minReplicas", "maxReplicas"):
        if key in spec:
            v2_spec[key] = spec[key]
    metrics = [] if spec.get("targetCPUUtilizationPercentage") is None else [
        _cpu_metric(spec["targetCPUUtilizationPercentage"])]
    others = _decoded_list(annotations, METRIC_SPECS_ANNOTATION, _spec_to_v2)
    if others is not None:
        metrics = [*others, *metrics[:1]]
    if not metrics:
        metrics = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    v2_spec["metrics"] = metrics
    if BEHAVIOR_ANNOTATION in annotations:
        try:
            behavior = _behavior_to_v2(json.loads(annotations[BEHAVIOR_ANNOTATION]))
        except (ValueError, _Malformed):
            behavior = None
        if behavior is not None:
            v2_spec["behavior"] = behavior

    v2_status: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if key in status:
            v2_status[key] = status[key]
    _put(v2_status, "currentReplicas", status.get("currentReplicas") or None)
    v2_status["desiredReplicas"] = status.get("desiredReplicas") or 0
    current: list[Obj] = []
    if status.get("currentCPUUtilizationPercentage") is not None:
        current = [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
    annotated = _decoded_list(annotations, METRIC_STATUSES_ANNOTATION, _status_to_v2)
    if annotated is not None:
        current = annotated
    _put(v2_status, "currentMetrics", current)
    conditions = _decoded_list(annotations, CONDITIONS_ANNOTATION, _condition_to_v2)
    _put(v2_status, "conditions", conditions)

    kept = {key: value for key, value in annotations.items() if key not in ROUND_TRIP_ANNOTATIONS}
    return {"apiVersion": api_version, "kind": hpa.get("kind") or "HorizontalPodAutoscaler",
            "metadata": _with_annotations(dict(meta), kept), "spec": v2_spec, "status": v2_status}
