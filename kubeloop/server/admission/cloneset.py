"""Admission of OpenKruise CloneSets (``apps.kruise.io/v1alpha1``): defaults and validation.

Upstream does this in kruise-manager's mutating and validating webhooks; the embedded API server
runs the same rules in-process. Defaults: replicas 1, revisionHistoryLimit 10, update type
``ReCreate``, partition 0, maxUnavailable ``"20%"``, maxSurge 0, an empty
``inPlaceUpdateStrategy`` for the in-place types, and the pod template's (and the
volumeClaimTemplates') core defaults. Validation returns upstream's field errors: paths,
values as Go prints them, and the webhook's words.

Follows kruise v1.8.4's webhook, plus the ``progressDeadlineSeconds`` rules of later releases
(the controller supports the Progressing condition), and their stricter int-or-percent parsing
(a string must end in ``%``; the number may be fractional).

The ``podsToDelete`` rule needs to read pods: callers pass ``get_pod(namespace, name)``; without
it, the names are not checked against existing pods.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.labels import SelectorError, selector_from_label_selector, validate_label_selector
from kubeloop.api.meta import controller_of
from kubeloop.api.status import FieldError, forbidden, invalid, not_supported, required
from kubeloop.server.admission.core_kinds import default_persistent_volume_claim
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_int_or_string,
    go_label_selector,
    go_string_map,
    int_at,
    mapping_at,
    normalized,
    semantically_equal,
)
from kubeloop.server.admission.kinds import KindRules
from kubeloop.server.admission.metadata import (
    name_is_dns_subdomain,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec

PodGetter = Callable[[str, str], Mapping[str, Any] | None]

"""The pod reader of the server handling the current request (set per request by the server,
so that several servers in one process each read their own store)."""
"""``get_pod(namespace, name)``: the pod, or ``None`` when it does not exist."""

UPDATE_TYPES = (kruise.RECREATE, kruise.IN_PLACE_IF_POSSIBLE, kruise.IN_PLACE_ONLY)
_MUTABLE_SPEC_FIELDS = (
    "replicas",
    "template",
    "scaleStrategy",
    "updateStrategy",
    "minReadySeconds",
    "lifecycle",
    "revisionHistoryLimit",
    "volumeClaimTemplates",
    "progressDeadlineSeconds",
)
_FORBIDDEN_SPEC_UPDATE = (
    "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', "
    "'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and "
    "'revisionHistoryLimit' are forbidden"
)
_IMAGE_PATH = re.compile(r"^/containers/([0-9]+)/image$")
_DECIMAL = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


# ---------------------------------------------------------------------------------- defaults


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else ``[]``: a field of the wrong type reads as empty here and
    is reported by validation (or by the CRD's schema), never raised on."""
    return value if isinstance(value, list) else []


