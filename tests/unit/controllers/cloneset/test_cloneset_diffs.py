"""calculate_diffs against every row of upstream's calculateDiffsWithExpectation table.

Each row: id | CloneSet parameters | pods | expected non-zero outputs.
Parameters: R replicas, P partition, MU / MS update maxUnavailable / maxSurge, SMU
scaleStrategy.maxUnavailable, EXCL the exclude-preparing-delete label, PAUSED, RC (current
revision == update revision), G0 (partition-rollback gate off), PUA (scale-side "new" that
counts PreparingUpdate pods as new).
Pods: ``<count>x<rev>.<state>.<ready>[.D]`` with rev N (update) / O (current), state Nm
Normal, PD PreparingDelete, PU PreparingUpdate, Up Updating, ready R (Running+Ready) or u (no
status), D specified-delete label.
Outputs: up, upOld, upLim, down, downOld, delRdy, surge, surgeOld, upd, updMU.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.diffs import (
    ExpectationDiffs,
    PartitionError,
    calculate_diffs,
    expected_updated_replicas,
    partition_replicas,
)
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates

ROWS = """
D01 | R=0 P=0 MU=1 MS=0 | - | -
D02 | R=5 P=0 MU=1 MS=0 | - | up=5 upLim=5
D03 | R=5 P=0 MU=1 MS=0 | 5xN.Nm.R | -
D04 | R=5 P=0 MU=1 MS=0 | 1xN.Nm.R.D 4xN.Nm.R | delRdy=1
D05 | R=5 P=0 MU=1 MS=0 | 4xN.Nm.R | up=1 upLim=1
D06 | R=5 P=0 MU=1 MS=0 | 5xN.Nm.R | -
D07 | R=5 P=0 MU=1 MS=0 | 2xN.Nm.R.D 3xN.Nm.R | delRdy=1
D08 | R=5 P=0 MU=1 MS=0 | 1xN.Nm.R.D 3xN.Nm.R | up=1 upLim=1
D09 | R=5 P=0 MU=1 MS=0 | 1xN.Nm.R.D 3xN.Nm.R 1xN.Nm.u | -
D10 | R=5 P=0 MU=1 MS=0 | 1xN.Nm.R.D 4xN.Nm.R | delRdy=1
D11 | R=5 P=0 MU=1 MS=0 | 4xN.Nm.R | up=1 upLim=1
D12 | R=5 P=0 MU=1 MS=0 | 5xN.Nm.R | -
D13 | R=4 P=0 MU=1 MS=0 | 2xN.Nm.u.D 3xN.Nm.R | delRdy=2
D14 | R=4 P=0 MU=1 MS=0 | 3xN.Nm.R | up=1 upLim=1
D15 | R=4 P=0 MU=1 MS=0 | 4xN.Nm.R | -
D16 | R=5 P=3 MU=1 MS=0 | 5xO.Nm.R | upd=2 updMU=1
D17 | R=5 P=3 MU=1 MS=0 | 1xN.Nm.R 4xO.Nm.R | upd=1 updMU=1
D18 | R=5 P=3 MU=1 MS=0 | 2xN.Nm.R 3xO.Nm.R | -
D19 | R=5 P=4 MU=2 MS=0 | 4xN.Nm.R 1xO.Nm.R | upd=-3 updMU=2
D20 | R=5 P=4 MU=2 MS=0 | 2xN.Nm.R 3xO.Nm.R | upd=-1 updMU=2
D21 | R=5 P=4 MU=2 MS=0 | 1xN.Nm.R 4xO.Nm.R | -
D22 | R=5 P=0 MU=0 MS=1 | 1xN.Nm.R.D 4xN.Nm.R | up=1 upLim=1 surge=1
D23 | R=5 P=0 MU=0 MS=1 | 1xN.Nm.R.D 4xN.Nm.R 1xN.Nm.u | surge=1
D24 | R=5 P=0 MU=0 MS=1 | 1xN.Nm.R.D 5xN.Nm.R | delRdy=1 surge=1
D25 | R=5 P=0 MU=0 MS=1 | 5xN.Nm.R | -
D26 | R=5 P=3 MU=1 MS=1 | 5xO.Nm.R | up=1 upLim=1 surge=1 upd=2 updMU=1
D27 | R=5 P=3 MU=1 MS=1 | 5xO.Nm.R 1xN.Nm.u | surge=1 upd=1 updMU=2
D28 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 1xN.Up.u 1xN.Nm.u | down=1 downOld=1
D29 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 1xN.Nm.R 1xN.Nm.u | down=1 downOld=1 delRdy=1
D30 | R=5 P=3 MU=1 MS=1 | 5xO.Nm.R | up=1 upLim=1 surge=1 upd=2 updMU=1
D31 | R=5 P=3 MU=1 MS=1 | 5xO.Nm.R 1xN.Nm.u | surge=1 upd=1 updMU=2
D32 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 1xO.Nm.R.D 1xN.Nm.u | delRdy=1 surge=1 surgeOld=1 upd=1 updMU=2
D33 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 1xN.Nm.u | up=1 upLim=1 surge=1 upd=1 updMU=1
D34 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 2xN.Nm.u | down=1 downOld=1
D35 | R=5 P=3 MU=1 MS=1 | 4xO.Nm.R 1xN.Nm.R 1xN.Nm.u | down=1 downOld=1 delRdy=1
D36 | R=5 P=3 MU=1 MS=1 | 3xO.Nm.R 2xN.Nm.R | -
D37 | R=5 P=99% MU=3 MS=2 | 5xO.Nm.R | up=1 upLim=1 surge=1 upd=1 updMU=3
D38 | R=5 P=99% MU=3 MS=2 | 5xO.Nm.R 1xN.Nm.u | down=1 downOld=1 delRdy=3
D39 | R=5 P=99% MU=3 MS=2 | 4xO.Nm.R 1xN.Nm.u | -
D40 | R=5 P=99% MU=40% MS=30% | 5xO.Nm.R | up=1 upLim=1 surge=1 upd=1 updMU=2
D41 | R=5 P=99% MU=40% MS=30% | 5xO.Nm.R 1xN.Nm.u | down=1 downOld=1 delRdy=2
D42 | R=5 P=99% MU=40% MS=30% | 4xO.Nm.R 1xN.Nm.u | -
D43 | R=5 P=99% MU=30% MS=30% | 5xO.Nm.R | up=1 upLim=1 surge=1 upd=1 updMU=1
D44 | R=5 P=99% MU=30% MS=30% | 5xO.Nm.R 1xN.Nm.u | down=1 downOld=1 delRdy=1
D45 | R=5 P=99% MU=30% MS=30% | 4xO.Nm.R 1xN.Nm.u | -
D46 | R=5 P=0 MU=1 MS=0 RC | 5xN.Nm.R | -
D47 | R=5 P=3 MU=1 MS=0 RC | 5xN.Nm.R | -
D48 | R=5 P=3 MU=1 MS=0 RC | 2xO.Nm.R 3xN.Nm.R | -
D49 | R=5 P=1 MU=1 MS=0 RC | 3xO.Nm.R 2xN.Nm.R | upd=2 updMU=1
D50 | R=5 P=1 MU=2 MS=0 RC | 2xO.Nm.R 2xN.Nm.R | up=1 upLim=1 upd=1 updMU=1
D51 | R=5 P=1 MU=1 MS=0 RC | 3xO.Nm.R 3xN.Nm.R | down=1 downOld=2 delRdy=2 upd=1 updMU=2
D52 | R=5 P=4 MU=1 MS=0 G0 | 1xO.Nm.R 4xN.Nm.R | -
D53 | R=5 P=0 MU=1 MS=0 SMU=2 | - | up=5 upLim=2
D54 | R=6 P=0 MU=1 MS=0 SMU=2 | 2xN.Nm.R 1xN.Nm.u | up=3 upLim=1
D55 | R=6 P=0 MU=1 MS=0 SMU=2 | 1xN.Nm.R 2xN.Nm.u | up=3
D56 | R=3 P=0 MU=1 MS=0 | 2xN.Nm.R 1xN.Nm.R.D | delRdy=1
D57 | R=3 P=0 MU=1 MS=0 | 2xN.Nm.R 1xN.PD.R.D | -
D58 | R=3 P=0 MU=1 MS=0 | 2xN.Nm.R | up=1 upLim=1
D59 | R=3 P=0 MU=1 MS=0 | 2xN.Nm.R 1xN.Nm.u | -
D60 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.Nm.R.D | delRdy=1
D61 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D | up=1 upLim=1
D62 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D 1xN.Nm.u | -
D63 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D 1xN.Nm.u | -
D64 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.Nm.R.D | delRdy=1
D65 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D | up=1 upLim=1
D66 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D 1xN.Nm.u | -
D67 | R=3 P=0 MU=1 MS=0 EXCL | 3xN.Nm.R 1xN.Nm.u | down=1 delRdy=1
D68 | R=3 P=0 MU=1 MS=0 EXCL | 3xN.Nm.R | -
D69 | R=3 P=0 MU=1 MS=0 EXCL | 3xN.Nm.R | -
D70 | R=2 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.Nm.R.D | delRdy=2
D71 | R=2 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D | -
D72 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D | up=1 upLim=1
D73 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.PD.R.D 1xN.Nm.u | -
D74 | R=3 P=0 MU=1 MS=0 EXCL | 2xN.Nm.R 1xN.Nm.u | -
D75 | R=4 P=90% MU=1 MS=0 EXCL PUA | 1xO.PU.R 2xO.Nm.R | up=1 upOld=1 upLim=1
D76 | R=4 P=2 MU=1 MS=0 EXCL PUA | 1xO.PU.R 2xO.Nm.R | up=1 upLim=1
D77 | R=5 P=0 MU=0 MS=3 PAUSED | 3xO.Nm.R | up=2 upLim=2 upd=3 updMU=-2
D78 | R=3 P=0 MU=0 MS=3 PAUSED | 5xO.Nm.R | down=2 downOld=5 delRdy=2 upd=3 updMU=2
D79 | R=5 P=0 MU=0 MS=3 PAUSED | 5xO.Nm.R 3xN.Nm.u | down=3 downOld=5 upd=2 updMU=3
D80 | R=5 P=2 MU=0 MS=3 PAUSED | 5xO.Nm.R 3xN.Nm.u | down=3 downOld=3
"""

# Rows whose result differs with every gate at its default (rollback off, PreparingUpdate not new).
DEFAULT_GATE_ROWS = {
    "D19": "-",
    "D20": "-",
    "D75": "up=1 upLim=1",
    "D76": "up=1 upLim=1 upd=1",
}

_OUTPUT_FIELDS = {
    "up": "scale_up_num",
    "upOld": "scale_up_num_old_revision",
    "upLim": "scale_up_limit",
    "down": "scale_down_num",
    "downOld": "scale_down_num_old_revision",
    "delRdy": "delete_ready_limit",
    "surge": "use_surge",
    "surgeOld": "use_surge_old_revision",
    "upd": "update_num",
    "updMU": "update_max_unavailable",
}
_STATES = {
    "Nm": kruise.STATE_NORMAL,
    "PD": kruise.STATE_PREPARING_DELETE,
    "PU": kruise.STATE_PREPARING_UPDATE,
    "Up": kruise.STATE_UPDATING,
}


def _int_or_str(text: str) -> int | str:
    return text if text.endswith("%") else int(text)


def _parse_row(line: str) -> tuple[str, dict[str, str], list[str], str]:
    row_id, params, pods, expected = (part.strip() for part in line.split("|"))
    fields: dict[str, str] = {}
    for token in params.split():
        key, _, value = token.partition("=")
        fields[key] = value or "yes"
    return row_id, fields, [] if pods == "-" else pods.split(), expected


def _expected(text: str) -> ExpectationDiffs:
    if text == "-":
        return ExpectationDiffs()
    values = {_OUTPUT_FIELDS[k]: int(v) for k, v in (token.split("=") for token in text.split())}
    return ExpectationDiffs(**values)


def _build(fields: dict[str, str], pod_specs: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cs = make_cloneset(
        int(fields["R"]),
        partition=_int_or_str(fields["P"]),
        max_unavailable=_int_or_str(fields["MU"]),
        max_surge=_int_or_str(fields["MS"]),
        scale_max_unavailable=_int_or_str(fields["SMU"]) if "SMU" in fields else None,
        paused="PAUSED" in fields,
        labels={kruise.SCALING_EXCLUDE_PREPARING_DELETE_LABEL: "true"} if "EXCL" in fields else None,
    )
    pods: list[dict[str, Any]] = []
    for spec in pod_specs:
        count, _, rest = spec.partition("x")
        parts = rest.split(".")
        revision = "new" if parts[0] == "N" else "old"
        ready = parts[2] == "R"
        for _ in range(int(count)):
            pods.append(
                make_pod(
                    f"pod-{len(pods)}",
                    revision,
                    state=_STATES[parts[1]],
                    ready=ready,
                    has_status=ready,
                    specified_delete=len(parts) > 3 and parts[3] == "D",
                )
            )
    return cs, pods


_PARSED = [_parse_row(line) for line in ROWS.strip().splitlines()]


def test_the_table_has_all_eighty_rows() -> None:
    assert [row[0] for row in _PARSED] == [f"D{i:02d}" for i in range(1, 81)]


@pytest.mark.parametrize(("row_id", "fields", "pods", "expected"), _PARSED, ids=[row[0] for row in _PARSED])
def test_upstream_table_with_its_gates(row_id: str, fields: dict[str, str], pods: list[str], expected: str) -> None:
    """Upstream runs the table with partition rollback and PreparingUpdateAsUpdate on (except G0)."""
    cs, pod_objs = _build(fields, pods)
    gates = CloneSetFeatureGates(partition_rollback="G0" not in fields, preparing_update_as_update=True)
    current = "new" if "RC" in fields else "old"
    result = calculate_diffs(cs, pod_objs, current, "new", now=NOW, gates=gates, for_scale="PUA" in fields)
    assert asdict(result) == asdict(_expected(expected)), row_id


@pytest.mark.parametrize(("row_id", "fields", "pods", "expected"), _PARSED, ids=[row[0] for row in _PARSED])
def test_upstream_table_with_default_gates(row_id: str, fields: dict[str, str], pods: list[str], expected: str) -> None:
    cs, pod_objs = _build(fields, pods)
    current = "new" if "RC" in fields else "old"
    result = calculate_diffs(
        cs, pod_objs, current, "new", now=NOW, gates=CloneSetFeatureGates(), for_scale="PUA" in fields
    )
    assert asdict(result) == asdict(_expected(DEFAULT_GATE_ROWS.get(row_id, expected))), row_id


def test_the_global_exclude_flag_acts_like_the_label() -> None:
    _, fields, pods, expected = _parse_row("D61 | R=3 P=0 MU=1 MS=0 | 2xN.Nm.R 1xN.PD.R.D | up=1 upLim=1")
    cs, pod_objs = _build(fields, pods)
    gates = CloneSetFeatureGates(scaling_exclude_preparing_delete=True)
    assert calculate_diffs(cs, pod_objs, "old", "new", now=NOW, gates=gates, for_scale=True) == _expected(expected)
    assert calculate_diffs(cs, pod_objs, "old", "new", now=NOW, gates=CloneSetFeatureGates(), for_scale=True) == (
        ExpectationDiffs()
    )


def test_pods_named_in_pods_to_delete_count_as_specified() -> None:
    cs, pods = _build({"R": "5", "P": "0", "MU": "1", "MS": "0"}, ["5xN.Nm.R"])
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["pod-0"]
    result = calculate_diffs(cs, pods, "new", "new", now=NOW, gates=CloneSetFeatureGates(), for_scale=True)
    assert result == ExpectationDiffs(delete_ready_limit=1)


def test_full_revision_names_match_by_short_hash() -> None:
    cs, _ = _build({"R": "1", "P": "0", "MU": "1", "MS": "0"}, [])
    pod = make_pod("p", "abc")
    result = calculate_diffs(cs, [pod], "cs-old", "cs-abc", now=NOW, gates=CloneSetFeatureGates(), for_scale=False)
    assert result == ExpectationDiffs()


def test_the_input_is_not_mutated() -> None:
    cs, pods = _build({"R": "5", "P": "3", "MU": "1", "MS": "1"}, ["4xO.Nm.R", "1xO.Nm.R.D", "1xN.Nm.u"])
    before = repr((cs, pods))
    calculate_diffs(cs, pods, "old", "new", now=NOW, gates=CloneSetFeatureGates(), for_scale=True)
    assert repr((cs, pods)) == before


@pytest.mark.parametrize(
    ("partition", "replicas", "expected"),
    [
        (None, 5, 0),
        (3, 5, 3),
        (7, 5, 5),
        (-1, 5, 0),
        ("99%", 4, 3),
        ("99%", 5, 4),
        ("90%", 4, 3),
        ("10%", 6, 1),
        ("50%", 2, 1),
        ("100%", 4, 4),
        ("0%", 4, 0),
        ("12.5%", 8, 1),
        ("99%", 1, 1),
        ("1%", 0, 0),
    ],
)
def test_partition_replicas(partition: int | str | None, replicas: int, expected: int) -> None:
    assert partition_replicas(partition, replicas) == expected


@pytest.mark.parametrize("partition", ["5", "abc%", "%", "1.2.3%"])
def test_partition_replicas_rejects_non_percent_strings(partition: str) -> None:
    with pytest.raises(PartitionError):
        partition_replicas(partition, 5)


def test_expected_updated_replicas() -> None:
    assert expected_updated_replicas(make_cloneset(10, partition="90%")) == 1
    assert expected_updated_replicas(make_cloneset(4, partition=1)) == 3
    assert expected_updated_replicas(make_cloneset(4, partition="x")) is None


@pytest.mark.parametrize(("max_unavailable", "expected_limit"), [("40%", 2), ("40", 2), (2, 2), ("12.5%", 0), ("x", 0)])
def test_update_budget_reads_any_string_as_a_percentage(max_unavailable: int | str, expected_limit: int) -> None:
    """Upstream's controller treats "40" like "40%" and an unparsable value as 0."""
    cs = make_cloneset(5, max_unavailable=max_unavailable)
    pods = [make_pod(f"p{i}", "old") for i in range(5)]
    result = calculate_diffs(cs, pods, "old", "new", now=NOW, gates=CloneSetFeatureGates(), for_scale=False)
    assert result.update_max_unavailable == expected_limit
