"""Every kubectl on the machine, and a runner driving one of them against an embedded cluster.

:func:`kubectl_builds` finds Debian's ``/usr/bin/kubectl`` (1.20), the Cloud SDK's versioned
builds ``kubectl.1.NN`` and anything listed in ``$KUBELOOP_KUBECTL`` (paths separated by
``os.pathsep``), one binary per client version, oldest first. Each :class:`KubectlRunner` has
its own HOME (so its own discovery and OpenAPI caches) and its own namespace.
"""

from __future__ import annotations

import asyncio
import glob
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import orjson

SEARCHED = ("/usr/bin/kubectl", "/usr/local/bin/kubectl", "/usr/lib/google-cloud-sdk/bin/kubectl.1.*")
TIMEOUT_SECONDS = 90


@dataclass(frozen=True)
class KubectlBuild:
    path: str
    version: str
    """The client's gitVersion, such as ``v1.20.2``."""

    @property
    def minor(self) -> int:
        return int("".join(ch for ch in self.version.split(".")[1] if ch.isdigit()))


def _client_version(path: str) -> str | None:
    try:
        done = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, timeout=60,
                              check=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    version = orjson.loads(done.stdout).get("clientVersion", {}).get("gitVersion")
    return version if isinstance(version, str) else None


def kubectl_builds() -> list[KubectlBuild]:
    """One build per distinct client version, oldest first."""
    paths = [p for p in os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep) if p]
    for pattern in SEARCHED:
        paths += sorted(glob.glob(pattern))
    found: dict[str, KubectlBuild] = {}
    for path in dict.fromkeys(os.path.realpath(p) for p in paths if os.access(p, os.X_OK)):
        version = _client_version(path)
        if version is not None and version not in found:
            found[version] = KubectlBuild(path, version)
    return sorted(found.values(), key=lambda k: k.minor)


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


class KubectlRunner:
    """Runs one kubectl build in one namespace of the cluster behind ``kubeconfig``."""

    def __init__(self, build: KubectlBuild, kubeconfig: Path, home: Path, namespace: str) -> None:
        self.build = build
        self.namespace = namespace
        self.kubeconfig = kubeconfig
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                    "KUBECACHEDIR": str(home / "cache")}

    def command(self, *args: str) -> list[str]:
        return [self.build.path, "--kubeconfig", str(self.kubeconfig), "--namespace", self.namespace, *args]

    async def start(self, *args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
        """Start kubectl without waiting for it (``get -w``, ``wait``)."""
        return await asyncio.create_subprocess_exec(
            *self.command(*args), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**self.env, **(env or {})})

    async def run(self, *args: str, env: dict[str, str] | None = None) -> Result:
        process = await self.start(*args, env=env)
        out, err = await asyncio.wait_for(process.communicate(), timeout=TIMEOUT_SECONDS)
        return Result(process.returncode if process.returncode is not None else -1, out.decode(), err.decode())

    async def ok(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run kubectl, which must succeed without an error line; its stdout."""
        result = await self.run(*args, env=env)
        assert result.code == 0, f"kubectl {' '.join(args)} failed ({result.code}): {result.err}{result.out}"
        return result.out

    async def fails(self, *args: str) -> str:
        """Run kubectl, which must fail; its stderr (never an internal server error)."""
        result = await self.run(*args)
        assert result.code != 0, f"kubectl {' '.join(args)} should have failed: {result.out}"
        assert "InternalError" not in result.err and "Internal error" not in result.err, result.err
        return result.err
