"""Node port allocation, as upstream's ``pkg/registry/core/service/portallocator``.

Pure, like :mod:`.ipallocator`: :class:`PortRange` checks a requested port against the ports
in use and draws a free one at random, from the upper band first (upstream keeps the lower
``min(max(16, size / 32), 128)`` ports for static requests). Error texts are upstream's.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from kubeloop.server.services.ipallocator import ERR_FULL, AllocationError

DEFAULT_NODE_PORT_RANGE = (30000, 32767)
"""``--service-node-port-range`` default: both ends included."""

ERR_ALLOCATED = "provided port is already allocated"


@dataclass(frozen=True)
class PortRange:
    """The node ports ``base`` .. ``base + size - 1``."""

    base: int = DEFAULT_NODE_PORT_RANGE[0]
    size: int = DEFAULT_NODE_PORT_RANGE[1] - DEFAULT_NODE_PORT_RANGE[0] + 1

    @property
    def text(self) -> str:
        """The range as upstream prints it (``30000-32767``)."""
        return f"{self.base}-{self.base + self.size - 1}"

    @property
    def static_band(self) -> int:
        return min(max(16, self.size // 32), 128)

    def contains(self, port: int) -> bool:
        return self.base <= port < self.base + self.size

    def check(self, port: int, in_use: Collection[int]) -> None:
        if not self.contains(port):
            raise AllocationError(f"provided port is not in the valid range. The range of valid ports is {self.text}")
        if port in in_use:
            raise AllocationError(ERR_ALLOCATED)

    def allocate_next(self, in_use: Collection[int], rng: random.Random | None = None) -> int:
        draw = rng or _RANDOM
        band = self.static_band if self.size > self.static_band else 0
        for low, high in ((band, self.size), (0, band)):
            count = high - low
            if count <= 0:
                continue
            start = draw.randrange(count)
            for step in range(count):
                candidate = self.base + low + (start + step) % count
                if candidate not in in_use:
                    return candidate
        raise AllocationError(ERR_FULL)


_RANDOM = random.SystemRandom()
