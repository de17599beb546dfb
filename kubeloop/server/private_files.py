"""The server's data directory is private to its owner: the directory 0700, its files 0600.

The store's SQLite files (``storage.sqlite3`` and the ``-wal`` / ``-shm`` files beside it) hold
every Secret in clear, so no other local user may read them. SQLite creates the ``-wal`` and
``-shm`` files with the permissions of the database file (``unixOpen`` copies its mode), so it
is enough to create the database file 0600 before SQLite opens it. Directories and files left
by an older version with wider modes are narrowed when the server next opens them.

kube-apiserver has no data directory of its own (etcd keeps its data dir 0700, and refuses to
start on a wider one); this follows etcd's mode and narrows instead of refusing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """Create ``path`` (and its parents) if needed, and make it 0700."""
    path.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) != DIRECTORY_MODE:
        os.chmod(path, DIRECTORY_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty if it does not exist, and make it 0600 (contents untouched)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def narrow_existing(path: Path) -> None:
    """Make ``path`` 0600 if it exists (SQLite's side files from an older run)."""
    try:
        if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
            os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        return
