"""Reading an API error's code, reason and causes (one home for the former copies in the
reflector's list-watch, the claim manager, the event sink and the ReplicaSet's pod control)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException as KubernetesApiException

from kubeloop.api.errorstatus import has_status_cause, is_namespace_terminating, status_code, status_reason
from kubeloop.api.status import ApiError
from kubeloop.client import Forbidden


def terminating() -> Forbidden:
    return Forbidden(code=403, reason="Forbidden", message="namespace is terminating",
                     details={"causes": [{"reason": "NamespaceTerminating", "message": "x"}]})


@pytest.mark.parametrize(
    ("exc", "code", "reason"),
    [
        (terminating(), 403, "Forbidden"),
        (ApiError(410, "Expired", "too old"), 410, "Expired"),
        (KubernetesApiException(status=404, reason="Not Found"), 404, "Not Found"),
        (ValueError("not an API error"), None, ""),
        (ConnectionError(), None, ""),
    ],
)
def test_code_and_reason(exc: BaseException, code: int | None, reason: str) -> None:
    assert status_code(exc) == code
    assert status_reason(exc) == reason


def _with_details(details: Any) -> ApiError:
    return ApiError(422, "Invalid", "x", details)


@pytest.mark.parametrize(
    ("exc", "cause", "found"),
    [
        (terminating(), "NamespaceTerminating", True),
        (terminating(), "FieldValueInvalid", False),
        (_with_details({"causes": [{"reason": "A"}, {"reason": "B"}]}), "B", True),
        (_with_details({"causes": [{"type": "B"}]}), "B", False),  # on the wire a cause's type is "reason"
        (_with_details({"causes": None}), "B", False),
        (_with_details({"causes": ["B", None]}), "B", False),
        (_with_details({}), "B", False),
        (_with_details(None), "B", False),
        (Forbidden(code=403, reason="Forbidden", message="no"), "NamespaceTerminating", False),
        (ValueError("x"), "NamespaceTerminating", False),
    ],
)
def test_has_status_cause(exc: BaseException, cause: str, found: bool) -> None:
    assert has_status_cause(exc, cause) is found


def test_namespace_terminating_is_read_from_the_status_causes() -> None:
    assert is_namespace_terminating(terminating())
    assert not is_namespace_terminating(Forbidden(code=403, reason="Forbidden", message="no"))
