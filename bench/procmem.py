"""Resident memory of a process, as Linux accounts it: now (``VmRSS``) and at its peak (``VmHWM``).

    from procmem import memory_of
    memory_of(pid)  # {"rss": bytes now, "peak": bytes at the high-water mark}

Read from ``/proc/PID/status`` (proc(5)); the high-water mark is the peak over the process's
life, so a benchmark that wants the peak of one run starts the run in a fresh process. Used by
``bench/rollout.py`` (the server's and its child processes' memory at the end of each phase).
"""

from __future__ import annotations

from pathlib import Path

_FIELDS = {"VmRSS:": "rss", "VmHWM:": "peak"}


def parse_status(text: str) -> dict[str, int]:
    """``rss`` and ``peak`` in bytes from the text of a ``/proc/PID/status`` (kB lines)."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in _FIELDS:
            found[_FIELDS[parts[0]]] = int(parts[1]) * 1024
    return found


def memory_of(pid: int | str = "self") -> dict[str, int]:
    """The process's ``rss`` and ``peak`` in bytes; empty if it is gone."""
    try:
        return parse_status(Path(f"/proc/{pid}/status").read_text())
    except (FileNotFoundError, ProcessLookupError):
        return {}