def _dict_at(parent: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = parent.get(name)
    if value is None:
        value = parent[name] = {}
    return value if isinstance(value, dict) else None


def default_cloneset(obj: dict[str, Any], old: Mapping[str, Any] | None = None) -> None:
    """Apply the CloneSet defaults to ``obj`` in place.

    Template and volumeClaimTemplate defaults are injected on create, and on update only when
    the template changed (``old`` is the stored object); a template is never re-defaulted
    otherwise, so stored revisions keep their hash.
    """
    spec = _dict_at(obj, "spec")
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = kruise.DEFAULT_REVISION_HISTORY_LIMIT
    old_spec = old.get("spec") if old is not None else None
    template_changed = not isinstance(old_spec, Mapping) or old_spec.get("template") != spec.get("template")
    if template_changed:
        template = _dict_at(spec, "template")
        if template is not None:
            default_pod_template_spec(template)
        for claim in _list(spec.get("volumeClaimTemplates")):
            if isinstance(claim, dict):
                default_persistent_volume_claim(claim)
    strategy = _dict_at(spec, "updateStrategy")
    if strategy is None:
        return
    if not strategy.get("type"):
        strategy["type"] = kruise.RECREATE
    elif strategy["type"] in (kruise.IN_PLACE_IF_POSSIBLE, kruise.IN_PLACE_ONLY) and (
        strategy.get("inPlaceUpdateStrategy") is None
    ):
        strategy["inPlaceUpdateStrategy"] = {}
    if strategy.get("partition") is None:
        strategy["partition"] = 0
    if strategy.get("maxUnavailable") is None:
        strategy["maxUnavailable"] = kruise.DEFAULT_MAX_UNAVAILABLE
    if strategy.get("maxSurge") is None:
        strategy["maxSurge"] = 0


# -------------------------------------------------------------------------------- validation


class _ScaleError(ValueError):
    pass


def _scaled(value: Any, total: int) -> int:
    """Kruise's int-or-percent, rounded up: an int, or ``"<number>%"`` (fractions allowed)."""
    if isinstance(value, bool) or value is None:
        raise _ScaleError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        raise _ScaleError("invalid type: neither int nor percentage")
    if not value.endswith("%"):
        raise _ScaleError("invalid type: string is not a percentage")
    text = value[:-1]
    if _DECIMAL.match(text) is None:
        raise _ScaleError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    return math.ceil(float(text) * float(total) / 100.0)


def _int_or_string_text(value: Any) -> str:
    """``IntOrString.String()``: the int's digits or the string itself."""
    return str(value)


def _validate_selector_and_template(spec: Mapping[str, Any], errs: Errors) -> None:
    selector = spec.get("selector")
    if selector is None:
        errs.append(required("spec.selector"))
    else:
        errs.extend(validate_label_selector(selector, "spec.selector"))
        if isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid("spec.selector", go_label_selector(selector), "empty selector is invalid for cloneset"))
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        errs.append(invalid("spec.selector", go_label_selector(selector), ""))
        return
    template = mapping_at(spec, "template", "spec", errs)
    labels = mapping_at(template, "metadata", "spec.template", []).get("labels")
    if not parsed.empty():
        plain = labels if isinstance(labels, Mapping) else {}
        if not all(isinstance(v, str) for v in plain.values()) or not parsed.matches(plain):
            shown = GoLiteral(go_string_map(labels)) if labels is None else labels
            errs.append(invalid("spec.template.metadata.labels", shown, "`selector` does not match template `labels`"))
    # Volume mounts may name a volumeClaimTemplate: validate as if each were a PVC volume.
    checked = dict(template)
    pod_spec = dict(mapping_at(template, "spec", "spec.template", []))
    volumes = list(pod_spec.get("volumes") or []) if isinstance(pod_spec.get("volumes"), list) else []
    for claim in _list(spec.get("volumeClaimTemplates")):
        name = str(_object(claim, "metadata").get("name") or "") if isinstance(claim, Mapping) else ""
        volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
    if volumes:
        pod_spec["volumes"] = volumes
    checked["spec"] = pod_spec
    errs.extend(validate_pod_template_spec(checked, "spec.template"))


