import pytest

from kubeloop.api.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    object_name_errors,
    qualified_name_errors,
)


@pytest.mark.parametrize("key", ["app", "a.b/c", "example.com/MyName", "x-y_z.1", "A" * 63])
def test_valid_qualified_names(key: str) -> None:
    assert qualified_name_errors(key) == []


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("", "name part must be non-empty"),
        ("/a", "prefix part must be non-empty"),
        ("a/b/c", "a qualified name must consist of"),
        ("-a", "name part must consist of"),
        ("A" * 64, "name part must be no more than 63 characters"),
        ("Upper.Case/a", "prefix part a lowercase RFC 1123 subdomain"),
    ],
)
def test_invalid_qualified_names(key: str, fragment: str) -> None:
    errors = qualified_name_errors(key)
    assert any(fragment in e for e in errors), errors


def test_label_value_message_matches_upstream() -> None:
    assert label_value_errors("") == []
    assert label_value_errors("-x") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
        "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]


def test_dns_names() -> None:
    assert dns1123_label_errors("web-1") == []
    assert dns1123_label_errors("web.1") != []
    assert dns1123_subdomain_errors("web.example-1") == []
    assert dns1123_subdomain_errors("Web") != []
    assert len(dns1123_subdomain_errors("a" * 254)) == 1
    assert object_name_errors("web-", prefix=True) == []
    assert object_name_errors("web-") != []
