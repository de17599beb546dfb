"""Cluster IP allocation from the service CIDR, as upstream's ``pkg/registry/core/service/ipallocator``.

Pure: a :class:`IPRange` answers, for the set of addresses in use, whether a requested address
may be taken (:meth:`IPRange.check`) and which free address to hand out next
(:meth:`IPRange.allocate_next`). The network and broadcast addresses are never handed out.
Dynamic allocation draws at random from the upper band of the range first and falls back to
the lower band, which upstream keeps for static (requested) addresses (``ServiceIPStaticSubrange``:
the lower band is ``min(max(16, size / 16), 256)`` addresses).

Error texts are upstream's ``ErrAllocated``, ``ErrNotInRange`` and ``ErrFull``.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Collection
from dataclasses import dataclass

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
"""kubeadm's (and kind's) default ``--service-cluster-ip-range``."""

ERR_ALLOCATED = "provided IP is already allocated"
ERR_FULL = "range is full"


class AllocationError(Exception):
    """A requested address cannot be had, or the range is full; ``str`` is upstream's text."""


def not_in_range_text(ip: str, cidr: str) -> str:
    return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}"


@dataclass(frozen=True)
class IPRange:
    """The allocatable addresses of one CIDR."""

    cidr: str = DEFAULT_SERVICE_CIDR

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(self.cidr, strict=False)

    @property
    def first(self) -> int:
        """The first allocatable address (the one after the network address), as an integer."""
        return int(self.network.network_address) + 1

    @property
    def size(self) -> int:
        """How many addresses may be allocated (all but the network and broadcast addresses)."""
        return max(self.network.num_addresses - 2, 0)

    @property
    def static_band(self) -> int:
        """Addresses at the start of the range that dynamic allocation uses only as a last resort."""
        return min(max(16, self.size // 16), 256)

    def nth(self, offset: int) -> str:
        """The address ``offset`` places after the network address plus one (``nth(0)`` is .1)."""
        return str(ipaddress.ip_address(self.first + offset))

    def contains(self, ip: str) -> bool:
        try:
            value = int(ipaddress.ip_address(ip))
        except ValueError:
            return False
        return self.first <= value < self.first + self.size

    def check(self, ip: str, in_use: Collection[str]) -> None:
        """Raise :class:`AllocationError` unless ``ip`` may be allocated now."""
        if not self.contains(ip):
            raise AllocationError(not_in_range_text(ip, self.cidr))
        if ip in in_use:
            raise AllocationError(ERR_ALLOCATED)

    def allocate_next(self, in_use: Collection[str], rng: random.Random | None = None) -> str:
        """A free address, drawn at random (upper band first); :class:`AllocationError` when full."""
        draw = rng or _RANDOM
        band = self.static_band if self.size > self.static_band else 0
        for low, high in ((band, self.size), (0, band)):
            picked = _free_in(self, low, high, in_use, draw)
            if picked is not None:
                return picked
        raise AllocationError(ERR_FULL)


_RANDOM = random.SystemRandom()


def _free_in(ip_range: IPRange, low: int, high: int, in_use: Collection[str], draw: random.Random) -> str | None:
    """A free address among offsets ``[low, high)``: a random start, then a scan forward (wrapping)."""
    count = high - low
    if count <= 0:
        return None
    start = draw.randrange(count)
    for step in range(count):
        candidate = ip_range.nth(low + (start + step) % count)
        if candidate not in in_use:
            return candidate
    return None