def _validate_template_policies(spec: Mapping[str, Any], errs: Errors) -> None:
    pod_spec = mapping_at(mapping_at(spec, "template", "spec", []), "spec", "spec.template", [])
    restart_policy = pod_spec.get("restartPolicy")
    if restart_policy not in (None, "", "Always"):
        errs.append(not_supported("spec.template.spec.restartPolicy", restart_policy, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in cloneset is not Supported")
        )


def _duplicates(names: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    duplicates: list[str] = []
    for name in names:
        if name in seen:
            duplicates.append(name)
        seen.add(name)
    return duplicates


def _validate_scale_strategy(
    cs: Mapping[str, Any], old: Mapping[str, Any] | None, get_pod: PodGetter | None, errs: Errors
) -> None:
    path = "spec.scaleStrategy.podsToDelete"
    strategy = mapping_at(mapping_at(cs, "spec", "", []), "scaleStrategy", "spec", errs)
    listed = strategy.get("podsToDelete")
    names = [str(n) for n in listed if n is not None] if isinstance(listed, list) else []
    duplicates = _duplicates(names)
    if duplicates:
        errs.append(invalid(path, names, f"duplicated items [{' '.join(duplicates)}]"))
        return
    old_listed = _object(old, "spec", "scaleStrategy").get("podsToDelete") if old is not None else None
    old_names = {str(n) for n in old_listed if n is not None} if isinstance(old_listed, list) else set()
    if get_pod is None:
        return
    meta = mapping_at(cs, "metadata", "", [])
    namespace, uid = str(meta.get("namespace") or ""), str(meta.get("uid") or "")
    for name in sorted(set(names) - old_names):
        pod = get_pod(namespace, name)
        if pod is None:
            errs.append(invalid(path, name, f'find pod {name} failed: pods "{name}" not found'))
        elif (pod.get("metadata") or {}).get("deletionTimestamp"):
            errs.append(invalid(path, name, f"find pod {name} already terminating"))
        else:
            owner = controller_of(pod)
            if owner is None or owner.get("uid") != uid:
                errs.append(invalid(path, name, f"find pod {name} owner is not this CloneSet"))


def _priority_error(strategy: Any) -> str | None:
    if not isinstance(strategy, Mapping):
        return None
    weights = _list(strategy.get("weightPriority"))
    orders = _list(strategy.get("orderPriority"))
    if weights and orders:
        return "only one of weightPriority and orderPriority can be used"
    for term in weights:
        term = term if isinstance(term, Mapping) else {}
        weight = term.get("weight") or 0
        if not isinstance(weight, int) or weight < 0 or weight > 100:
            return "weight must be valid number in the range 1-100"
        selector = term.get("matchSelector")
        if not isinstance(selector, Mapping) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            return "selector can not be empty"
        try:
            selector_from_label_selector(selector)
        except SelectorError as error:
            return f"invalid selector {error}"
    for term in orders:
        if not isinstance(term, Mapping) or not term.get("orderedKey"):
            return "order key can not be empty"
    return None


def _scatter_error(strategy: Any) -> str | None:
    seen: set[tuple[str, str]] = set()
    for term in _list(strategy):
        term = term if isinstance(term, Mapping) else {}
        key, value = str(term.get("key") or ""), str(term.get("value") or "")
        if not key:
            return "key should not be empty"
        if (key, value) in seen:
            return f"duplicated key={key} value={value}"
        seen.add((key, value))
    return None


def _validate_update_strategy(spec: Mapping[str, Any], replicas: int, errs: Errors) -> None:
    path = "spec.updateStrategy"
    strategy = mapping_at(spec, "updateStrategy", "spec", errs)
    strategy_type = strategy.get("type") or ""
    if strategy_type not in UPDATE_TYPES:
        errs.append(
            invalid(child(path, "type"), strategy_type, "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'")
        )
    partition = 0
    if strategy.get("partition") is not None:
        try:
            partition = _scaled(strategy["partition"], replicas)
        except _ScaleError as error:
            errs.append(
                invalid(
                    child(path, "partition"),
                    _int_or_string_text(strategy["partition"]),
                    f"failed GetScaledValueFromIntOrPercent for partition: {error}",
                )
            )
    errs.extend(nonnegative(partition, child(path, "partition")))
    message = _priority_error(strategy.get("priorityStrategy"))
    if message is not None:
        errs.append(required(child(path, "priorityStrategy"), message))
    message = _scatter_error(strategy.get("scatterStrategy"))
    if message is not None:
        errs.append(required(child(path, "scatterStrategy"), message))

    values: dict[str, int] = {"maxUnavailable": 0, "maxSurge": 0}
    for name in values:
        raw = strategy.get(name)
        if raw is None:
            continue
        try:
            values[name] = _scaled(raw, replicas)
        except _ScaleError as error:
            errs.append(
                invalid(
                    child(path, name),
                    _int_or_string_text(raw),
                    f"failed GetScaledValueFromIntOrPercent for {name}: {error}",
                )
            )
        if name == "maxSurge" and strategy_type == kruise.IN_PLACE_ONLY and values[name] > 0:
            errs.append(
                invalid(
                    child(path, name), _int_or_string_text(raw), "can not use maxSurge with strategy type InPlaceOnly"
                )
            )
    if replicas > 0 and values["maxUnavailable"] < 1 and values["maxSurge"] < 1:
        max_unavailable = strategy.get("maxUnavailable")
        shown = GoLiteral("null") if max_unavailable is None else go_int_or_string(max_unavailable)
        errs.append(
            invalid(child(path, "maxUnavailable"), shown, "maxUnavailable and maxSurge should not both be less than 1")
        )


def _validate_progress_deadline(spec: Mapping[str, Any], errs: Errors) -> None:
    deadline = int_at(spec, "progressDeadlineSeconds", "spec", errs)
    if deadline is None:
        return
    errs.extend(nonnegative(deadline, "spec.progressDeadlineSeconds"))
    min_ready = int_at(spec, "minReadySeconds", "spec", []) or 0
    if deadline != kruise.MAX_INT32 and deadline <= min_ready:
        errs.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))


