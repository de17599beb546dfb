"""Fetching and staging the official Python client's own test modules, from its pinned sdist.

The ``kubernetes`` sdist on the package registry ships the dynamic client's live-cluster tests
(``kubernetes/dynamic/test_client.py`` and ``test_discovery.py``) but not the module they
import their configuration from, ``kubernetes.e2e_test.base`` (that lives only in the git
repository). :func:`stage` downloads the sdist with pip into a cache inside the project, copies
its whole ``kubernetes`` package into a staging directory (the tests use relative imports, so
they must run inside it) and adds our own ``kubernetes/e2e_test/base.py``: a
``get_e2e_configuration()`` that loads the kubeconfig named by ``$KUBECONFIG``, as upstream's
does (it falls back to ``~/.kube/config`` and then to local ports; we always pass the variable).

The test modules themselves are run unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "pyclient"


def pinned_version() -> str:
    """The ``kubernetes`` version pinned in pyproject's test extra (the one installed)."""
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        stripped = line.strip().strip(",").strip('"')
        if stripped.startswith("kubernetes=="):
            return stripped.split("==", 1)[1]
    raise LookupError("kubernetes is not pinned in pyproject.toml")


def download_sdist(version: str) -> Path:
    """The sdist's path, downloaded with pip on first use (kept in .cache/pyclient)."""
    target = CACHE / f"kubernetes-{version}.tar.gz"
    if not target.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "--disable-pip-version-check", "--quiet", f"kubernetes=={version}", "-d", str(CACHE)],
                       check=True, timeout=300)
    return target


E2E_BASE = '''"""Stand-in for the repository-only ``kubernetes.e2e_test.base`` (written by kubeloop)."""

import os

from kubernetes.client.configuration import Configuration
from kubernetes.config import kube_config


def get_e2e_configuration():
    config = Configuration()
    kube_config.load_kube_config(config_file=os.environ["KUBECONFIG"], client_configuration=config)
    config.assert_hostname = False
    return config
'''


def stage(version: str) -> Path:
    """A directory holding the sdist's ``kubernetes`` package plus the configuration stand-in."""
    staged = CACHE / f"staged-{version}"
    marker = staged / ".complete"
    if marker.exists():
        return staged
    if staged.exists():
        shutil.rmtree(staged)
    prefix = f"kubernetes-{version}/"
    with tarfile.open(download_sdist(version)) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix + "kubernetes/")]
        for member in members:
            member.name = member.name[len(prefix):]
        archive.extractall(staged, members=members, filter="data")
    e2e = staged / "kubernetes" / "e2e_test"
    e2e.mkdir(exist_ok=True)
    (e2e / "__init__.py").write_text("")
    (e2e / "base.py").write_text(E2E_BASE)
    # An ini file of its own, so pytest does not pick up this project's settings from above.
    (staged / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    marker.write_text(version)
    return staged


def suite_env(kubeconfig: Path, scratch: Path) -> dict[str, str]:
    """The environment for the upstream run: our kubeconfig, a private HOME and temp dir
    (the dynamic client keeps its discovery cache in the temp dir)."""
    home = scratch / "home"
    tmp = scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(tmp),
            "KUBECONFIG": str(kubeconfig), "PYTHONDONTWRITEBYTECODE": "1"}
