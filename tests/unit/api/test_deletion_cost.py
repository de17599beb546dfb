"""The one parse of ``controller.kubernetes.io/pod-deletion-cost`` (upstream's
``GetDeletionCostFromPodAnnotations``, pkg/apis/core/helper/helpers.go, and its table in
pkg/apis/core/validation/validation_test.go), with the rows of the former ReplicaSet and
CloneSet copies."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.deletioncost import (
    POD_DELETION_COST_ANNOTATION,
    deletion_cost,
    has_invalid_deletion_cost,
    parse_deletion_cost,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10", 10),
        ("-5", -5),
        ("0", 0),
        ("-0", 0),
        ("-08", -8),  # upstream checks the first character only
        ("2147483647", 2**31 - 1),
        ("-2147483648", -(2**31)),
        ("+10", None),
        ("+1", None),
        ("008", None),
        ("007", None),
        ("00", None),
        ("abc", None),
        ("x", None),
        ("text", None),
        ("", None),
        ("-", None),
        ("--5", None),
        ("-+5", None),
        ("2147483648", None),
        ("-2147483649", None),
        ("9999999999", None),
        (" 5", None),
        ("5 ", None),
        ("1_000", None),
        ("1.5", None),
        ("1e3", None),
        ("\u0665", None),  # ARABIC-INDIC DIGIT FIVE: a digit to Python's int(), not to Go's
        ("1\u0665", None),
    ],
)
def test_parse(text: str, expected: int | None) -> None:
    assert parse_deletion_cost(text) == expected


def _pod(annotations: dict[str, Any] | None) -> dict[str, Any]:
    return {"metadata": {"annotations": annotations}} if annotations is not None else {"metadata": {}}


@pytest.mark.parametrize(
    ("annotations", "cost", "invalid"),
    [
        (None, 0, False),
        ({}, 0, False),
        ({"other": "5"}, 0, False),
        ({POD_DELETION_COST_ANNOTATION: "10"}, 10, False),
        ({POD_DELETION_COST_ANNOTATION: "-5"}, -5, False),
        ({POD_DELETION_COST_ANNOTATION: "+10"}, 0, True),
        ({POD_DELETION_COST_ANNOTATION: "008"}, 0, True),
        ({POD_DELETION_COST_ANNOTATION: ""}, 0, True),
        ({POD_DELETION_COST_ANNOTATION: 5}, 0, True),  # malformed: annotations are strings
    ],
)
def test_from_annotations(annotations: dict[str, Any] | None, cost: int, invalid: bool) -> None:
    assert deletion_cost(_pod(annotations)) == cost
    assert has_invalid_deletion_cost(annotations or {}) is invalid
