"""``metadata`` validation shared by every kind, built-in or custom.

Three layers run upstream, and here, in this order:

* the kind's own ``ValidateObjectMeta`` (name syntax for the kind, namespace by scope, labels,
  annotations, owner references, finalizers; built-in kinds also insist that finalizer names
  without a ``/`` be one of the standard ones), see :func:`validate_object_meta`;
* on update, ``ValidateObjectMetaUpdate`` (immutable identity fields, no new finalizers once
  deletion started, a resourceVersion present), see :func:`validate_object_meta_update`;
* the generic registry's own pass with a permissive name rule (names must be usable as URL path
  segments), see :func:`validate_common_create` / :func:`validate_common_update`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import FieldError, forbidden, go_quote, invalid, required, too_long
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_string_list,
    go_time,
    index,
    int_at,
    mapping_at,
    objects_at,
    str_at,
    str_list_at,
    str_map_at,
)

NameFn = Callable[[str, bool], list[str]]
"""Checks a name (``prefix`` True for a ``generateName``) and returns upstream's messages."""

FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"
STANDARD_FINALIZERS = frozenset({"kubernetes", FINALIZER_ORPHAN, FINALIZER_FOREGROUND})
# Kinds that may never own anything: an owner reference to a core/v1 Event is refused.
_BANNED_OWNERS = frozenset({("", "v1", "Event")})


def _mask_trailing_dash(name: str) -> str:
    # Upstream replaces the last *two* characters of a dash-terminated prefix with "a"; keeping
    # that quirk gives generateName the very same accept/reject answers.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return names.dns1123_subdomain_errors(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return names.dns1123_label_errors(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """Names usable in a URL path: the generic registry's rule, and all custom kinds need."""
    if not prefix:
        for illegal in (".", ".."):
            if name == illegal:
                return [f"may not be '{illegal}'"]
    return [f"may not contain '{part}'" for part in ("/", "%") if part in name]


def nonnegative(value: int | None, path: str) -> Errors:
    if value is not None and value < 0:
        return [invalid(path, value, IS_NEGATIVE)]
    return []


_LABEL_ERRORS: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[FieldError, ...]] = {}
_LABEL_MEMO_SIZE = 1024
"""Label maps checked recently, and their errors: an update checks the same map up to five
times (the generic and the kind's metadata passes, create and update rules, as upstream), and
the pods of one workload carry the same few maps."""


def validate_labels(labels: Mapping[str, str], path: str) -> Errors:
    """Label keys are qualified names, values label values; every error is on ``path`` itself."""
    memo_key = (path, tuple(labels.items()))
    try:
        found = _LABEL_ERRORS.get(memo_key)
    except TypeError:
        # A value that is no string (a selector's, unchecked): never remembered.
        return _label_errors(labels, path)
    if found is None:
        found = tuple(_label_errors(labels, path))
        if len(_LABEL_ERRORS) >= _LABEL_MEMO_SIZE:
            del _LABEL_ERRORS[next(iter(_LABEL_ERRORS))]
        _LABEL_ERRORS[memo_key] = found
    return list(found)


def _label_errors(labels: Mapping[str, str], path: str) -> Errors:
    errs: Errors = []
    for label_key, label_value in labels.items():
        errs.extend(invalid(path, label_key, msg) for msg in names.qualified_name_errors(label_key))
        errs.extend(invalid(path, label_value, msg) for msg in names.label_value_errors(label_value))
    return errs


