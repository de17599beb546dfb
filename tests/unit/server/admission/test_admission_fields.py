"""The helpers under admission: quantities, Go-style values, typed access, and robustness."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update
from kubeloop.server.admission.fields import (
    go_int_or_string,
    go_label_selector,
    go_time,
    int_at,
    normalized,
    semantically_equal,
    str_at,
)
from kubeloop.server.admission.quantity import QuantityError, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Decimal(1)),
        ("500m", Decimal("0.5")),
        ("1Gi", Decimal(2**30)),
        ("1G", Decimal(10**9)),
        ("1.5Ki", Decimal(1536)),
        ("2e3", Decimal(2000)),
        ("-1", Decimal(-1)),
        (3, Decimal(3)),
        ("100n", Decimal("1e-7")),
    ],
)
def test_quantities(text: Any, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1Xi", "1.2.3", True, None, "1 Gi"])
def test_bad_quantities(text: Any) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_go_renderings() -> None:
    assert str(go_int_or_string(3)) == 'intstr.IntOrString{Type:0, IntVal:3, StrVal:""}'
    assert str(go_int_or_string("3%")) == 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"3%"}'
    assert str(go_label_selector({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": []})) == (
        'v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement{}}"
    )
    assert str(go_time("2024-03-04T05:06:07.5+01:00")) == "2024-03-04 04:06:07.5 +0000 UTC"
    assert go_time(None) is None
    assert str(go_time("not a time")) == "not a time"


def test_typed_access_reports_wrong_types() -> None:
    errs: list[Any] = []
    assert int_at({"n": "5"}, "n", "spec", errs) is None
    assert str_at({"s": 5}, "s", "spec", errs) == ""
    assert int_at({"n": True}, "n", "spec", errs) is None
    assert [str(e) for e in errs] == [
        'spec.n: Invalid value: "5": must be of type integer',
        "spec.s: Invalid value: 5: must be of type string",
        "spec.n: Invalid value: true: must be of type integer",
    ]


def test_semantic_equality_ignores_empty_members() -> None:
    assert semantically_equal({"a": [], "b": None, "c": {"d": ""}, "e": False}, {})
    assert not semantically_equal({"a": 0}, {})
    assert normalized({"x": [{"y": None}]}) == {"x": [{}]}


KINDS = [
    ("", "Pod"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "ServiceAccount"),
    ("", "PersistentVolumeClaim"),
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("coordination.k8s.io", "Lease"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "ControllerRevision"),
    ("autoscaling", "Scale"),
    ("example.com", "Widget"),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=8) | st.sampled_from(["", "25%", "1Gi"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "image",
                    "containers",
                    "spec",
                    "metadata",
                    "template",
                    "selector",
                    "labels",
                    "matchLabels",
                    "ports",
                    "volumes",
                    "data",
                    "strategy",
                    "rollingUpdate",
                    "maxSurge",
                    "replicas",
                    "status",
                    "type",
                    "namespace",
                    "finalizers",
                    "env",
                    "resources",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(KINDS), body=json_values, old=json_values)
def test_arbitrary_json_never_raises(kind: tuple[str, str], body: Any, old: Any) -> None:
    group, name = kind
    obj: dict[str, Any] = body if isinstance(body, dict) else {"spec": body}
    previous: dict[str, Any] = old if isinstance(old, dict) else {"spec": old}
    default_object(group, "v1", name, obj)
    for errors in (
        validate_create(group, "v1", name, obj, namespaced=True),
        validate_update(group, "v1", name, obj, previous, namespaced=True),
        validate_status_update(group, "v1", name, obj, previous, namespaced=False),
    ):
        assert all(isinstance(e.field, str) and e.body() for e in errors)
