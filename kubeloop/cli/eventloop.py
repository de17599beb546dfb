"""The commands' way into their event loop: :func:`kubeloop.runtime.eventloop.run`, with a bad
``$KUBELOOP_EVENT_LOOP`` reported as a usage error (exit 1, one line) instead of a traceback."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import click

from kubeloop.runtime import eventloop

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    try:
        return eventloop.run(main)
    except eventloop.EventLoopSettingError as error:
        raise click.ClickException(str(error)) from None
