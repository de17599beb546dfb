"""The manager-wide worker default (controller-runtime's ``config.Controller.MaxConcurrentReconciles``)."""

import pytest

from kubeloop.client import CONFIG_MAPS, ApiClient, ClientConfig
from kubeloop.client._transport import MockResponse, MockTransport, Request
from kubeloop.runtime.manager import Manager, ManagerOptions


def _offline_manager(options: ManagerOptions | None = None) -> Manager:
    """A manager that is built on but never started (any request fails the test)."""
    def refuse(request: Request) -> MockResponse:
        raise AssertionError(f"unexpected request {request.method} {request.path}")

    client = ApiClient(ClientConfig("https://k8s.example:6443", qps=0), transport=MockTransport(refuse))
    return Manager(client, options)


async def _noop(_: object) -> None:
    return None


async def test_controllers_take_one_worker_by_default_as_upstream() -> None:
    controller = await _offline_manager().controller("plain").for_(CONFIG_MAPS).complete(_noop)
    assert controller.max_concurrent_reconciles == 1


async def test_the_manager_option_sets_every_controller_and_with_options_overrides_it() -> None:
    mgr = _offline_manager(ManagerOptions(max_concurrent_reconciles=8))
    inherited = await mgr.controller("inherited").for_(CONFIG_MAPS).complete(_noop)
    own = await mgr.controller("own").for_(CONFIG_MAPS).with_options(max_concurrent_reconciles=2).complete(_noop)
    assert (inherited.max_concurrent_reconciles, own.max_concurrent_reconciles) == (8, 2)


def test_a_manager_refuses_fewer_than_one_worker() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        _offline_manager(ManagerOptions(max_concurrent_reconciles=0))
