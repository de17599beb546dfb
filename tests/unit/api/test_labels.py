"""Label selector grammar, matching, LabelSelector conversion and validation.

Cases restate the behaviour of apimachinery's ``labels`` package and ``metav1`` helpers.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.api.labels import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
    Selector,
    SelectorError,
    format_label_selector,
    label_selector_string,
    new_requirement,
    parse_int64,
    parse_selector,
    selector_from_label_selector,
    validate_label_selector,
)
from kubeloop.api.status import FIELD_VALUE_FORBIDDEN, FIELD_VALUE_INVALID, FIELD_VALUE_REQUIRED

# --- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("z=c,x=a", "x=a,z=c"),
        ("x!=a,y=b", "x!=a,y=b"),
        ("x=", "x="),
        ("x= ", "x="),
        ("x=,z= ", "x=,z="),
        ("!x", "!x"),
        ("x>1", "x>1"),
        ("x>1,z<5", "x>1,z<5"),
        ("x==a", "x==a"),
        (" \tx = a , y\n", "x=a,y"),
        ("\rx", "x"),
        ("a ", "a"),
        ("x in (b,a)", "x in (a,b)"),
        ("x in (abc,abc)", "x in (abc)"),
        ("x in ()", "x in ()"),
        ("x in (abc,)", "x in (,abc)"),
        ("x in (a,,)", "x in (,a)"),
        ("x in (a,,a,,a,,)", "x in (,a)"),
        ("x notin ( )", "x notin ()"),
        ("x notin (, a)", "x notin (,a)"),
        ("foo  in\t (abc)", "foo in (abc)"),
        ("x notin\n (abc)", "x notin (abc)"),
        ("x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"),
        ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
        ("notin=in", "notin=in"),
        ("in", "in"),
        ("this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"),
        ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"),
        ("x=a,x!=b", "x=a,x!=b"),
        ("b,a=1,!c", "a=1,b,!c"),
    ],
)
def test_valid_selectors_print_canonically(text: str, canonical: str) -> None:
    selector = parse_selector(text)
    assert str(selector) == canonical
    assert parse_selector(canonical) == selector


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("x nott in (y)", "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"),
        ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
        ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("x in", "unable to parse requirement: found '' expected: '('"),
        ("x in (a=)", "unable to parse requirement: found '=', expected: ',' or ')'"),
        ("x in (,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("x=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        (
            "x<a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
)
def test_invalid_selectors_give_upstream_messages(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_selector(text)
    assert str(caught.value) == message


def test_invalid_key_is_reported_on_a_nil_path() -> None:
    with pytest.raises(SelectorError) as caught:
        parse_selector("-a=b")
    assert str(caught.value).startswith('unable to parse requirement: <nil>: Invalid value: "-a": name part must')


def test_invalid_value_is_reported_under_its_key() -> None:
    with pytest.raises(SelectorError) as caught:
        parse_selector("x=a||y=b")
    assert str(caught.value).startswith('unable to parse requirement: values[0][x]: Invalid value: "a||y": ')
    with pytest.raises(SelectorError) as caught:
        parse_selector("x>-1")
    assert str(caught.value).startswith('unable to parse requirement: values[0][x]: Invalid value: "-1": a valid label')
    with pytest.raises(SelectorError, match=r"values\[0\]\[k\]: Invalid value: \"" + "v" * 64):
        parse_selector("k=" + "v" * 64)


def test_nul_character_ends_the_input_as_in_the_upstream_lexer() -> None:
    assert str(parse_selector("a=b\0,c")) == "a=b"


# --- matching ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x", {"x": "z"}, True),
        ("!x", {"y": "z"}, True),
        ("x>1", {"x": "2"}, True),
        ("x<1", {"x": "0"}, True),
        ("x<1", {"x": "-5"}, True),
        ("x>3", {"x": "+7"}, True),
        ("x=z", {}, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x", {"y": "z"}, False),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "0"}, False),
        ("x<1", {"x": "2"}, False),
        ("x>1", {"x": "v2"}, False),
        ("x>1", {}, False),
        ("x>1", {"x": "99999999999999999999"}, False),
        ("x!=y", {}, True),
        ("x notin (a)", {}, True),
        ("x notin (a)", {"x": "a"}, False),
        ("x in (a,b)", {"x": "b"}, True),
        ("x in (a,b)", {}, False),
        ("x in ()", {"x": ""}, True),
        ("x in ()", {"y": "baz"}, False),
        ("x notin (),y", {"y": ""}, True),
        ("x notin (),!y", {"y": ""}, False),
        ("x=", {"x": ""}, True),
        ("x=", {}, False),
        ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
    ],
)
def test_matching(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


def test_everything_and_nothing() -> None:
    assert Selector.everything().empty()
    assert Selector.everything().matches({"a": "b"})
    assert parse_selector("") == Selector.everything()
    nothing = Selector.nothing()
    assert not nothing.empty()
    assert not nothing.matches({})
    assert nothing.matches_nothing()
    assert str(nothing) == ""
    assert nothing != Selector.everything()
    assert nothing.add(Requirement("a", EXISTS)) is nothing


def test_selector_from_set_and_exact_match() -> None:
    selector = Selector.from_set({"b": "2", "a": "1"})
    assert str(selector) == "a=1,b=2"
    assert selector.requires_exact_match("a") == "1"
    assert parse_selector("k in (v)").requires_exact_match("k") == "v"
    assert parse_selector("k in (v,w)").requires_exact_match("k") is None
    assert parse_selector("k!=v").requires_exact_match("k") is None
    assert parse_selector("k==v").requires_exact_match("missing") is None


def test_add_keeps_requirements_sorted_by_key() -> None:
    selector = parse_selector("b=1").add(Requirement("a", IN, ("x",)))
    assert [r.key for r in selector.requirements] == ["a", "b"]
    assert str(selector) == "a in (x),b=1"


def test_requirements_tuple_and_operators() -> None:
    selector = parse_selector("a=1,b==2,c!=3,d in (4),e notin (5),f,!g,h>6,i<7")
    assert [r.operator for r in selector.requirements] == [
        EQUALS,
        DOUBLE_EQUALS,
        NOT_EQUALS,
        IN,
        NOT_IN,
        EXISTS,
        DOES_NOT_EXIST,
        GREATER_THAN,
        LESS_THAN,
    ]
    assert selector.requirements[3] == Requirement("d", IN, ("4",))


def test_selectors_are_immutable_and_hashable() -> None:
    selector = parse_selector("a=b")
    with pytest.raises(AttributeError):
        selector.requirements = ()
    assert hash(selector) == hash(parse_selector("a = b"))


@pytest.mark.parametrize(
    ("key", "operator", "values", "message"),
    [
        ("x1", IN, [], "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"),
        ("x5", EQUALS, ["bar", "foo"], "exact-match compatibility requires one single value"),
        ("x8", EXISTS, ["foo"], "values set must be empty for exists and does not exist"),
        ("x13", GREATER_THAN, [], "for 'Gt', 'Lt' operators, exactly one value is required"),
        ("x14", GREATER_THAN, ["bar"], "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators"),
        ("x17", EQUALS, ["a b"], 'values[0][x17]: Invalid value: "a b"'),
        ("a" * 254, EXISTS, [], "key: Invalid value"),
        ("x18", "unsupportedOp", [], 'operator: Unsupported value: "unsupportedOp": supported values: "in"'),
    ],
)
def test_requirement_constructor_errors(key: str, operator: str, values: list[str], message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        new_requirement(key, operator, values)
    assert message in str(caught.value)


def test_requirement_with_several_errors_aggregates_them() -> None:
    with pytest.raises(SelectorError) as caught:
        new_requirement("-k", GREATER_THAN, ["x", "y"])
    text = str(caught.value)
    assert text.startswith("[key: Invalid value")
    assert text.count("Invalid value") == 4


def test_string_form_sorts_values_without_deduplicating() -> None:
    assert str(Requirement("k", IN, ("b", "a", "b"))) == "k in (a,b,b)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("+7", 7),
        ("-7", -7),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
        ("1_0", None),
        (" 1", None),
        ("", None),
        ("1.0", None),
    ],
)
def test_parse_int64_follows_go(text: str, expected: int | None) -> None:
    assert parse_int64(text) == expected


# --- metav1.LabelSelector ----------------------------------------------------------------------


def test_label_selector_conversion() -> None:
    assert selector_from_label_selector(None) == Selector.nothing()
    assert selector_from_label_selector({}) == Selector.everything()
    assert selector_from_label_selector({"matchLabels": {}, "matchExpressions": []}).empty()
    selector = selector_from_label_selector(
        {
            "matchLabels": {"app": "web", "tier": "front"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "team", "operator": "Exists"},
            ],
        }
    )
    assert str(selector) == "app=web,!canary,env in (dev,prod),team,tier=front,zone notin (b)"
    assert selector.matches({"app": "web", "tier": "front", "env": "dev", "team": "x"})
    assert not selector.matches({"app": "web", "tier": "front", "env": "dev", "team": "x", "canary": ""})


@pytest.mark.parametrize(
    ("label_selector", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, '"Gt" is not a valid label selector'),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "values set can't be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "must be empty for exists"),
        ({"matchLabels": {"a": "-bad"}}, 'values[0][a]: Invalid value: "-bad"'),
        ({"matchLabels": {"a/b/c": "x"}}, 'key: Invalid value: "a/b/c"'),
        ({"matchLabels": ["a"]}, "matchLabels must be an object"),
        ([], "a label selector must be an object"),
    ],
)
def test_invalid_label_selectors(label_selector: object, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        selector_from_label_selector(label_selector)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_scale_and_kubectl_string_forms() -> None:
    label_selector = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]}
    assert label_selector_string(label_selector) == "app=web,b"
    assert label_selector_string(None) == ""
    assert label_selector_string({}) == ""
    assert format_label_selector(label_selector) == "app=web,b"
    assert format_label_selector({}) == "<none>"
    assert format_label_selector(None) == "<none>"
    assert format_label_selector({"matchLabels": {"a": "-"}}) == "<error>"


# --- validation --------------------------------------------------------------------------------


def test_valid_label_selector_has_no_errors() -> None:
    assert validate_label_selector(None, "spec.selector") == []
    assert validate_label_selector({"matchLabels": {"app": "web"}}, "spec.selector") == []


def test_validation_paths_and_messages() -> None:
    errors = validate_label_selector(
        {
            "matchLabels": {"-k": "v", "ok": "-v"},
            "matchExpressions": [
                {"key": "a", "operator": "In", "values": []},
                {"key": "b", "operator": "Exists", "values": ["x"]},
                {"key": "c", "operator": "Gt", "values": ["1"]},
                {"key": "d", "operator": "NotIn", "values": ["-bad"]},
            ],
        },
        "spec.selector",
    )
    got = [(e.type, e.field) for e in errors]
    assert got == [
        (FIELD_VALUE_INVALID, "spec.selector.matchLabels"),
        (FIELD_VALUE_INVALID, "spec.selector.matchLabels"),
        (FIELD_VALUE_REQUIRED, "spec.selector.matchExpressions[0].values"),
        (FIELD_VALUE_FORBIDDEN, "spec.selector.matchExpressions[1].values"),
        (FIELD_VALUE_INVALID, "spec.selector.matchExpressions[2].operator"),
        (FIELD_VALUE_INVALID, "spec.selector.matchExpressions[3].values[0]"),
    ]
    assert errors[2].detail == "must be specified when `operator` is 'In' or 'NotIn'"
    assert errors[3].detail == "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    assert (
        str(errors[4])
        == 'spec.selector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator'
    )


def test_validation_of_badly_typed_selectors_does_not_raise() -> None:
    assert validate_label_selector("x", "spec.selector")[0].field == "spec.selector"
    errors = validate_label_selector({"matchLabels": [1], "matchExpressions": {}}, "s")
    assert [e.field for e in errors] == ["s.matchLabels", "s.matchExpressions"]
    errors = validate_label_selector({"matchExpressions": [{"key": 3, "operator": "In", "values": [2]}]}, "s")
    assert [e.field for e in errors] == ["s.matchExpressions[0].key", "s.matchExpressions[0].values[0]"]


# --- properties --------------------------------------------------------------------------------

_names = st.from_regex(r"[a-z0-9]([-a-z0-9_.]{0,8}[a-z0-9])?", fullmatch=True)
_keys = st.one_of(_names, st.builds(lambda p, n: f"{p}.io/{n}", st.from_regex(r"[a-z]{1,6}", fullmatch=True), _names))
_values = st.one_of(st.just(""), _names)
_requirements = st.one_of(
    st.builds(
        lambda k, op, v: Requirement(k, op, (v,)), _keys, st.sampled_from([EQUALS, DOUBLE_EQUALS, NOT_EQUALS]), _values
    ),
    st.builds(
        lambda k, op, vs: Requirement(k, op, tuple(sorted(set(vs)))),
        _keys,
        st.sampled_from([IN, NOT_IN]),
        st.lists(_values, min_size=1, max_size=4),
    ),
    st.builds(lambda k, op: Requirement(k, op), _keys, st.sampled_from([EXISTS, DOES_NOT_EXIST])),
    st.builds(
        lambda k, op, n: Requirement(k, op, (str(n),)),
        _keys,
        st.sampled_from([GREATER_THAN, LESS_THAN]),
        st.integers(0, 2**63 - 1),
    ),
)


@given(st.lists(_requirements, max_size=6))
def test_string_form_parses_back_to_the_same_selector(requirements: list[Requirement]) -> None:
    selector = Selector(requirements)
    assert parse_selector(str(selector)) == selector


@given(st.lists(_requirements, max_size=6), st.dictionaries(_keys, _values, max_size=6))
def test_parsed_selector_matches_like_the_original(requirements: list[Requirement], labels: dict[str, str]) -> None:
    selector = Selector(requirements)
    assert parse_selector(str(selector)).matches(labels) == all(r.matches(labels) for r in requirements)


@given(st.text(max_size=40))
def test_parser_never_fails_with_anything_but_selector_error(text: str) -> None:
    try:
        selector = parse_selector(text)
    except SelectorError:
        return
    assert parse_selector(str(selector)) == selector


_KEYS = st.sampled_from(["app", "tier", "pod-template-hash", "x"])
_VALUES = st.sampled_from(["a", "b", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_KEYS, st.sampled_from([EQUALS, DOUBLE_EQUALS, IN, NOT_EQUALS, NOT_IN, EXISTS]),
                          st.lists(_VALUES, min_size=1, max_size=2)), max_size=4),
       st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_matches_agrees_with_the_requirements_one_by_one(terms: list[tuple[str, str, list[str]]],
                                                         labels: dict[str, str]) -> None:
    # Equality-only selectors take a set-comparison shortcut; it must agree with the rule.
    requirements = [Requirement(key, op, () if op == EXISTS else tuple(values)) for key, op, values in terms]
    selector = Selector(requirements)
    assert selector.matches(labels) == all(r.matches(labels) for r in selector.requirements)