def _validate(cs: Mapping[str, Any], old: Mapping[str, Any] | None, get_pod: PodGetter | None) -> Errors:
    errs = validate_object_meta(cs, True, name_is_dns_subdomain, builtin=False)
    spec = mapping_at(cs, "spec", "", errs)
    replicas = int_at(spec, "replicas", "spec", errs)
    errs.extend(nonnegative(replicas, "spec.replicas"))
    _validate_selector_and_template(spec, errs)
    _validate_template_policies(spec, errs)
    _validate_scale_strategy(cs, old, get_pod, errs)
    _validate_update_strategy(spec, replicas or 0, errs)
    _validate_progress_deadline(spec, errs)
    return errs


def validate_cloneset_create(obj: Mapping[str, Any], *, get_pod: PodGetter | None = None) -> list[FieldError]:
    """Field errors for a new (defaulted) CloneSet."""
    return _validate(obj, None, get_pod)


def _json_ops(old: Any, new: Any, path: str = "") -> list[tuple[str, str]]:
    """``(op, path)`` of an RFC 6902 diff from ``old`` to ``new``."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        ops: list[tuple[str, str]] = []
        for key in old:
            if key not in new:
                ops.append(("remove", f"{path}/{key}"))
            else:
                ops.extend(_json_ops(old[key], new[key], f"{path}/{key}"))
        ops.extend(("add", f"{path}/{key}") for key in new if key not in old)
        return ops
    if isinstance(old, list) and isinstance(new, list):
        ops = []
        for position, (a, b) in enumerate(zip(old, new)):
            ops.extend(_json_ops(a, b, f"{path}/{position}"))
        ops.extend(("add", f"{path}/{i}") for i in range(len(old), len(new)))
        ops.extend(("remove", f"{path}/{i}") for i in range(len(new), len(old)))
        return ops
    return [] if old == new else [("replace", path)]


def _object(parent: Mapping[str, Any], *names: str) -> Mapping[str, Any]:
    """The object at ``names`` under ``parent``, ``{}`` where any step is absent or not an object.

    Update rules compare the new object with the stored one before the type errors are reported
    (by :func:`_validate`, or by the schema for a stored object written around admission), so a
    field of the wrong type must read as empty here, never raise.
    """
    value: Any = parent
    for name in names:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _in_place_only_error(new: Mapping[str, Any], old: Mapping[str, Any]) -> str | None:
    """Under InPlaceOnly, the template's pod spec may only change container images."""
    if _object(new, "spec", "updateStrategy").get("type") != kruise.IN_PLACE_ONLY:
        return None
    old_pod_spec = normalized(_object(old, "spec", "template", "spec"))
    new_pod_spec = normalized(_object(new, "spec", "template", "spec"))
    for op, path in _json_ops(old_pod_spec, new_pod_spec):
        if op != "replace" or _IMAGE_PATH.match(path) is None:
            return f"only allowed to update images in spec for InPlaceOnly, but found {op} {path}"
    return None


def validate_cloneset_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, get_pod: PodGetter | None = None
) -> list[FieldError]:
    """Field errors for replacing ``old`` by ``new``: metadata, immutable spec fields, the
    InPlaceOnly image-only rule, then the create rules (``podsToDelete`` only for new names)."""
    errs = validate_object_meta_update(new, old, builtin=False)
    new_spec = {k: v for k, v in _object(new, "spec").items() if k not in _MUTABLE_SPEC_FIELDS}
    old_spec = {k: v for k, v in _object(old, "spec").items() if k not in _MUTABLE_SPEC_FIELDS}
    if not semantically_equal(new_spec, old_spec):
        errs.append(forbidden("spec", _FORBIDDEN_SPEC_UPDATE))
    message = _in_place_only_error(new, old)
    if message is not None:
        errs.append(forbidden("spec", message))
    errs.extend(_validate(new, old, get_pod))
    return errs


def cloneset_rules(get_pod: PodGetter | None = None) -> KindRules:
    """The admission rules of CloneSets, reading pods for ``podsToDelete`` through ``get_pod``
    (a server passes a reader of its own store; without one, named pods are not looked up)."""

    def create(obj: Mapping[str, Any]) -> Errors:
        return validate_cloneset_create(obj, get_pod=get_pod)

    def update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
        return validate_cloneset_update(new, old, get_pod=get_pod)

    def status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
        return validate_object_meta_update(new, old, builtin=False)

    return KindRules(default_cloneset, create, update, status_update)
