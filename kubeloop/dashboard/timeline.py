"""Pods per revision over time, per workload: the data of the timeline chart.

A sample is taken whenever the views are rebuilt, and kept only if the counts differ from the
previous sample of that workload, so a quiet workload costs nothing and a rollout leaves one
point per change. Each workload keeps at most ``max_samples``; past that the older half is
thinned to every other sample, so the start of a long rollout stays visible at a coarser grain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_MAX_SAMPLES = 400


class Timeline:
    """Samples ``(t, {revision id: pod count})`` per workload key; ``t`` is seconds since the epoch."""

    def __init__(self, max_samples: int = DEFAULT_MAX_SAMPLES) -> None:
        if max_samples < 4:
            raise ValueError("max_samples must be at least 4")
        self.max_samples = max_samples
        self._samples: dict[str, list[tuple[float, dict[str, int]]]] = {}

    def record(self, key: str, t: float, counts: Mapping[str, int]) -> bool:
        """Add a sample if the counts changed; True if one was added."""
        samples = self._samples.setdefault(key, [])
        current = {revision: n for revision, n in counts.items() if n}
        if samples and samples[-1][1] == current:
            return False
        samples.append((t, current))
        if len(samples) > self.max_samples:
            half = len(samples) // 2
            samples[:half] = samples[:half:2]
        return True

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the samples of every workload not in ``keep`` (deleted workloads)."""
        wanted = set(keep)
        for key in [k for k in self._samples if k not in wanted]:
            del self._samples[key]

    def samples(self, key: str) -> list[dict[str, Any]]:
        """The workload's samples as JSON: ``[{"t": seconds, "counts": {revision: n}}]``, oldest first."""
        return [{"t": t, "counts": dict(counts)} for t, counts in self._samples.get(key, ())]
