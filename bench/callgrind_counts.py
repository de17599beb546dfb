"""Instruction counts of a process running under valgrind's callgrind, driven from outside (not a test).

The process runs under ``valgrind --tool=callgrind --instr-atstart=no
--callgrind-out-file=OUT``; ``callgrind_control`` (Debian's valgrind package) turns its
instrumentation on and off, zeroes its counters and makes it dump them. Dump number ``n`` is
written to ``OUT.n``; :meth:`CallgrindCounts.dump` waits for it and reads its total. The process
may be this one (``os.getpid()``, as ``bench/protobuf_answer.py`` counts steps of its own) or a
child (the server of ``bench/wire_instructions.py``).
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path


class CallgrindCounts:
    """The counters of process ``pid``, whose callgrind output file is ``out``."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid = pid
        self.out = out
        self._dumps = 0

    def _control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.pid)], check=True, capture_output=True)

    def instrument(self, on: bool) -> None:
        self._control("-i", "on" if on else "off")

    def zero(self) -> None:
        self._control("-z")

    def dump(self, name: str, timeout: float = 300.0) -> int:
        """The instructions counted since the last zero or dump, which this dump then zeroes."""
        self._control("-d", name)
        self._dumps += 1
        path = Path(f"{self.out}.{self._dumps}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = path.read_text() if path.exists() else ""
            found = re.search(r"^totals: (\d+)", text, re.M)
            if found and f"dump {name}" in text:
                return int(found[1])
            time.sleep(0.1)
        raise RuntimeError(f"callgrind wrote no dump {name}")
