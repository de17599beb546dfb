"""The contestants: which interpreter and script each runs, and the peers' own environments.

Every peer gets its own virtual environment, created once and cached under ``.venv-peers/``
in the repository (CI can keep that directory between runs). A venv is rebuilt only when its
pinned requirement list changes (recorded in ``requirements.txt`` inside it). kopf's venv
holds kopf alone: with the ``kubernetes`` packages importable kopf imports them for its
login piggybacking, which costs it ~50 MiB of RSS that has nothing to do with its runtime.

kubeloop itself runs from the project's own environment (the interpreter running the harness).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTESTANTS_DIR = Path(__file__).resolve().parent / "contestants"
DEFAULT_VENV_ROOT = ROOT / ".venv-peers"

PEER_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "kopf": ("kopf==1.45.2",),
    "kopf-uvloop": ("kopf==1.45.2", "uvloop==0.23.0"),
    "official": ("kubernetes==37.0.2",),
    "lightkube": ("lightkube==1.0.1",),
    "kr8s": ("kr8s==0.20.15",),
    "aiok8s": ("aiok8s==0.0.2", "kubernetes_asyncio==36.1.0"),
    "plots": ("matplotlib==3.11.2",),
}
"""Pinned versions (the newest on PyPI when this harness was written); ``plots`` only draws."""


@dataclass(frozen=True)
class Contestant:
    """One column of the result tables."""

    name: str
    venv: str | None
    """Key into PEER_REQUIREMENTS; None runs in kubeloop's own environment."""
    script: str
    variant: str = ""
    description: str = ""
    workers: int = 0
    """Concurrent reconciles when the scenario does not set them (0: the runtime's default)."""
    loop: str = ""
    """Event loop the contestant runs on: "uvloop", or "" for its default (asyncio's)."""


CONTESTANTS: dict[str, Contestant] = {c.name: c for c in (
    Contestant("kubeloop", None, "kubeloop_runtime.py",
               description="kubeloop Manager + workqueue controller (informer cache, default workers 1)"),
    Contestant("kubeloop-w8", None, "kubeloop_runtime.py",
               description="the same with max_concurrent_reconciles=8", workers=8),
    Contestant("kubeloop-w8-uvloop", None, "kubeloop_runtime.py",
               description="kubeloop-w8 on uvloop's event loop", workers=8, loop="uvloop"),
    Contestant("kopf-event", "kopf", "kopf_operator.py", "event", "kopf @on.event (K-event)"),
    Contestant("kopf-event-uvloop", "kopf-uvloop", "kopf_operator.py", "event",
               "kopf-event on uvloop, as `kopf run` picks it when importable", loop="uvloop"),
    Contestant("kopf-create", "kopf", "kopf_operator.py", "create", "kopf @on.create/resume/update (K-create)"),
    Contestant("official", "official", "official_informer.py",
               description="kubernetes SharedInformer (thread) + queue + thread workers"),
    Contestant("aiok8s", "aiok8s", "aiok8s_informer.py",
               description="aiok8s SharedIndexInformer / controller over kubernetes_asyncio"),
    Contestant("lightkube", "lightkube", "lightkube_watch.py",
               description="lightkube AsyncClient list + watch into a dict"),
    Contestant("kr8s", "kr8s", "kr8s_watch.py", description="kr8s raw list + async_watch into a dict"),
)}


def venv_python(venv_root: Path, name: str) -> Path:
    return venv_root / name / "bin" / "python"


def ensure_venv(venv_root: Path, name: str, log: bool = True) -> Path:
    """Create (or reuse) the venv of peer ``name``; returns its interpreter."""
    requirements = "\n".join(PEER_REQUIREMENTS[name]) + "\n"
    path = venv_root / name
    marker = path / "requirements.txt"
    python = venv_python(venv_root, name)
    if python.exists() and marker.exists() and marker.read_text() == requirements:
        return python
    if log:
        print(f"setting up the {name} venv in {path} ...", flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(path)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *PEER_REQUIREMENTS[name]], check=True)
    marker.write_text(requirements)
    return python


def interpreter(contestant: Contestant, venv_root: Path) -> Path:
    if contestant.venv is None:
        return Path(sys.executable)
    return ensure_venv(venv_root, contestant.venv)


def freeze(python: Path) -> list[str]:
    """``pip freeze`` of an environment, recorded with the results."""
    out = subprocess.run([str(python), "-m", "pip", "freeze", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=False)
    return [line for line in out.stdout.splitlines() if line and not line.startswith("-e ")]


def byte_compile_kubeloop(python: Path) -> None:
    """Write the ``.pyc`` files of the kubeloop package the contestants import, as
    ``pip install`` does for every peer's package.

    kubeloop runs from its source tree (an editable install or ``PYTHONPATH``); where
    ``PYTHONDONTWRITEBYTECODE`` is set (this project's sessions set it) no ``.pyc`` is ever
    written there, so every kubeloop process compiled its ~50 modules from source at start
    while kopf's came compiled from its venv: 362 M instructions of kubeloop-w8's 1,968 M
    fixed cost in B1 (callgrind; docs/decisions.md, "B1's CPU"). Only stale files are
    compiled, into the usual ``__pycache__`` directories (ignored by git)."""
    code = ("import compileall, os, kubeloop; "
            "compileall.compile_dir(os.path.dirname(kubeloop.__file__), quiet=1)")
    subprocess.run([str(python), "-c", code], check=False)
