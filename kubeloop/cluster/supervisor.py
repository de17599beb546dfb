"""Child processes started, watched, restarted and stopped together (``kubeloop up``'s layout).

A :class:`Child` is one ``kubeloop`` subcommand run as a process of its own. Its stdout and
stderr lines are forwarded to this process's stderr with a ``[name]`` prefix (the lines a
command prints as ``Error: ...`` are kept back and reported with its exit instead, so that a
start-up failure reads as one message), and it counts as *ready* once it printed its
``ready_line`` (each command announces itself once its caches have synced or it listens).

A :class:`Supervisor` watches its children: one that exits while nothing asked it to is
reported on stderr and started again after the delay of its
:class:`~kubeloop.cluster.restarts.RestartPolicy`; when the policy gives up, :meth:`Supervisor.failed`
returns the reason and the owner stops everything. :meth:`Supervisor.stop` terminates the
children group by group (SIGTERM, then SIGKILL after a grace period).

Children run in a session (so a process group) of their own, so a terminal's Ctrl-C reaches only
the supervisor, which stops them in order (clients before the server they talk to) -- a session,
``start_new_session``, rather than ``process_group=0``, because uvloop's ``subprocess_exec``
takes the former only, and ``kubeloop up`` runs on uvloop (:mod:`kubeloop.runtime.eventloop`);
the children read no terminal (stdin is /dev/null), so leaving the terminal's session changes
nothing else. And each child
asks the kernel to send it SIGTERM when the supervisor dies (Linux ``PR_SET_PDEATHSIG``, set by
the child itself at start through :func:`follow_supervisor`), so that none outlives a killed
supervisor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from kubeloop.cluster.restarts import RestartPolicy, describe_exit

SUPERVISOR_ENV = "KUBELOOP_SUPERVISOR_PID"
"""Set in every child's environment: the supervisor's pid (see :func:`follow_supervisor`)."""
_PR_SET_PDEATHSIG = 1


def follow_supervisor() -> None:
    """In a child of a :class:`Supervisor` (``KUBELOOP_SUPERVISOR_PID`` set): get SIGTERM when
    the supervisor dies, and exit at once if it already has. Does nothing elsewhere."""
    expected = os.environ.get(SUPERVISOR_ENV)
    if not expected:
        return
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if str(os.getppid()) != expected:  # it died before the request above took effect
        sys.exit(1)


@dataclass
class ChildSpec:
    """What to run: ``name`` (for messages), the ``kubeloop`` arguments (asked again at every
    start, so they can change between restarts), and the line that says it is ready."""

    name: str
    args: Callable[[], Sequence[str]]
    ready_line: str
    python: str = field(default_factory=lambda: sys.executable)


class ChildExited(Exception):
    """A child ended while someone waited for it to become ready."""

    def __init__(self, name: str, returncode: int, error: str | None) -> None:
        self.name, self.returncode, self.error = name, returncode, error
        detail = f": {error}" if error else ""
        super().__init__(f"the {name} process {describe_exit(returncode)}{detail}")


class Child:
    """One supervised process (started again on each :meth:`start`)."""

    def __init__(self, spec: ChildSpec, output: TextIO | None = None) -> None:
        self.spec = spec
        self.process: asyncio.subprocess.Process | None = None
        self.started_at = 0.0
        self.restarts = 0
        """Restarts in the current run of crashes (see :class:`RestartPolicy`)."""
        self.ready = asyncio.Event()
        self.error: str | None = None
        """The last ``Error: ...`` line of the current run, without the prefix."""
        self.ready_text = ""
        """The line that made the current run ready."""
        self._output = output
        self._pumps: list[asyncio.Task[None]] = []

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        self.ready.clear()
        self.error, self.ready_text = None, ""
        env = {**os.environ, SUPERVISOR_ENV: str(os.getpid()), "PYTHONUNBUFFERED": "1"}
        self.process = await asyncio.create_subprocess_exec(
            self.spec.python, "-m", "kubeloop.cli.main", *self.spec.args(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True)
        self.started_at = time.monotonic()
        self._pumps = [asyncio.ensure_future(self._pump(stream))
                       for stream in (self.process.stdout, self.process.stderr) if stream is not None]

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        while line_bytes := await stream.readline():
            line = line_bytes.decode(errors="replace").rstrip("\n")
            if line.startswith("Error: "):
                self.error = line.removeprefix("Error: ")
                continue
            if self.spec.ready_line in line and not self.ready.is_set():
                self.ready_text = line
                self.ready.set()
            out = self._output if self._output is not None else sys.stderr
            out.write(f"[{self.name}] {line}\n")
            out.flush()

    async def wait(self) -> int:
        """The exit code once the process has ended and its output has been read."""
        assert self.process is not None
        code = await self.process.wait()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        return code

    async def wait_ready(self) -> None:
        """Until the ready line; :class:`ChildExited` if the process ends first."""
        assert self.process is not None
        ready, ended = asyncio.ensure_future(self.ready.wait()), asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait({ready, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if not self.ready.is_set():
            raise ChildExited(self.name, ended.result(), self.error)
        ended.cancel()

    async def terminate(self, grace: float) -> None:
        """SIGTERM, then SIGKILL if the process still runs after ``grace`` seconds."""
        if self.process is None:
            return
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                await asyncio.wait_for(asyncio.shield(self.process.wait()), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
        await self.wait()


class Supervisor:
    """Children watched together: restarted when they crash, stopped together."""

    def __init__(self, policy: RestartPolicy | None = None, output: TextIO | None = None,
                 on_restarted: Callable[[Child], Awaitable[None]] | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self.children: list[Child] = []
        self._output = output
        self._on_restarted = on_restarted
        self._watchers: dict[Child, asyncio.Task[None]] = {}
        self._planned: set[Child] = set()
        self._stopping = False
        self._failure: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def add(self, spec: ChildSpec) -> Child:
        child = Child(spec, self._output)
        self.children.append(child)
        return child

    def _say(self, text: str) -> None:
        out = self._output if self._output is not None else sys.stderr
        out.write(f"kubeloop: {text}\n")
        out.flush()

    async def start(self, child: Child) -> None:
        """Start ``child`` and watch it from now on (not waiting for it to be ready)."""
        await child.start()
        self._say(f"started the {child.name} process (pid {child.pid})")
        self._watchers[child] = asyncio.ensure_future(self._watch(child))

    async def restart(self, child: Child, grace: float) -> None:
        """Stop ``child`` and start it again at once, not counted as a crash."""
        if not child.running:
            return
        self._planned.add(child)
        await child.terminate(grace)

    async def _watch(self, child: Child) -> None:
        while True:
            code = await child.wait()
            if self._stopping:
                return
            if child in self._planned:
                self._planned.discard(child)
                await child.start()
                self._say(f"restarted the {child.name} process (pid {child.pid})")
                continue
            ran_for = time.monotonic() - child.started_at
            decision = self.policy.decide(child.restarts, ran_for)
            child.restarts = decision.attempt
            detail = f" ({child.error})" if child.error else ""
            what = f"the {child.name} process (pid {child.pid}) {describe_exit(code)}{detail}"
            if decision.delay is None:
                reason = f"{what}; it was restarted {self.policy.limit} times in a row, giving up"
                self._say(reason)
                if not self._failure.done():
                    self._failure.set_result(reason)
                return
            self._say(f"{what}; restarting it in {decision.delay:g}s "
                      f"(restart {decision.attempt} of at most {self.policy.limit} in a row)")
            await asyncio.sleep(decision.delay)
            if self._stopping:
                return
            await child.start()
            self._say(f"restarted the {child.name} process (pid {child.pid})")
            if self._on_restarted is not None:
                try:
                    await self._on_restarted(child)
                except Exception as exc:  # the hook's failure is the child's: reported, counted next exit
                    self._say(f"after restarting the {child.name}: {exc}")

    async def failed(self) -> str:
        """The reason, once the supervisor has given up on a child."""
        return await asyncio.shield(self._failure)

    async def stop(self, groups: Sequence[Sequence[Child]], grace: float) -> None:
        """Stop watching, then terminate ``groups`` one after another (each group at once)."""
        self._stopping = True
        for group in groups:
            await asyncio.gather(*(child.terminate(grace) for child in group if child.process is not None))
        for watcher in self._watchers.values():
            watcher.cancel()
        await asyncio.gather(*self._watchers.values(), return_exceptions=True)
        self._watchers.clear()
