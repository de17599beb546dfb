"""One paragraph, not a traceback, when a server cannot start: what went wrong and the fix.

``kubeloop server`` and ``kubeloop up`` start the same server; both turn its start-up failures
into a :class:`click.ClickException` through :func:`start_failure`:

* the data directory cannot be created or written (``--data-dir /proc/foo``): the directory
  and the system's reason, not the port;
* the data directory is in use by another kubeloop: stop it, or choose another directory;
* the database is damaged (not a database, malformed) or empty while it should not be: move it
  away to start with an empty cluster (the credentials in the directory stay valid), or
  restore a copy;
* the address cannot be bound: the host, the port and the system's reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from kubeloop.server.storage import StorageError


def start_failure(error: BaseException, data_dir: Path, host: str, port: int) -> click.ClickException | None:
    """The message for ``error`` raised while starting a server on ``data_dir``, ``host:port``;
    None for errors this module does not know (they propagate as they are)."""
    if isinstance(error, StorageError):
        text = str(error)
        if "in use by another process" in text:
            return click.ClickException(f"{text}. Stop the kubeloop that uses it, or pass another --data-dir.")
        return click.ClickException(
            f"{text}. The cluster's objects cannot be read from it: move the database file away to start "
            f"with an empty cluster (the credentials in {data_dir} stay valid), or restore it from a copy.")
    if isinstance(error, OSError):
        reason = (os.strerror(error.errno) if error.errno else str(error)).lower()
        if error.filename is not None:
            return click.ClickException(f"cannot use the data directory {data_dir}: {error.filename}: {reason}. "
                                        "Pass a --data-dir you can write to.")
        return click.ClickException(f"cannot serve on {host}:{port}: {reason}")
    return None
