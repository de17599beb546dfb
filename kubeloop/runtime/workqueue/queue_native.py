"""Which implementation of the work queue's hot path a new `WorkQueue` uses: C or Python.

`kubeloop.runtime.workqueue._wqcore` (``_wqcore.c``) implements `add`, `get` with an item ready
and `done` in C over the queue's own deque and dicts; everything else (waiting, waking,
shutdown, metrics set-up, the delaying and rate-limiting layers) stays in Python, shared by
both. The extension is optional at install (``optional = true`` in pyproject's
``ext-modules``); without it the interpreted methods of `WorkQueue` serve.

The choice is read from ``KUBELOOP_WORKQUEUE`` each time a queue is built (queues are built
rarely; tests switch it per test):

- ``auto`` (the default): the C core when the extension imports and its `ABI` matches;
- ``native``: the C core; its absence is an error when a queue is built;
- ``python``: the interpreted methods.

Why C: docs/decisions.md ("Work queue: the hot path in C").
"""

from __future__ import annotations

import os
from types import ModuleType

ENV_VAR = "KUBELOOP_WORKQUEUE"
MODES = ("auto", "native", "python")
ABI = 2
"""The `Core` constructor and `sync` signature this package calls; the extension's `ABI` must equal it."""


def _load() -> ModuleType | None:
    try:
        from kubeloop.runtime.workqueue import _wqcore
    except ImportError:
        return None
    return _wqcore if getattr(_wqcore, "ABI", None) == ABI else None


EXTENSION = _load()
"""The extension module, None when not built (or of another ABI)."""


def available() -> bool:
    """Whether the C core is built and of this package's ABI."""
    return EXTENSION is not None


def mode() -> str:
    """The implementation the environment asks for (see the module doc)."""
    chosen = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if chosen not in MODES:
        raise ValueError(f"{ENV_VAR}={chosen!r}: expected one of {', '.join(MODES)}")
    return chosen


def resolve(chosen: str, built: bool) -> bool:
    """Whether the C core serves under the mode `chosen` when it is `built` or not."""
    if chosen == "native" and not built:
        raise RuntimeError(
            f"{ENV_VAR}=native but kubeloop.runtime.workqueue._wqcore is not built "
            "(or is of another ABI): reinstall kubeloop with a C compiler"
        )
    return chosen != "python" and built


def enabled() -> bool:
    """Whether a queue built now gets the C core."""
    return resolve(mode(), available())
