"""Instructions of a create's answer, protobuf beside JSON, piece by piece (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/protobuf_answer.py [--copies 100] [--mypyc DIR]``

A protobuf create costs the server a few per cent more than a JSON one
(``bench/wire_requests.py --callgrind``), all of it in the first write of the answer: reading the
body costs less than JSON's. This counts that write's pieces on a pod as the server stores it
(created over HTTP by an in-process ``KubeServer``: defaults, managed fields, owner reference),
each over ``--copies`` fresh copies with their own name, uid and resourceVersion (a first write
of each, as a create's answer is):

- ``orjson.dumps``: the JSON answer;
- ``protobuf.encode``: the protobuf answer (the cache of written bodies, the envelope, the writer);
- the generated ``Pod`` and ``ObjectMeta`` writers alone (the managed fields' entry and the spec
  go through their memos: same template, same second);
- the C writer (:mod:`kubeloop.server.codec.protobuf_native`, when built): ``protobuf.encode``
  served by it, and its ``Pod`` and ``ObjectMeta`` writers alone (no memos: it writes every
  field); the rows above are the generated Python writers', whichever serves by default;
- with ``--mypyc DIR``: the same generated writers emitted as one module into ``DIR`` and
  compiled there with mypyc (shipped with mypy, the pinned type checker) and the C compiler, to
  see what compiling the Python of the writers would take off.

The script runs itself under valgrind's callgrind with instrumentation off, and turns it on
(``callgrind_control``) around each piece only: counts do not move with the machine's load.
Figures are instructions per write, less an empty step's; the garbage collector is off while a
step is counted (as in ``timeit``). Needs ``valgrind``; about three
minutes (plus a minute and a half for ``--mypyc``'s compilation).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from callgrind_counts import CallgrindCounts
from server import pod_body

_POD = "io.k8s.api.core.v1.Pod"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_UNDER_CALLGRIND = "KUBELOOP_BENCH_UNDER_CALLGRIND"


def _stored_pod() -> dict[str, Any]:
    """A pod as the server stores it, created over HTTP by an in-process server."""
    import ssl

    import aiohttp

    from kubeloop.server.app import KubeServer, ServerConfig

    async def create() -> dict[str, Any]:
        server = KubeServer(ServerConfig(Path(tempfile.mkdtemp()), port=0, memory=True))
        await server.start()
        assert server.credentials is not None
        tls = ssl.create_default_context(cafile=str(server.credentials.ca_cert))
        headers = {"Authorization": f"Bearer {server.credentials.token}"}
        pod = pod_body(0, True)
        pod["metadata"]["namespace"] = "default"
        try:
            async with aiohttp.ClientSession(headers=headers) as session, session.post(
                    f"{server.url}/api/v1/namespaces/default/pods", data=orjson.dumps(pod), ssl=tls,
                    headers={"Content-Type": "application/json"}) as response:
                assert response.status == 201, await response.text()
                created: dict[str, Any] = orjson.loads(await response.read())
                return created
        finally:
            await server.stop()

    return asyncio.run(create())


def _module_source() -> str:
    """The generated struct writers reachable from Pod as one module (for mypyc); the helpers they
    call (string cache, memos, special types) are bound from the running generator by ``bind``."""
    from kubeloop.server.codec import protobuf_writer as pw
    from kubeloop.server.codec.protobuf_memo import memoized
    from kubeloop.server.kinds import wire

    pw.writer(_POD)
    generator = pw._GENERATOR
    helpers = {"_varint", "_b64decode", "_pack_d", "_pack_f", "_sorted", "_string", "_unique_string"}
    structs = []
    for name, var in generator.names.items():
        if pw._special(name):
            helpers.add(var)
            continue
        fields = sorted(wire.messages()[name]["fields"], key=lambda entry: entry["n"])
        source = generator._source(var, name, fields)
        structs.append(source.replace(f"def {var}(obj, out):", f"def {var}(obj: Any, out: bytearray) -> None:"))
        if memoized(name):
            helpers.add("m" + var)
    lines = ["from collections.abc import Mapping as _Mapping", "from typing import Any", ""]
    lines += [f"{helper}: Any = None" for helper in sorted(helpers)]
    lines += ["", "", "def bind(namespace: Any) -> None:"]
    for helper in sorted(helpers):
        lines += [f"    global {helper}", f"    {helper} = namespace[{helper!r}]"]
    return "\n".join(lines) + "\n\n\n" + "\n\n".join(structs)


def _compile(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "kubeloop_pbwriters.py").write_text(_module_source())
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mypyc", "kubeloop_pbwriters.py"], cwd=directory,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stdout[-3000:] + done.stderr[-3000:])
    print(f"compiled with mypyc in {time.monotonic() - started:.0f} s into {directory}", flush=True)


_MODES = {"protobuf.encode,-C-writer": "native"}
"""Steps counted with the C writer serving (``protobuf.encode``); every other with the Python writers."""


def _use(mode: str) -> None:
    """Serve with the C writer (``native``) or the generated Python writers from now on."""
    from kubeloop.server.codec import protobuf_native

    os.environ[protobuf_native.ENV_VAR] = mode
    protobuf_native.enabled.cache_clear()


class _Counter:
    """Instructions of one step, repeated, with callgrind's instrumentation on around it only."""

    def __init__(self, out_file: str) -> None:
        self.counts = CallgrindCounts(os.getpid(), Path(out_file))

    def count(self, label: str, step: Callable[[Any], Any], values: list[Any]) -> float:
        from kubeloop.server.codec import protobuf

        _use(_MODES.get(label, "python"))
        # An earlier step's copies share these names: their cache entries would be replaced and
        # freed here, which a create's answer (a new name) never does.
        protobuf.clear_cache()
        step(values[0])  # compiled, cached, warm: not counted
        iterator = iter(values[1:])
        # As timeit does: no collection of the garbage earlier steps left (what the caches keep
        # grows step by step) lands in a later step's count.
        gc.collect()
        gc.disable()
        self.counts.instrument(True)
        self.counts.zero()
        for value in iterator:
            step(value)
        total = self.counts.dump(label)
        gc.enable()
        self.counts.instrument(False)
        return total / (len(values) - 1)


