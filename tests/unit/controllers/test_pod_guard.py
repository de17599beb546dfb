""":func:`kubeloop.controllers.pod_guard.creation_refusal`: the pods a controller may create."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.labels import parse_selector
from kubeloop.controllers.pod_guard import NO_LABELS, NOT_MATCHING, creation_refusal


@pytest.mark.parametrize(("selector", "labels", "refusal"), [
    ("app=web", {"app": "web"}, None),
    ("app=web", {"app": "web", "extra": "x"}, None),
    ("app in (web,api),tier!=db", {"app": "api", "tier": "fe"}, None),
    ("app=web", {}, NO_LABELS),
    ("app=web", None, NO_LABELS),
    ("app=web", "app=web", NO_LABELS),
    ("app=web", {"app": "api"}, NOT_MATCHING),
    ("app=web", {"other": "web"}, NOT_MATCHING),
    ("!app", {"app": "web"}, NOT_MATCHING),
    ("app=web", {"app": 1}, NOT_MATCHING),
])
def test_creation_refusal(selector: str, labels: Any, refusal: str | None) -> None:
    assert creation_refusal(parse_selector(selector), labels) == refusal
