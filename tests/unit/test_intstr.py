import pytest

from kubeloop.api.intstr import IntOrPercentError, int_or_percent_value, scaled_value


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (5, 10, True, 5),
        (5, 10, False, 5),
        ("25%", 10, True, 3),
        ("25%", 10, False, 2),
        ("0%", 10, True, 0),
        ("100%", 7, False, 7),
        ("10%", 5, True, 1),
        ("10%", 5, False, 0),
        ("50%", 0, True, 0),
        ("-10%", 10, False, -1),
    ],
)
def test_scaled_value(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up) == expected


@pytest.mark.parametrize("value", ["25", "abc%", "%", "1.5%", None, True, 2.5])
def test_rejects_non_percent(value: object) -> None:
    with pytest.raises(IntOrPercentError):
        int_or_percent_value(value)  # type: ignore[arg-type]
