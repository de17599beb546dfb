"""The pure range allocators: cluster IPs from the service CIDR, node ports from their range."""

from __future__ import annotations

import random

import pytest

from kubeloop.server.services.ipallocator import AllocationError, IPRange
from kubeloop.server.services.portallocator import PortRange


def test_default_range_is_the_kubeadm_service_cidr_without_network_and_broadcast() -> None:
    ip_range = IPRange()
    assert ip_range.cidr == "10.96.0.0/12"
    assert ip_range.nth(0) == "10.96.0.1"
    assert ip_range.size == 2 ** 20 - 2
    assert ip_range.contains("10.111.255.254")
    assert not ip_range.contains("10.111.255.255")
    assert not ip_range.contains("10.96.0.0")
    assert not ip_range.contains("10.112.0.1")
    assert not ip_range.contains("not-an-ip")


@pytest.mark.parametrize(("ip", "in_use", "message"), [
    ("1.1.1.1", set(), "the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"),
    ("10.96.0.10", {"10.96.0.10"}, "provided IP is already allocated"),
])
def test_requested_ips_are_refused_with_upstream_texts(ip: str, in_use: set[str], message: str) -> None:
    with pytest.raises(AllocationError) as raised:
        IPRange().check(ip, in_use)
    assert str(raised.value) == message


def test_a_free_requested_ip_is_accepted() -> None:
    IPRange().check("10.96.0.10", {"10.96.0.11"})


def test_dynamic_allocation_prefers_the_upper_band_and_never_repeats_an_address_in_use() -> None:
    small = IPRange("10.0.0.0/27")  # 30 addresses; static band min(max(16, 30 // 16), 256) = 16
    rng = random.Random(7)
    used: set[str] = set()
    for _ in range(14):
        used.add(small.allocate_next(used, rng))
    # The 14 upper-band addresses (offsets 16..29) went first.
    assert used == {small.nth(i) for i in range(16, 30)}
    for _ in range(16):
        used.add(small.allocate_next(used, rng))
    assert len(used) == 30
    with pytest.raises(AllocationError, match="range is full"):
        small.allocate_next(used, rng)


def test_node_ports_default_range_and_texts() -> None:
    ports = PortRange()
    assert ports.text == "30000-32767"
    with pytest.raises(AllocationError) as raised:
        ports.check(8080, set())
    assert str(raised.value) == "provided port is not in the valid range. The range of valid ports is 30000-32767"
    with pytest.raises(AllocationError) as raised:
        ports.check(30080, {30080})
    assert str(raised.value) == "provided port is already allocated"
    ports.check(30080, {30081})


def test_node_port_allocation_fills_the_range_upper_band_first() -> None:
    ports = PortRange(30000, 40)  # static band 16
    rng = random.Random(3)
    used: set[int] = set()
    for _ in range(24):
        used.add(ports.allocate_next(used, rng))
    assert used == set(range(30016, 30040))
    for _ in range(16):
        used.add(ports.allocate_next(used, rng))
    assert used == set(range(30000, 30040))
    with pytest.raises(AllocationError, match="range is full"):
        ports.allocate_next(used, rng)