def _measure(copies: int, mypyc_dir: str | None, out_file: str) -> None:
    from kubeloop.server.codec import protobuf, protobuf_native, protobuf_writer

    stored = _stored_pod()
    text = orjson.dumps(stored)

    def fresh() -> list[dict[str, Any]]:
        objs = []
        for index in range(copies + 1):
            obj = orjson.loads(text)
            meta = obj["metadata"]
            meta["name"] = f"web-{index:06d}"
            meta["uid"] = f"5d0c1a7e-8b43-4a55-9f6e-{index:012d}"
            meta["resourceVersion"] = str(10_000 + index)
            objs.append(obj)
        return objs

    pod_writer = protobuf_writer.python_writer(_POD)
    meta_writer = protobuf_writer.python_writer(_META)
    steps: list[tuple[str, Callable[[Any], Any]]] = [
        ("empty step", lambda obj: None),
        ("orjson.dumps (the JSON answer)", orjson.dumps),
        ("protobuf.encode (the protobuf answer)", protobuf.encode),
        ("Pod writer", lambda obj: pod_writer(obj, bytearray())),
        ("ObjectMeta writer", lambda obj: meta_writer(obj["metadata"], bytearray())),
    ]
    if protobuf_native.available():
        pod_native = protobuf_native.writer(_POD)
        meta_native = protobuf_native.writer(_META)
        sample = fresh()[0]
        if protobuf_native.encode_message(sample, _POD) != protobuf_writer.python_encode_message(sample, _POD):
            sys.exit("the C writer writes other bytes than the generated one")
        steps += [("protobuf.encode, C writer", protobuf.encode),
                  ("Pod writer, C", lambda obj: pod_native(obj, bytearray())),
                  ("ObjectMeta writer, C", lambda obj: meta_native(obj["metadata"], bytearray()))]
    if mypyc_dir:
        sys.path.insert(0, mypyc_dir)
        import kubeloop_pbwriters as compiled  # type: ignore[import-not-found]

        generator = protobuf_writer._GENERATOR
        compiled.bind(generator.namespace)
        pod_compiled = getattr(compiled, generator.names[_POD])
        meta_compiled = getattr(compiled, generator.names[_META])
        sample = fresh()[0]
        written = bytearray()
        pod_compiled(sample, written)
        if bytes(written) != protobuf_writer.python_encode_message(sample, _POD):
            sys.exit("the compiled writer writes other bytes than the generated one")
        steps += [("Pod writer, mypyc", lambda obj: pod_compiled(obj, bytearray())),
                  ("ObjectMeta writer, mypyc", lambda obj: meta_compiled(obj["metadata"], bytearray()))]
    counter = _Counter(out_file)
    figures = {label: counter.count(label.split(" (")[0].replace(" ", "-"), step, fresh()) for label, step in steps}
    empty = figures.pop("empty step")
    print(f"instructions per first write of a stored pod ({len(text):,} bytes of JSON), {copies} copies, "
          f"less an empty step's {empty:,.0f}")
    for label, value in figures.items():
        print(f"{label:40s} {value - empty:10,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--mypyc", metavar="DIR", help="also compile the writers with mypyc into DIR and count them")
    args = parser.parse_args()
    if os.environ.get(_UNDER_CALLGRIND):
        _measure(args.copies, args.mypyc, os.environ[_UNDER_CALLGRIND])
        return
    if args.mypyc:
        _compile(Path(args.mypyc).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        out_file = f"{scratch}/callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_file}",
                   sys.executable, __file__, "--copies", str(args.copies)]
        if args.mypyc:
            command += ["--mypyc", str(Path(args.mypyc).resolve())]
        env = {**os.environ, _UNDER_CALLGRIND: out_file}
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        print(done.stdout, end="")
        if done.returncode != 0:
            sys.exit(done.returncode)


if __name__ == "__main__":
    main()
