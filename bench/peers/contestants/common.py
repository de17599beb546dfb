"""What every contestant shares: arguments, the one reconcile rule, request counting, stats.

Standard library only: this module is imported inside each peer's own virtual environment,
where kubeloop is not installed. A contestant script does::

    sys.path.insert(0, <this directory>)
    from common import Contestant
    c = Contestant.from_argv()

and then reports through ``c``: ``c.reconciled(obj_value)`` per handler invocation,
``c.event("synced")`` for milestones the harness waits for (one JSON line on stdout each),
``c.finish(extra)`` writes the stats file the harness reads after the process ends.

**The reconcile rule** (identical for every peer, so the work is the same): an object is
converged when its annotation ``bench/seen`` equals its ``data.v`` (``"0"`` when absent). A
handler reads the object, and if the annotation differs it sends one merge PATCH setting it.

**Request counting** is contestant-side (the server has no counters yet): the HTTP library's
request entry point is wrapped (aiohttp ``ClientSession._request``, urllib3
``PoolManager.urlopen``, httpx/httpx2 ``AsyncClient.send``) and every request is classified
by method and path into GET / LIST / WATCH / PATCH / POST / PUT / DELETE / DISCOVERY.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import json
import os
import resource
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

ANNOTATION = "bench/seen"
FINALIZER = "bench.kubeloop.dev/finalizer"


def desired_value(obj: dict[str, Any]) -> str:
    """The annotation value a converged object carries: its ``data.v``."""
    return str((obj.get("data") or {}).get("v", "0"))


def seen_value(obj: dict[str, Any]) -> str | None:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)


def classify(method: str, url: str, params: Any = None) -> str:
    """GET / LIST / WATCH / PATCH / ... for one request, from its method and URL."""
    parts = urlsplit(url)
    method = method.upper()
    watching = False
    if method == "GET":  # only a GET can be a watch: the query is parsed for those alone
        query = parse_qs(parts.query)
        watching = query.get("watch", [""])[0] in ("true", "1")
        if isinstance(params, dict):
            watching = watching or str(params.get("watch", "")).lower() in ("true", "1")
        elif isinstance(params, list | tuple):
            watching = watching or any(k == "watch" and str(v).lower() in ("true", "1") for k, v in params)
    segments = [s for s in parts.path.split("/") if s]
    if segments[:1] == ["api"]:
        rest = segments[2:]
    elif segments[:1] == ["apis"]:
        rest = segments[3:]
    else:
        return "OTHER"
    if not rest:
        return "DISCOVERY"
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    if method == "GET":
        if watching:
            return "WATCH"
        return "LIST" if len(rest) == 1 else "GET"
    return method


class RequestCounter:
    """Thread-safe tally of requests by verb and by ``verb code``."""

    def __init__(self) -> None:
        self.by_verb: Counter[str] = Counter()
        self.by_code: Counter[str] = Counter()
        self._lock = threading.Lock()

    def count(self, verb: str, code: int | str) -> None:
        with self._lock:
            self.by_verb[verb] += 1
            self.by_code[f"{verb} {code}"] += 1

    def install(self) -> None:
        """Wrap the HTTP libraries the contestant has imported (each imports its own before
        ``Contestant.from_argv``). Importing the others here would bill a contestant for
        libraries it never uses: httpx and urllib3 are in kubeloop's environment, not in
        kopf's, and cost ~0.2 s of CPU to import."""
        if "aiohttp" in sys.modules:
            self._wrap_aiohttp()
        if "urllib3" in sys.modules:
            self._wrap_urllib3()
        for module in ("httpx", "httpx2"):
            if module in sys.modules:
                self._wrap_httpx(module)

    def _wrap_aiohttp(self) -> None:
        try:
            import aiohttp
        except ImportError:
            return
        original = aiohttp.ClientSession._request
        counter = self

        async def counted(session: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
            verb = classify(method, str(url), kwargs.get("params"))
            try:
                response = await original(session, method, url, *args, **kwargs)
            except BaseException:
                counter.count(verb, "error")
                raise
            counter.count(verb, response.status)
            return response

        setattr(aiohttp.ClientSession, "_request", counted)  # noqa: B010 - typed as a method

    def _wrap_urllib3(self) -> None:
        try:
            import urllib3
        except ImportError:
            return
        original = urllib3.PoolManager.urlopen
        counter = self

        def counted(manager: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            verb = classify(method, url)
            try:
                response = original(manager, method, url, *args, **kwargs)
            except BaseException:
                counter.count(verb, "error")
                raise
            counter.count(verb, response.status)
            return response

        setattr(urllib3.PoolManager, "urlopen", counted)  # noqa: B010 - typed as a method

    def _wrap_httpx(self, module_name: str) -> None:
        try:
            module = __import__(module_name)
        except ImportError:
            return
        client_type = module.AsyncClient
        original = client_type.send
        counter = self

        async def counted(client: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            verb = classify(request.method, str(request.url))
            try:
                response = await original(client, request, *args, **kwargs)
            except BaseException:
                counter.count(verb, "error")
                raise
            counter.count(verb, response.status_code)
            return response

        client_type.send = counted


def rss_mib() -> float:
    """Current resident set size of this process."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Contestant:
    """One contestant process: its arguments, its counters and its way of reporting."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.requests = RequestCounter()
        self.requests.install()
        self.reconciles = 0
        self.reconciles_by_value: Counter[str] = Counter()
        self.patches = 0
        self.max_tasks = 0
        self.extra: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.stop = threading.Event()

    @classmethod
    def from_argv(cls, argv: list[str] | None = None) -> Contestant:
        parser = argparse.ArgumentParser()
        parser.add_argument("--scenario", required=True)
        parser.add_argument("--mode", default="annotate",
                            help="annotate | finalize | sleep | informer | watch")
        parser.add_argument("--variant", default="", help="peer-specific flavour, e.g. kopf 'event' or 'create'")
        parser.add_argument("--kubeconfig", required=True)
        parser.add_argument("--resource", default="configmaps", help="configmaps | pods | deployments")
        parser.add_argument("--objects", type=int, default=0, help="objects expected in the collection")
        parser.add_argument("--workers", type=int, default=0, help="concurrent reconciles (0: the peer's default)")
        parser.add_argument("--sleep", type=float, default=0.0, help="seconds each handler sleeps before acting")
        parser.add_argument("--from-rv", default="", help="watch from this resourceVersion (mode watch)")
        parser.add_argument("--until-rv", type=int, default=0, help="stop once this resourceVersion was seen")
        parser.add_argument("--repeat", type=int, default=1, help="watch the same history this many times (B5)")
        parser.add_argument("--sentinel", default="", help="report when this namespace/name shows up")
        parser.add_argument("--loop", default="", help="event loop: uvloop, or empty for asyncio's")
        parser.add_argument("--stats", required=True, help="where to write the stats JSON on exit")
        return cls(parser.parse_args(argv))

    def event(self, name: str, **fields: Any) -> None:
        """One milestone line for the harness (monotonic clock is shared by all processes)."""
        line = json.dumps({"event": name, "t": time.monotonic(), **fields})
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def reconciled(self, value: str) -> None:
        with self._lock:
            self.reconciles += 1
            self.reconciles_by_value[value] += 1

    def patched(self) -> None:
        with self._lock:
            self.patches += 1

    def install_sigterm(self, on_stop: Callable[[], None] | None = None) -> None:
        """SIGTERM sets ``stop`` (and calls ``on_stop``) instead of killing the process."""

        def handler(signum: int, frame: Any) -> None:
            self.stop.set()
            if on_stop is not None:
                on_stop()

        signal.signal(signal.SIGTERM, handler)

    def install_async_sigterm(self, stopping: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()

        def handler() -> None:
            self.stop.set()
            stopping.set()

        loop.add_signal_handler(signal.SIGTERM, handler)

    async def sample_tasks(self) -> None:
        """Track the most asyncio tasks alive at once (kopf spawns one per object)."""
        while True:
            self.max_tasks = max(self.max_tasks, len(asyncio.all_tasks()))
            await asyncio.sleep(1.0)

    def finish(self, **extra: Any) -> None:
        """Write the stats file (the harness reads it after the process exited)."""
        gc.collect()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        stats = {
            "requests": dict(self.requests.by_verb),
            "requests_by_code": dict(self.requests.by_code),
            "reconciles": self.reconciles,
            "reconciles_by_value": dict(self.reconciles_by_value),
            "patches": self.patches,
            "max_tasks": self.max_tasks,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024,
            "rss_mib": rss_mib(),
            "event_loops": LOOPS_MADE,
            **self.extra,
            **extra,
        }
        tmp = self.args.stats + ".part"
        with open(tmp, "w") as out:
            json.dump(stats, out)
        os.replace(tmp, self.args.stats)


def event_loop(name: str) -> asyncio.AbstractEventLoop:
    """A new event loop of the kind ``--loop`` names: uvloop's, or asyncio's for ""."""
    if name == "uvloop":
        import uvloop  # only the uvloop variants' environments have it

        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    elif name:
        raise SystemExit(f"unknown --loop {name!r}")
    else:
        loop = asyncio.new_event_loop()
    LOOPS_MADE.append(f"{type(loop).__module__}.{type(loop).__qualname__}")
    return loop


LOOPS_MADE: list[str] = []
"""The class of every loop ``event_loop`` made (recorded in the stats: proof of the variant)."""


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def kubeconfig_parts(path: str) -> tuple[str, str, str]:
    """(server URL, bearer token, CA file) from the embedded server's kubeconfig.

    The file is YAML written by ``kubeloop server``; parsing stays stdlib-only by reading
    the keys it always writes (``server``, ``token``, ``certificate-authority-data``, which
    is decoded into a file beside the stats file because some peers only take a CA path).
    """
    server = token = ca_data = ""
    with open(path) as config:
        for raw in config:
            key, _, value = raw.strip().partition(":")
            value = value.strip().strip('"').strip("'")
            if key == "server" and not server:
                server = value
            elif key == "token" and not token:
                token = value
            elif key == "certificate-authority-data" and not ca_data:
                ca_data = value
    ca_file = os.path.join(os.path.dirname(os.path.abspath(path)), "ca-for-peers.crt")
    if not os.path.exists(ca_file):
        with open(ca_file + f".{os.getpid()}", "wb") as out:
            out.write(base64.b64decode(ca_data))
        os.replace(ca_file + f".{os.getpid()}", ca_file)
    return server, token, ca_file