def validate_annotations(annotations: Mapping[str, str], path: str) -> Errors:
    """Keys are qualified names (checked lower-cased); keys and values total at most 256 KiB."""
    errs: Errors = []
    total = 0
    for ann_key, ann_value in annotations.items():
        errs.extend(invalid(path, ann_key, msg) for msg in names.qualified_name_errors(ann_key.lower()))
        total += len(ann_key.encode()) + len(ann_value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _split_api_version(api_version: str) -> tuple[str, str]:
    if api_version in ("", "/"):
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    # An unparsable apiVersion leaves group and version empty, as upstream's parser does.
    return "", ""


def _go_bool_pointer(value: Any) -> str:
    return "(*bool)(nil)" if not isinstance(value, bool) else f"(*bool)({str(value).lower()})"


def _go_owner_reference(ref: Mapping[str, Any]) -> str:
    return (
        "v1.OwnerReference{"
        f"APIVersion:{go_quote(str(ref.get('apiVersion') or ''))}, "
        f"Kind:{go_quote(str(ref.get('kind') or ''))}, "
        f"Name:{go_quote(str(ref.get('name') or ''))}, "
        f"UID:{go_quote(str(ref.get('uid') or ''))}, "
        f"Controller:{_go_bool_pointer(ref.get('controller'))}, "
        f"BlockOwnerDeletion:{_go_bool_pointer(ref.get('blockOwnerDeletion'))}}}"
    )


def validate_owner_references(meta: Mapping[str, Any], path: str, errs: Errors) -> None:
    """apiVersion (with a version), kind, name and uid set; at most one controller reference.

    Upstream reports each reference's errors on ``ownerReferences.<field>`` without an index.
    """
    refs = objects_at(meta, "ownerReferences", path, errs)
    ref_path = child(path, "ownerReferences")
    first_controller = ""
    for item_path, ref in refs:
        api_version = str_at(ref, "apiVersion", item_path, errs)
        kind = str_at(ref, "kind", item_path, errs)
        name = str_at(ref, "name", item_path, errs)
        uid = str_at(ref, "uid", item_path, errs)
        group, version = _split_api_version(api_version)
        if not version:
            errs.append(invalid(child(ref_path, "apiVersion"), api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(child(ref_path, "kind"), kind, "kind must not be empty"))
        if not name:
            errs.append(invalid(child(ref_path, "name"), name, "name must not be empty"))
        if not uid:
            errs.append(invalid(child(ref_path, "uid"), uid, "uid must not be empty"))
        if (group, version, kind) in _BANNED_OWNERS:
            gvk = f"{group}/{version}, Kind={kind}"
            shown = GoLiteral(_go_owner_reference(ref))
            errs.append(invalid(ref_path, shown, f"{gvk} is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                listed = "[]v1.OwnerReference{" + ", ".join(_go_owner_reference(r) for _, r in refs) + "}"
                errs.append(invalid(
                    ref_path,
                    GoLiteral(listed),
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}",
                ))
            else:
                first_controller = current


def validate_finalizers(finalizers: list[str], path: str) -> Errors:
    """Qualified names (errors on the list path), never both ``orphan`` and ``foregroundDeletion``."""
    errs: Errors = []
    for finalizer in finalizers:
        errs.extend(invalid(path, finalizer, msg) for msg in names.qualified_name_errors(finalizer))
    if FINALIZER_ORPHAN in finalizers and FINALIZER_FOREGROUND in finalizers:
        errs.append(invalid(
            path,
            finalizers,
            f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set",
        ))
    return errs


def validate_standard_finalizer_names(finalizers: list[str], path: str, indexed: bool = True) -> Errors:
    """Built-in kinds: a finalizer without a ``/`` must be one of the standard names."""
    errs: Errors = []
    for position, finalizer in enumerate(finalizers):
        if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
            errs.append(invalid(
                index(path, position) if indexed else path,
                finalizer,
                "name is neither a standard finalizer name nor is it fully qualified",
            ))
    return errs


def validate_object_meta(
    obj: Mapping[str, Any],
    namespaced: bool,
    name_fn: NameFn,
    *,
    builtin: bool = True,
) -> Errors:
    """``ValidateObjectMeta`` for a new object (the name is expected to be generated already).

    ``builtin`` adds the core API's standard-finalizer rule, which custom resources skip.
    """
    errs: Errors = []
    path = "metadata"
    meta = mapping_at(obj, "metadata", "", errs)
    generate_name = str_at(meta, "generateName", path, errs)
    name = str_at(meta, "name", path, errs)
    namespace = str_at(meta, "namespace", path, errs)
    if generate_name:
        errs.extend(invalid(child(path, "generateName"), generate_name, m) for m in name_fn(generate_name, True))
    if not name:
        errs.append(required(child(path, "name"), "name or generateName is required"))
    else:
        errs.extend(invalid(child(path, "name"), name, m) for m in name_fn(name, False))
    if namespaced:
        if not namespace:
            errs.append(required(child(path, "namespace")))
        else:
            errs.extend(invalid(child(path, "namespace"), namespace, m) for m in name_is_dns_label(namespace, False))
    elif namespace:
        errs.append(forbidden(child(path, "namespace"), "not allowed on this type"))
    errs.extend(nonnegative(int_at(meta, "generation", path, errs), child(path, "generation")))
    errs.extend(validate_labels(str_map_at(meta, "labels", path, errs), child(path, "labels")))
    errs.extend(validate_annotations(str_map_at(meta, "annotations", path, errs), child(path, "annotations")))
    validate_owner_references(meta, path, errs)
    finalizers = str_list_at(meta, "finalizers", path, errs)
    errs.extend(validate_finalizers(finalizers, child(path, "finalizers")))
    if builtin:
        errs.extend(validate_standard_finalizer_names(finalizers, child(path, "finalizers")))
    return errs


def _time_key(value: Any) -> Any:
    literal = go_time(value)
    return None if literal is None else literal.text


def validate_object_meta_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, builtin: bool = True
) -> Errors:
    """``ValidateObjectMetaUpdate``: identity fields immutable, finalizers frozen while deleting.

    The caller must have put the current resourceVersion into ``new`` for an unconditional
    update (as the storage layer upstream does before validating), or this reports
    ``resourceVersion: must be specified for an update``.
    """
    errs: Errors = []
    path = "metadata"
    new_meta = mapping_at(new, "metadata", "", errs)
    old_meta = mapping_at(old, "metadata", "", [])
    new_finalizers = str_list_at(new_meta, "finalizers", path, errs)
    old_finalizers = str_list_at(old_meta, "finalizers", path, [])
    if old_meta.get("deletionTimestamp"):
        extra = sorted(set(new_finalizers) - set(old_finalizers))
        if extra:
            errs.append(forbidden(
                child(path, "finalizers"),
                "no new finalizers can be added if the object is being deleted, "
                f"found new finalizers {go_string_list(extra)}",
            ))
    resource_version = str_at(new_meta, "resourceVersion", path, errs)
    if not resource_version:
        errs.append(invalid(child(path, "resourceVersion"), resource_version, "must be specified for an update"))
    new_generation = int_at(new_meta, "generation", path, errs) or 0
    old_generation = int_at(old_meta, "generation", path, []) or 0
    if new_generation < old_generation:
        errs.append(invalid(child(path, "generation"), new_generation, "must not be decremented"))
    for name in ("name", "namespace", "uid"):
        new_value = str_at(new_meta, name, path, errs)
        if new_value != str_at(old_meta, name, path, []):
            errs.append(invalid(child(path, name), new_value, FIELD_IMMUTABLE))
    for name in ("creationTimestamp", "deletionTimestamp"):
        # The same text is the same time (most updates carry the stored timestamps back).
        new_time, old_time = new_meta.get(name), old_meta.get(name)
        if new_time != old_time and _time_key(new_time) != _time_key(old_time):
            shown = go_time(new_meta.get(name))
            errs.append(invalid(child(path, name), shown if shown is not None else GoLiteral("null"), FIELD_IMMUTABLE))
    new_grace = int_at(new_meta, "deletionGracePeriodSeconds", path, errs)
    if new_grace != int_at(old_meta, "deletionGracePeriodSeconds", path, []):
        errs.append(invalid(child(path, "deletionGracePeriodSeconds"), new_grace, FIELD_IMMUTABLE))
    errs.extend(validate_labels(str_map_at(new_meta, "labels", path, errs), child(path, "labels")))
    errs.extend(validate_annotations(str_map_at(new_meta, "annotations", path, errs), child(path, "annotations")))
    validate_owner_references(new_meta, path, errs)
    if builtin:
        errs.extend(validate_standard_finalizer_names(new_finalizers, child(path, "finalizers")))
    return errs


def validate_common_create(obj: Mapping[str, Any], namespaced: bool) -> Errors:
    """The generic registry's metadata pass on create (names must be URL path segments)."""
    return validate_object_meta(obj, namespaced, name_is_path_segment, builtin=False)


def validate_common_update(new: Mapping[str, Any], old: Mapping[str, Any], namespaced: bool) -> Errors:
    """The generic registry's metadata pass on update, run before the kind's own rules."""
    errs = validate_object_meta(new, namespaced, name_is_path_segment, builtin=False)
    errs.extend(validate_object_meta_update(new, old, builtin=False))
    return errs


def dedupe(errs: list[FieldError]) -> list[FieldError]:
    """Drop exact repeats of type errors that several passes read from the same field."""
    seen: set[tuple[str, str, str]] = set()
    out: list[FieldError] = []
    for err in errs:
        marker = (err.type, err.field, err.body())
        if err.type == "FieldValueTypeInvalid" and marker in seen:
            continue
        seen.add(marker)
        out.append(err)
    return out
