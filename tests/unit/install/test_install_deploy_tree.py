"""``deploy/`` is the generator's output, and kustomize builds it into what ``kubeloop manifests``
prints: the base (CloneSet only) and the all-controllers overlay."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from kubeloop.controllers import CONTROLLERS
from kubeloop.install import InstallOptions, install_manifests
from kubeloop.install.render import from_yaml
from kubeloop.install.tree import OVERLAYS, deploy_tree

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
"""kubectl with kustomize v5, as ``kubectl apply -k`` runs it."""


def test_the_committed_files_are_the_generators_output() -> None:
    tree = deploy_tree()
    committed = {path.relative_to(DEPLOY).as_posix(): path.read_text() for path in DEPLOY.rglob("*") if path.is_file()}
    assert sorted(committed) == sorted(tree), "run scripts/gen_deploy.py"
    for name, text in tree.items():
        assert committed[name] == text, f"deploy/{name} is stale: run scripts/gen_deploy.py"


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


@pytest.mark.parametrize(("directory", "controllers"), [
    ("base", ("cloneset",)),
    *((f"overlays/{name}", selection) for name, selection in OVERLAYS.items()),
])
def test_kustomize_builds_what_kubeloop_manifests_prints(directory: str, controllers: tuple[str, ...]) -> None:
    built = subprocess.run([KUBECTL, "kustomize", str(DEPLOY / directory)], capture_output=True, text=True,
                           check=True, timeout=60).stdout
    expected = install_manifests(InstallOptions(controllers=controllers))
    assert {key(obj): obj for obj in from_yaml(built)} == {key(obj): obj for obj in expected}


def test_the_overlay_selects_every_controller() -> None:
    assert OVERLAYS["all-controllers"] == tuple(CONTROLLERS)
