"""Upstream-style feature-gate settings for the CloneSet controller.

OpenKruise's manager takes ``--feature-gates=Name=true,Other=false`` with the gate names of
its ``pkg/features`` package, plus two special names that switch whole pre-release stages:
``AllAlpha`` and ``AllBeta``. This module reads that text and turns named settings into a
:class:`~.options.CloneSetFeatureGates`, so that ``kubeloop up``, ``kubeloop controllers`` and
the test cluster can all be configured with the names people already use upstream.

    settings = parse_feature_gates("AllAlpha=true,CloneSetShortHash=false")
    gates = feature_gates_from(settings)

Only the gates this controller models are accepted: a name kubeloop would silently ignore is
refused rather than appearing to work. Errors are :class:`ValueError` with a message naming the
offending item and, for unknown names, the known ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .options import DEFAULT_GATES, CloneSetFeatureGates

ALL_ALPHA: Final = "AllAlpha"
"""Special name: sets every alpha gate not named explicitly."""
ALL_BETA: Final = "AllBeta"
"""Special name: sets every beta gate not named explicitly."""


@dataclass(frozen=True)
class GateSpec:
    """What kubeloop knows of one upstream gate."""

    attribute: str
    """The :class:`CloneSetFeatureGates` field it sets."""
    alpha: bool
    """Upstream's pre-release stage: alpha (``AllAlpha`` sets it) or beta (``AllBeta`` does)."""


KNOWN_GATES: Final[Mapping[str, GateSpec]] = {
    "CloneSetPartitionRollback": GateSpec("partition_rollback", alpha=True),
    "PreparingUpdateAsUpdate": GateSpec("preparing_update_as_update", alpha=True),
    "CloneSetShortHash": GateSpec("short_hash", alpha=True),
    "RecreatePodWhenChangeVCTInCloneSetGate": GateSpec("recreate_pod_when_change_vct", alpha=True),
    "KruisePodReadinessGate": GateSpec("kruise_pod_readiness_gate", alpha=True),
    "PreDownloadImageForInPlaceUpdate": GateSpec("pre_download_image_for_in_place_update", alpha=True),
    "InPlaceUpdateEnvFromMetadata": GateSpec("in_place_update_env_from_metadata", alpha=False),
}
"""Upstream gate name -> its spec (names and stages as OpenKruise v1.8 declares them)."""

_SPECIAL: Final = (ALL_ALPHA, ALL_BETA)

# The spellings Go's strconv.ParseBool accepts, which upstream's flag parsing relies on.
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def known_gate_names() -> list[str]:
    """Every name :func:`parse_feature_gates` accepts, special names first, then sorted."""
    return [*_SPECIAL, *sorted(KNOWN_GATES)]


def _check_name(name: str) -> None:
    if name not in KNOWN_GATES and name not in _SPECIAL:
        raise ValueError(f"unrecognized feature gate: {name!r} (known: {', '.join(known_gate_names())})")


def _parse_bool(name: str, text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"invalid value of {name}={text!r}: expected true or false")


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``"Name=true, Other=false"`` -> ``{"Name": True, "Other": False}``, in the text's order.

    Items are separated by commas; blanks around names and values and empty items are ignored,
    as upstream does. A later item for the same name wins. Raises :class:`ValueError` for an
    item without ``=``, a value that is not a boolean, or a name this controller does not know.
    """
    settings: dict[str, bool] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"missing bool value for {name!r} (write {name}=true or {name}=false)")
        _check_name(name)
        settings[name] = _parse_bool(name, value.strip())
    return settings


def feature_gates_from(settings: Mapping[str, bool],
                       base: CloneSetFeatureGates = DEFAULT_GATES) -> CloneSetFeatureGates:
    """``base`` with the named gates set; ``AllAlpha`` / ``AllBeta`` set every gate of their
    stage that ``settings`` does not name itself (an explicit setting always wins, whatever the
    order). Raises :class:`ValueError` for unknown names or non-boolean values.
    """
    for name, value in settings.items():
        _check_name(name)
        if not isinstance(value, bool):
            raise ValueError(f"invalid value of {name}={value!r}: expected true or false")
    changes: dict[str, bool] = {}
    for name, spec in KNOWN_GATES.items():
        stage = ALL_ALPHA if spec.alpha else ALL_BETA
        if name in settings:
            changes[spec.attribute] = settings[name]
        elif stage in settings:
            changes[spec.attribute] = settings[stage]
    return dataclasses.replace(base, **changes)


def format_feature_gates(gates: CloneSetFeatureGates) -> str:
    """The gates that differ from upstream's defaults as ``Name=true,...`` ("" when none do)."""
    return ",".join(
        f"{name}={str(getattr(gates, spec.attribute)).lower()}"
        for name, spec in sorted(KNOWN_GATES.items())
        if getattr(gates, spec.attribute) != getattr(DEFAULT_GATES, spec.attribute)
    )
