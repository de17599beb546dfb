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

from kubeloop.native import MODES, NativeChoice

ENV_VAR = "KUBELOOP_WORKQUEUE"
ABI = 2
"""The `Core` constructor and `sync` signature this package calls; the extension's `ABI` must equal it."""

CHOICE = NativeChoice("kubeloop.runtime.workqueue._wqcore", ABI, ENV_VAR)
"""Read at each queue's construction (`enabled`): queues are built rarely, and tests switch it."""

EXTENSION = CHOICE.extension
"""The extension module, None when not built (or of another ABI)."""

available = CHOICE.available
mode = CHOICE.mode
resolve = CHOICE.resolve
enabled = CHOICE.enabled

__all__ = ["ABI", "CHOICE", "ENV_VAR", "EXTENSION", "MODES", "available", "enabled", "mode", "resolve"]
