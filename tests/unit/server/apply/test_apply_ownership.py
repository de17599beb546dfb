"""managedFields bookkeeping: updates take fields, applies own their configuration, conflicts."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.apply import (
    APPLY,
    UPDATE,
    ApplyConflicts,
    Manager,
    apply_configuration,
    builtin_shape,
    decode_fields,
    manager_from_user_agent,
    path_text,
    record_update,
    require_field_manager,
)

DEPLOYMENT = builtin_shape("apps", "Deployment")
KUBECTL = Manager("kubectl", APPLY, "apps/v1")
OTHER_APPLIER = Manager("tool", APPLY, "apps/v1")
SCALER = Manager("kubectl", UPDATE, "apps/v1", "scale")
CONTROLLER = Manager("ctrl", UPDATE, "apps/v1")
T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"
Obj = dict[str, Any]


def config(replicas: int = 2, labels: dict[str, str] | None = None, image: str = "nginx") -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": labels if labels is not None else {"tier": "front"}},
            "spec": {"replicas": replicas,
                     "template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}


def owned(obj: Obj) -> dict[tuple[str, str, str], set[str]]:
    """Each manager's fields, as path texts."""
    out: dict[tuple[str, str, str], set[str]] = {}
    for entry in obj["metadata"]["managedFields"]:
        key = (entry["manager"], entry["operation"], entry.get("subresource", ""))
        out[key] = {path_text(p) for p in decode_fields(entry["fieldsV1"])}
    return out


def stored(obj: Obj) -> Obj:
    """What the server stores after create: a name and a resourceVersion."""
    out = copy.deepcopy(obj)
    out["metadata"].update({"namespace": "ns", "resourceVersion": "1"})
    return out


def test_apply_creates_with_one_apply_entry() -> None:
    created = apply_configuration(None, config(), DEPLOYMENT, KUBECTL, T1, force=False)
    assert created["spec"]["replicas"] == 2
    [entry] = created["metadata"]["managedFields"]
    assert {k: v for k, v in entry.items() if k != "fieldsV1"} == {
        "manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": T1, "fieldsType": "FieldsV1"}
    assert entry["fieldsV1"]["f:spec"]["f:replicas"] == {}


def test_reapply_changes_and_removes_what_left_the_configuration() -> None:
    live = stored(apply_configuration(None, config(labels={"tier": "front", "team": "a"}), DEPLOYMENT, KUBECTL, T1,
                                      force=False))
    live["spec"]["paused"] = True  # set by nobody tracked: stays
    after = apply_configuration(live, config(3, {"tier": "front"}, "nginx:2"), DEPLOYMENT, KUBECTL, T2, force=False)
    assert after["metadata"]["labels"] == {"tier": "front"}
    assert after["spec"]["replicas"] == 3 and after["spec"]["paused"] is True
    assert after["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "nginx:2"}]
    assert after["metadata"]["managedFields"][0]["time"] == T2
    assert live["metadata"]["labels"] == {"tier": "front", "team": "a"}, "the live object is never changed"


def test_update_takes_changed_fields_and_apply_conflicts() -> None:
    live = stored(apply_configuration(None, config(), DEPLOYMENT, KUBECTL, T1, force=False))
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    scaled["metadata"]["managedFields"] = record_update(live, scaled, DEPLOYMENT, SCALER, T2)
    assert owned(scaled)[("kubectl", "Update", "scale")] == {".spec.replicas"}
    assert ".spec.replicas" not in owned(scaled)[("kubectl", "Apply", "")]
    with pytest.raises(ApplyConflicts) as caught:
        apply_configuration(scaled, config(2), DEPLOYMENT, KUBECTL, T2, force=False)
    error = caught.value.api_error()
    assert error.code == 409 and error.reason == "Conflict"
    assert error.message == ('Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" '
                             'using apps/v1: .spec.replicas')
    assert error.details == {"causes": [{"reason": "FieldManagerConflict", "field": ".spec.replicas",
                                         "message": 'conflict with "kubectl" with subresource "scale" using apps/v1'}]}
    # The same value is shared, not a conflict; force moves the field to the applier.
    shared = apply_configuration(scaled, config(5), DEPLOYMENT, KUBECTL, T2, force=False)
    assert ".spec.replicas" in owned(shared)[("kubectl", "Apply", "")]
    assert owned(shared)[("kubectl", "Update", "scale")] == {".spec.replicas"}
    forced = apply_configuration(scaled, config(2), DEPLOYMENT, KUBECTL, T2, force=True)
    assert forced["spec"]["replicas"] == 2
    assert list(owned(forced)) == [("kubectl", "Apply", "")]


def test_fields_another_manager_owns_are_not_removed() -> None:
    live = stored(apply_configuration(None, config(labels={"tier": "front", "team": "a"}), DEPLOYMENT, KUBECTL, T1,
                                      force=False))
    both = stored(apply_configuration(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "metadata": {"labels": {"team": "a"}}}, DEPLOYMENT, OTHER_APPLIER, T1,
                                      force=False))
    after = apply_configuration(both, config(labels={"tier": "front"}), DEPLOYMENT, KUBECTL, T2, force=False)
    assert after["metadata"]["labels"] == {"tier": "front", "team": "a"}
    assert owned(after)[("tool", "Apply", "")] == {".metadata.labels.team"}


