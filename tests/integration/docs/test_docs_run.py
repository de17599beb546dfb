"""Every Python block of the README and docs/ runs as written, as a user would run it.

A Python block is a file: the line before its fence says ``<!-- file: NAME -->``. The blocks
are written into a fresh directory, outside the repository (so nothing but the installed
kubeloop is importable), and pytest runs there; every test function of the blocks must pass.
Shell blocks are not run here: the quick start's two commands are what CI runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_DIRECTIVE = re.compile(r"<!-- file: ([\w.]+) -->")
_TEST = re.compile(r"^(?:async )?def (test_\w+)", re.MULTILINE)


def python_blocks() -> dict[str, tuple[Path, str]]:
    """File name -> (page, code) of every Python block; AssertionError for a block without a name."""
    blocks: dict[str, tuple[Path, str]] = {}
    for page in PAGES:
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines):
            if line.strip() not in ("```python", "```py"):
                continue
            before = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()), "")
            named = _DIRECTIVE.fullmatch(before.strip())
            assert named, f"{page.name}:{number + 1}: a Python block without a <!-- file: NAME --> line"
            end = next(i for i in range(number + 1, len(lines)) if lines[i].strip() == "```")
            assert named.group(1) not in blocks, f"{named.group(1)} is defined twice"
            blocks[named.group(1)] = (page, "\n".join(lines[number + 1:end]) + "\n")
    return blocks


def test_every_python_block_runs_in_a_fresh_directory(tmp_path: Path) -> None:
    blocks = python_blocks()
    tests = []
    for name, (_, code) in blocks.items():
        (tmp_path / name).write_text(code)
        tests += _TEST.findall(code)
    assert len(tests) >= 5, f"expected the docs' tests, found {tests}"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "KUBECONFIG")}
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-W", "ignore::DeprecationWarning", "."],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert f"{len(tests)} passed" in done.stdout, done.stdout[-3000:]
