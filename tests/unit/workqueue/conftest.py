"""Every work-queue test that builds a queue runs on both implementations of its hot path.

`native` is the C core (`kubeloop/runtime/workqueue/_wqcore.c`), `python` the interpreted
methods; the choice is the ``KUBELOOP_WORKQUEUE`` variable a queue reads when it is built
(`kubeloop.runtime.workqueue.queue_native`). Modules that build no queue (the rate limiters,
the batched histograms) run once, and so does `test_workqueue_native`, which builds both
implementations side by side itself.
"""

from __future__ import annotations

import pytest

from kubeloop.runtime.workqueue import queue_native

_QUEUE_FREE_MODULES = frozenset({"test_workqueue_ratelimiters", "test_workqueue_batch", "test_workqueue_native"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "workqueue_impl" in metafunc.fixturenames and metafunc.module.__name__.rsplit(".", 1)[-1] not in (
        _QUEUE_FREE_MODULES
    ):
        metafunc.parametrize("workqueue_impl", ["native", "python"], indirect=True)


@pytest.fixture(autouse=True)
def workqueue_impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The implementation queues built by this test get (``auto`` outside the parametrized modules)."""
    chosen: str = getattr(request, "param", "auto")
    monkeypatch.setenv(queue_native.ENV_VAR, chosen)
    return chosen
