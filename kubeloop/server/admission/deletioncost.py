"""The ``controller.kubernetes.io/pod-deletion-cost`` rule of pod validation, and its allowance.

``ValidatePodSpecificAnnotations`` (pkg/apis/core/validation/validation.go) refuses an invalid
value (see :mod:`kubeloop.api.deletioncost`) on Pods and on every pod template with 422
``must be a 32bit integer`` at ``<metadata path>.annotations[controller.kubernetes.io/pod-deletion-cost]``.
On update upstream sets ``AllowInvalidPodDeletionCost`` when the stored object's value at the
same place was already invalid (``GetValidationOptionsFromPodSpecAndMeta`` /
``GetValidationOptionsFromPodTemplate``, pkg/api/pod/util.go), so that objects stored before the
rule existed can still be updated. :func:`deletion_cost_errors` is the rule;
:func:`allowed_by_stored_costs` applies the allowance to the errors of any kind's update, by
looking at the stored object under the path each such error names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.deletioncost import (
    INVALID_DELETION_COST_MESSAGE,
    POD_DELETION_COST_ANNOTATION,
    has_invalid_deletion_cost,
)
from kubeloop.api.nested import section
from kubeloop.api.status import FIELD_VALUE_INVALID, FieldError, invalid
from kubeloop.server.admission.fields import Errors, key

_SUFFIX = f".annotations[{POD_DELETION_COST_ANNOTATION}]"


def deletion_cost_errors(annotations: Mapping[str, Any], meta_path: str) -> Errors:
    """The rule for the annotations of the object metadata at ``meta_path``."""
    if not has_invalid_deletion_cost(annotations):
        return []
    return [invalid(key(f"{meta_path}.annotations", POD_DELETION_COST_ANNOTATION),
                    annotations.get(POD_DELETION_COST_ANNOTATION), INVALID_DELETION_COST_MESSAGE)]


def allowed_by_stored_costs(errs: list[FieldError], old: Mapping[str, Any]) -> list[FieldError]:
    """``errs`` without the deletion-cost errors whose place held an invalid value in ``old``."""
    kept: list[FieldError] = []
    for err in errs:
        if err.type == FIELD_VALUE_INVALID and err.field.endswith(_SUFFIX):
            meta_path = err.field[: -len(_SUFFIX)]
            if has_invalid_deletion_cost(section(old, *meta_path.split("."), "annotations")):
                continue
        kept.append(err)
    return kept
