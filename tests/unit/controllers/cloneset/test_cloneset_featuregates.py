"""Reading upstream-style feature-gate settings into the CloneSet controller's gates, and handing
them to the controller through ``add_controllers``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, Request
from kubeloop.controllers import add_controllers, check_feature_gates
from kubeloop.controllers.cloneset.controller import CloneSetControllerOptions, add_cloneset_controller
from kubeloop.controllers.cloneset.featuregates import (
    KNOWN_GATES,
    feature_gates_from,
    format_feature_gates,
    known_gate_names,
    parse_feature_gates,
)
from kubeloop.controllers.cloneset.options import DEFAULT_GATES, CloneSetFeatureGates
from kubeloop.runtime.manager import Manager

ALPHA_ATTRIBUTES = {spec.attribute for spec in KNOWN_GATES.values() if spec.alpha}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("PreparingUpdateAsUpdate=true", {"PreparingUpdateAsUpdate": True}),
        (" CloneSetShortHash = false , ,KruisePodReadinessGate=1,", {"CloneSetShortHash": False,
                                                                      "KruisePodReadinessGate": True}),
        ("CloneSetShortHash=T,CloneSetShortHash=F", {"CloneSetShortHash": False}),
        ("AllAlpha=TRUE,AllBeta=0", {"AllAlpha": True, "AllBeta": False}),
        ("RecreatePodWhenChangeVCTInCloneSetGate=True", {"RecreatePodWhenChangeVCTInCloneSetGate": True}),
    ],
)
def test_parse_accepts_upstream_spellings(text: str, expected: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NoSuchGate=true", "unrecognized feature gate: 'NoSuchGate'"),
        ("preparingupdateasupdate=true", "unrecognized feature gate"),
        ("CloneSetShortHash", "missing bool value for 'CloneSetShortHash'"),
        ("CloneSetShortHash=yes", "invalid value of CloneSetShortHash='yes'"),
        ("CloneSetShortHash=", "invalid value of CloneSetShortHash=''"),
        ("=true", "unrecognized feature gate: ''"),
    ],
)
def test_parse_rejects_bad_items(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_feature_gates(text)


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError) as caught:
        parse_feature_gates("Bogus=true")
    for name in known_gate_names():
        assert name in str(caught.value)


def test_every_known_gate_sets_its_own_field() -> None:
    fields = {f.name for f in dataclasses.fields(CloneSetFeatureGates)}
    for name, spec in KNOWN_GATES.items():
        assert spec.attribute in fields
        flipped = not getattr(DEFAULT_GATES, spec.attribute)
        gates = feature_gates_from({name: flipped})
        assert getattr(gates, spec.attribute) is flipped
        assert dataclasses.replace(gates, **{spec.attribute: not flipped}) == DEFAULT_GATES


def test_all_alpha_sets_the_alpha_gates_only() -> None:
    gates = feature_gates_from({"AllAlpha": True})
    for spec in KNOWN_GATES.values():
        expected = True if spec.alpha else getattr(DEFAULT_GATES, spec.attribute)
        assert getattr(gates, spec.attribute) is expected
    # InPlaceUpdateEnvFromMetadata is beta: AllBeta switches it, AllAlpha does not.
    assert feature_gates_from({"AllBeta": False}).in_place_update_env_from_metadata is False
    assert feature_gates_from({"AllAlpha": False}).in_place_update_env_from_metadata is True
    assert ALPHA_ATTRIBUTES and "in_place_update_env_from_metadata" not in ALPHA_ATTRIBUTES


@pytest.mark.parametrize("settings", [
    {"AllAlpha": True, "CloneSetShortHash": False},
    {"CloneSetShortHash": False, "AllAlpha": True},
])
def test_an_explicit_gate_wins_over_all_alpha_in_any_order(settings: dict[str, bool]) -> None:
    gates = feature_gates_from(settings)
    assert gates.short_hash is False
    assert gates.preparing_update_as_update is True and gates.partition_rollback is True


def test_settings_apply_over_a_base_and_leave_unnamed_fields() -> None:
    base = dataclasses.replace(DEFAULT_GATES, scaling_exclude_preparing_delete=True, short_hash=True)
    gates = feature_gates_from({"PreparingUpdateAsUpdate": True}, base)
    assert gates.scaling_exclude_preparing_delete and gates.short_hash and gates.preparing_update_as_update


def test_mapping_values_must_be_booleans() -> None:
    not_a_bool: dict[str, Any] = {"CloneSetShortHash": "true"}
    with pytest.raises(ValueError, match="invalid value of CloneSetShortHash"):
        feature_gates_from(not_a_bool)
    with pytest.raises(ValueError, match="unrecognized feature gate"):
        check_feature_gates({"Nope": True})


def test_format_names_the_gates_changed_from_the_defaults() -> None:
    assert format_feature_gates(DEFAULT_GATES) == ""
    gates = feature_gates_from({"CloneSetShortHash": True, "InPlaceUpdateEnvFromMetadata": False})
    assert format_feature_gates(gates) == "CloneSetShortHash=true,InPlaceUpdateEnvFromMetadata=false"
    assert feature_gates_from(parse_feature_gates(format_feature_gates(gates))) == gates


# -- plumbing: the settings reach the built controller -------------------------------------------

def _offline_manager() -> Manager:
    """A manager that is built on but never started (any request would be refused)."""
    def refuse(request: Request) -> MockResponse:
        raise AssertionError(f"unexpected request {request.method} {request.path}")

    client = ApiClient(ClientConfig("https://k8s.example:6443", qps=0), transport=MockTransport(refuse))
    return Manager(client)


async def test_add_controllers_hands_gates_to_the_cloneset_controller_only() -> None:
    built = await add_controllers(_offline_manager(), ["replicaset", "cloneset"],
                                  feature_gates={"CloneSetShortHash": True, "PreparingUpdateAsUpdate": True})
    gates = built["cloneset"].sync.gates
    assert gates.short_hash and gates.preparing_update_as_update and not gates.partition_rollback
    assert "replicaset" in built


async def test_add_controllers_without_gates_keeps_the_defaults() -> None:
    built = await add_controllers(_offline_manager(), ["cloneset"])
    assert built["cloneset"].sync.gates == DEFAULT_GATES


async def test_add_controllers_rejects_unknown_gates_before_building() -> None:
    manager = _offline_manager()
    with pytest.raises(ValueError, match="unrecognized feature gate"):
        await add_controllers(manager, ["replicaset"], feature_gates={"Typo": True})
    assert manager.factory.informers() == []


async def test_builder_applies_gates_over_its_options() -> None:
    options = CloneSetControllerOptions(gates=dataclasses.replace(DEFAULT_GATES, partition_rollback=True))
    built = await add_cloneset_controller(_offline_manager(), options, feature_gates={"AllAlpha": True,
                                                                                      "CloneSetShortHash": False})
    gates = built.sync.gates
    assert gates.partition_rollback and gates.recreate_pod_when_change_vct and not gates.short_hash
