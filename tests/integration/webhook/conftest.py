"""Fixtures of the webhook tests: child processes come from the process tests' harness."""

from __future__ import annotations

import sys
from pathlib import Path

# ``process_harness`` (running ``kubeloop`` commands as child processes) lives with the process
# tests of ``kubeloop up``; one copy serves both folders.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "up"))
