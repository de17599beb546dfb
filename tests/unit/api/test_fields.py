"""Field selector grammar, escaping and matching, restating apimachinery's ``fields`` package."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.api.fields import (
    EQUALS,
    NOT_EQUALS,
    FieldRequirement,
    FieldSelector,
    FieldSelectorError,
    escape_value,
    parse_field_selector,
    unescape_value,
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("metadata.name=web", "metadata.name=web"),
        ("metadata.name==web", "metadata.name=web"),
        ("status.phase!=Running", "status.phase!=Running"),
        ("b=2,a=1", "a=1,b=2"),
        ("x=a,,y=b", "x=a,y=b"),
        ("x=", "x="),
        ("=", ""),
        ("=,a=b", "a=b"),
        ("x=a\\,b", "x=a\\,b"),
        ("x=a\\=b", "x=a\\=b"),
        ("x=a\\\\b", "x=a\\\\b"),
        ("x==a", "x=a"),
        ("x!=!a", "x!=!a"),
        ("spec.nodeName=,status.phase=Pending", "spec.nodeName=,status.phase=Pending"),
        ("x =y", "x =y"),
    ],
)
def test_valid_selectors(text: str, canonical: str) -> None:
    selector = parse_field_selector(text)
    assert str(selector) == canonical
    assert parse_field_selector(canonical) == selector


def test_terms_are_sorted_by_their_raw_text_and_values_unescaped() -> None:
    selector = parse_field_selector("z!=1,a=x\\,y,m==q")
    assert selector.requirements == (
        FieldRequirement("a", EQUALS, "x,y"),
        FieldRequirement("m", EQUALS, "q"),
        FieldRequirement("z", NOT_EQUALS, "1"),
    )
    assert selector.field_names() == {"a", "m", "z"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        ("x=a=b", "invalid field selector: unescaped character in value: 61"),
        ("x===a", "invalid field selector: unescaped character in value: 61"),
        ("x=a,y=b,c", "invalid selector: 'x=a,y=b,c'; can't understand 'c'"),
        ("x=a\\b", "invalid field selector: invalid escape sequence: \\b"),
        ("x=a\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_invalid_selectors(text: str, message: str) -> None:
    with pytest.raises(FieldSelectorError) as caught:
        parse_field_selector(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {"a": "b"}, True),
        ("metadata.name=web", {"metadata.name": "web"}, True),
        ("metadata.name=web", {"metadata.name": "db"}, False),
        ("metadata.name=web", {}, False),
        ("spec.nodeName=", {}, True),
        ("spec.nodeName=", {"spec.nodeName": "n1"}, False),
        ("status.phase!=Running", {}, True),
        ("status.phase!=Running", {"status.phase": "Running"}, False),
        ("a=1,b!=2", {"a": "1", "b": "3"}, True),
        ("a=1,b!=2", {"a": "1", "b": "2"}, False),
    ],
)
def test_matching_treats_missing_fields_as_empty(text: str, fields: dict[str, str], expected: bool) -> None:
    assert parse_field_selector(text).matches(fields) is expected


def test_everything_nothing_and_sets() -> None:
    assert FieldSelector.everything().empty()
    assert parse_field_selector("") == FieldSelector.everything()
    assert not FieldSelector.nothing().matches({})
    assert not FieldSelector.nothing().empty()
    assert str(FieldSelector.nothing()) == ""
    selector = FieldSelector.from_set({"metadata.name": "a,b"})
    assert str(selector) == "metadata.name=a\\,b"
    assert selector.matches({"metadata.name": "a,b"})


def test_exact_match_and_supported_fields() -> None:
    selector = parse_field_selector("metadata.name=web,status.phase!=Failed")
    assert selector.requires_exact_match("metadata.name") == "web"
    assert selector.requires_exact_match("status.phase") is None
    selector.check_supported({"metadata.name", "status.phase"})
    with pytest.raises(FieldSelectorError, match=r"^field label not supported: status\.phase$"):
        selector.check_supported({"metadata.name"})


def test_escaping() -> None:
    assert escape_value("a\\b,c=d!") == "a\\\\b\\,c\\=d!"
    assert unescape_value("plain") == "plain"


@given(st.dictionaries(st.from_regex(r"[a-z][a-z.]{0,10}", fullmatch=True), st.text(max_size=12), max_size=5))
def test_set_selectors_round_trip(fields: dict[str, str]) -> None:
    selector = FieldSelector.from_set(fields)
    reparsed = parse_field_selector(str(selector))
    assert {(r.field, r.value) for r in reparsed.requirements} == {(r.field, r.value) for r in selector.requirements}
    assert reparsed.matches(fields)


@given(st.text(max_size=12))
def test_escape_round_trip(value: str) -> None:
    assert unescape_value(escape_value(value)) == value


@given(st.text(max_size=30))
def test_parser_raises_only_field_selector_errors(text: str) -> None:
    try:
        selector = parse_field_selector(text)
    except FieldSelectorError:
        return
    # Terms are ordered by their raw text, which escaping and ``==`` can change: compare as sets.
    reparsed = parse_field_selector(str(selector))
    assert sorted(map(str, reparsed.requirements)) == sorted(map(str, selector.requirements))


def test_order_follows_the_raw_terms() -> None:
    selector = parse_field_selector("a=b,a==x")
    assert str(selector) == "a=x,a=b"
    assert str(parse_field_selector(str(selector))) == "a=b,a=x"
