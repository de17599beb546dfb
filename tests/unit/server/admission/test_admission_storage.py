"""StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities and VolumeAttachments."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create, stored, update

STORAGE = "storage.k8s.io"


def test_storage_class_defaults() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "fast"}, "provisioner": "ebs.csi.aws.com"}
    assert create(STORAGE, "StorageClass", obj) == []
    assert (obj["reclaimPolicy"], obj["volumeBindingMode"]) == ("Delete", "Immediate")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"provisioner": ""}, ["provisioner: Required value"]),
        ({"provisioner": "x", "reclaimPolicy": "Recycle"},
         ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"']),
        ({"provisioner": "x", "volumeBindingMode": "Later"},
         ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']),
        ({"provisioner": "x", "parameters": {"": "v"}}, ['parameters: Invalid value: "": field can not be empty.']),
    ],
)
def test_storage_class_validation(extra: dict[str, Any], expected: list[str]) -> None:
    assert create(STORAGE, "StorageClass", {"metadata": {"name": "sc"}, **extra}) == expected


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("parameters", {"type": "io2"}, "parameters: Forbidden: updates to parameters are forbidden."),
        ("provisioner", "other.example.com", "provisioner: Forbidden: updates to provisioner are forbidden."),
        ("reclaimPolicy", "Retain", "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden."),
        ("volumeBindingMode", "WaitForFirstConsumer",
         'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable'),
    ],
)
def test_storage_class_fields_are_immutable(field: str, value: Any, expected: str) -> None:
    old = stored(STORAGE, "StorageClass", {"metadata": {"name": "sc"}, "provisioner": "x", "parameters": {"a": "b"}})
    assert update(STORAGE, "StorageClass", old, lambda new: new.__setitem__(field, value)) == [expected]
    assert update(STORAGE, "StorageClass", old, lambda new: new.__setitem__("allowVolumeExpansion", True)) == []


def test_csi_driver_defaults_and_immutable_attach_required() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "ebs.csi.aws.com"}}
    old = stored(STORAGE, "CSIDriver", obj)
    assert old["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                           "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                           "seLinuxMount": False, "volumeLifecycleModes": ["Persistent"]}
    assert update(STORAGE, "CSIDriver", old, lambda new: new["spec"].update(attachRequired=False)) == [
        "spec.attachedRequired: Invalid value: false: field is immutable"]
    assert update(STORAGE, "CSIDriver", old, lambda new: new["spec"].update(podInfoOnMount=True)) == []
    assert create(STORAGE, "CSIDriver", {"metadata": {"name": "d"}, "spec": {"fsGroupPolicy": "Some"}}) == [
        'spec.fsGroupPolicy: Unsupported value: "Some": supported values: "File", "None", "ReadWriteOnceWithFSType"']


def test_csi_node_drivers() -> None:
    drivers = [{"name": "d.example.com", "nodeID": "n1"}, {"name": "d.example.com", "nodeID": ""}]
    assert create(STORAGE, "CSINode", {"metadata": {"name": "node-1"}, "spec": {"drivers": drivers}}) == [
        "spec.drivers[1].nodeID: Required value", 'spec.drivers[1].name: Duplicate value: "d.example.com"']
    old = stored(STORAGE, "CSINode", {"metadata": {"name": "node-1"}, "spec": {"drivers": drivers[:1]}})
    errors = update(STORAGE, "CSINode", old, lambda new: new["spec"]["drivers"][0].update(nodeID="n2"))
    assert len(errors) == 1 and errors[0].startswith("spec.drivers: Invalid value:") and "immutable" in errors[0]
    assert update(STORAGE, "CSINode", old,
                  lambda new: new["spec"]["drivers"][0].update(allocatable={"count": 3})) == []


def test_csi_storage_capacity() -> None:
    obj = {"metadata": {"name": "c", "namespace": "default"}, "storageClassName": "fast", "capacity": "-1Gi"}
    assert create(STORAGE, "CSIStorageCapacity", obj, namespaced=True) == [
        'capacity: Invalid value: "-1Gi": must be greater than or equal to 0']
    old = stored(STORAGE, "CSIStorageCapacity", {"metadata": {"name": "c", "namespace": "default"},
                                                "storageClassName": "fast"}, namespaced=True)
    assert update(STORAGE, "CSIStorageCapacity", old, lambda new: new.update(storageClassName="slow"),
                  namespaced=True) == ['storageClassName: Invalid value: "slow": field is immutable']


def test_volume_attachment() -> None:
    assert create(STORAGE, "VolumeAttachment", {"metadata": {"name": "va"}, "spec": {"nodeName": "n"}}) == [
        "spec.attacher: Required value",
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"]
    old = stored(STORAGE, "VolumeAttachment", {"metadata": {"name": "va"}, "spec": {
        "attacher": "csi.example.com", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}})
    errors = update(STORAGE, "VolumeAttachment", old, lambda new: new["spec"].update(nodeName="m"))
    assert len(errors) == 1
    assert errors[0].startswith("spec: Invalid value:") and errors[0].endswith("field is immutable")
    assert update(STORAGE, "VolumeAttachment", old, lambda new: new.update(status={"attached": True}),
                  status=True) == []