def test_conflicts_between_appliers_grouped_by_manager() -> None:
    live = stored(apply_configuration(None, config(), DEPLOYMENT, OTHER_APPLIER, T1, force=False))
    with pytest.raises(ApplyConflicts) as caught:
        apply_configuration(live, config(3, {"tier": "back"}), DEPLOYMENT, KUBECTL, T2, force=False)
    assert str(caught.value) == ('Apply failed with 2 conflicts: conflicts with "tool":\n'
                                 '- .metadata.labels.tier\n- .spec.replicas')


def test_update_bookkeeping() -> None:
    old = stored(apply_configuration(None, config(), DEPLOYMENT, KUBECTL, T1, force=False))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"extra": "1"}
    entries = record_update(old, new, DEPLOYMENT, CONTROLLER, T2)
    new["metadata"]["managedFields"] = entries
    assert owned(new)[("ctrl", "Update", "")] == {".metadata.labels.extra"}
    assert ".metadata.labels.tier" not in owned(new)[("kubectl", "Apply", "")]
    assert [e["operation"] for e in entries] == ["Apply", "Update"]
    # A write that changes nothing tracked keeps the entries, time included.
    assert record_update(new, copy.deepcopy(new), DEPLOYMENT, CONTROLLER, "later") == entries
    # Entries sent by the writer replace the old ones (an empty list resets them).
    assert record_update(new, copy.deepcopy(new), DEPLOYMENT, CONTROLLER, "later", base=[]) == []
    # Creation: the creator owns everything it set.
    created = record_update(None, config(), DEPLOYMENT, CONTROLLER, T1)
    assert [(e["manager"], e["operation"]) for e in created] == [("ctrl", "Update")]


def test_field_manager_names() -> None:
    assert manager_from_user_agent("kubectl/v1.20.2 (linux/amd64) kubernetes/faecb19") == "kubectl"
    assert manager_from_user_agent(None) == ""
    assert manager_from_user_agent("x" * 200) == "x" * 128
    assert require_field_manager("kubectl") == "kubectl"
    with pytest.raises(ApiError) as caught:
        require_field_manager("")
    assert caught.value.code == 422
    assert caught.value.message == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                    "is required for apply patch")


def test_identical_reapply_keeps_entries() -> None:
    live = stored(apply_configuration(None, config(), DEPLOYMENT, KUBECTL, T1, force=False))
    again = apply_configuration(live, config(), DEPLOYMENT, KUBECTL, T2, force=False)
    assert again == live
    changed = apply_configuration(live, config(4), DEPLOYMENT, KUBECTL, T2, force=False)
    assert changed["metadata"]["managedFields"][0]["time"] == T2
