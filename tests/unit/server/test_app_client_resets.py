"""A client that resets its connection mid-answer is routine: no ERROR log, no traceback, no
attempt to answer a 500 on the dead connection (issue #18 item 8)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from kubeloop.server import app as server_app


class _Admin:
    def authenticate(self, header: str | None, certificate: object) -> Any:
        return SimpleNamespace(privileged=True, username="admin")


async def _middleware_with(handler_error: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    application = web.Application()
    application[server_app._STATE_KEY] = SimpleNamespace(authenticator=_Admin(), authorizer=None)  # type: ignore[misc]
    request = make_mocked_request("GET", "/api/v1/pods?watch=1", app=application)

    async def handler(_request: web.Request) -> web.StreamResponse:
        raise handler_error

    with caplog.at_level(logging.DEBUG, logger=server_app.__name__):
        await server_app._api_middleware(request, handler)


@pytest.mark.parametrize("error", [ConnectionResetError("Connection lost"), BrokenPipeError(),
                                   ConnectionAbortedError()])
async def test_a_reset_is_not_an_error(error: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(type(error)):
        await _middleware_with(error, caplog)
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


async def test_a_real_failure_is_still_an_error_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    await _middleware_with(KeyError("bug"), caplog)
    assert [(r.levelno, r.exc_info is not None) for r in caplog.records] == [(logging.ERROR, True)]
