"""Every acknowledged write survives kill -9 of the process that made it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from storage_testkit import PODS, revision_of

from kubeloop.server.storage import Storage, Watcher

# The writer creates pods and updates a counter object, printing a line only once each call has
# returned (i.e. the write is acknowledged). It stops on its own after MAX_WRITES, so the test
# cannot hang if the kill comes late. A small window makes pruning run during the stream too.
MAX_WRITES = 200_000
ACKNOWLEDGED_BEFORE_KILL = 1_500
WRITER = textwrap.dedent(
    f"""
    import sys
    from kubeloop.server.storage import ResourceType, Storage

    pods = ResourceType("", "pods")
    store = Storage.open(sys.argv[1], watch_cache_size=50)
    store.create(pods, {{"metadata": {{"name": "counter", "namespace": "default"}}, "spec": {{"count": 0}}}})
    for index in range({MAX_WRITES}):
        name = f"pod-{{index:06d}}"
        store.create(pods, {{"metadata": {{"name": name, "namespace": "default"}}, "spec": {{"index": index}}}})
        print("created", name, flush=True)
        counter = {{"metadata": {{"name": "counter", "namespace": "default"}}, "spec": {{"count": index + 1}}}}
        stored = store.update(pods, counter)
        print("counted", index + 1, stored["metadata"]["resourceVersion"], flush=True)
    """
)


async def drain(watcher: Watcher) -> list[int]:
    revisions = []
    while (event := await watcher.next(timeout=0)) is not None:
        revisions.append(event.rv)
    return revisions


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    created: list[str] = []
    last_count = last_rv = 0
    try:
        for line in writer.stdout:
            kind, value, *rest = line.split()
            if kind == "created":
                created.append(value)
            else:
                last_count, last_rv = int(value), int(rest[0])
            if len(created) >= ACKNOWLEDGED_BEFORE_KILL:
                os.kill(writer.pid, signal.SIGKILL)
                break
    finally:
        writer.kill()
        _, errors = writer.communicate()
    assert writer.returncode == -signal.SIGKILL, errors
    # Lines already in the pipe when the kill came are acknowledgements too.
    assert len(created) >= ACKNOWLEDGED_BEFORE_KILL

    store = Storage.open(tmp_path, watch_cache_size=50)
    try:
        missing = [name for name in created if store.get(PODS, "default", name) is None]
        assert missing == []
        counter = store.get(PODS, "default", "counter")
        assert counter is not None
        assert counter["spec"]["count"] >= last_count
        assert revision_of(counter) >= last_rv
        assert store.revision >= last_rv
        assert revision_of(store.create(PODS, {"metadata": {"name": "after", "namespace": "default"}})) > last_rv
        # The window survives the crash: every write is a pod write, so it holds the last 50
        # revisions before the restart's own create, without a gap.
        oldest = store.oldest_watchable(PODS)
        replayed = asyncio.run(drain(store.watch(PODS, None, oldest)))
        assert replayed == list(range(oldest + 1, store.revision + 1))
        assert len(replayed) == 50
    finally:
        store.close()
