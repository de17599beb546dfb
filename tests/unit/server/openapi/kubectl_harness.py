"""Driving real kubectl binaries against a small aiohttp server that serves our documents.

The server answers ``/version``, discovery (from the server's own discovery builders over a
registry of the built-ins and the CloneSet CRD), ``/openapi/v2`` and ``/openapi/v3`` (from
:class:`kubeloop.server.openapi.OpenAPIService`) and, for fixed objects given to it, list and
get requests as plain JSON or as Tables (from :mod:`kubeloop.server.tables`). Nothing else.

:func:`find_kubectls` looks for kubectl in the usual places and ``$KUBELOOP_KUBECTL`` (paths
separated by ``os.pathsep``), one binary per client version.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from kubeloop.server import discovery
from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.crd import infos_for
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import OpenAPIService, served_from_registry
from kubeloop.server.registry import Registry
from kubeloop.server.tables import include_object, list_table, object_table, printer_for, table_request

CANDIDATES = ("/usr/bin/kubectl", "/usr/local/bin/kubectl", "/usr/lib/google-cloud-sdk/bin/kubectl",
              "/snap/bin/kubectl")


@dataclass(frozen=True)
class Kubectl:
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


def find_kubectls() -> list[Kubectl]:
    """Every distinct kubectl client version found on this machine."""
    paths = [p for p in os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep) if p]
    on_path = shutil.which("kubectl")
    paths += [on_path] if on_path else []
    paths += [p for p in CANDIDATES if os.access(p, os.X_OK)]
    found: dict[str, Kubectl] = {}
    for path in dict.fromkeys(os.path.realpath(p) for p in paths if glob.glob(p)):
        version = _client_version(path)
        if version is not None and version not in found:
            found[version] = Kubectl(path, version)
    return sorted(found.values(), key=lambda k: k.minor)


def _registry() -> Registry:
    registry = Registry()
    registry.add_all(BUILTIN_RESOURCES)
    registry.add_all(infos_for(CLONESET_CRD))
    return registry


@dataclass
class FakeApiServer:
    """A read-only API server over fixed objects: ``objects[(group, version, resource)]``."""

    objects: Mapping[tuple[str, str, str], list[dict[str, Any]]] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    requests: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.registry = _registry()
        self.openapi = OpenAPIService()
        self.openapi.update(served_from_registry(self.registry), [CLONESET_CRD])
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def kubeconfig(self, directory: Path) -> Path:
        path = directory / "kubeconfig"
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: fake\n  cluster:\n    server: {self.url}\n"
            "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n"
            "current-context: fake\nusers:\n- name: fake\n  user: {}\n")
        return path

    @staticmethod
    def _json(body: Any, status: int = 200) -> web.Response:
        return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path
        accept = request.headers.get("Accept")
        self.requests.append((path, request.query_string, accept or ""))
        if path == "/version":
            return self._json(discovery.VERSION_INFO)
        if path == "/api":
            return self._json(discovery.api_versions("127.0.0.1"))
        if path == "/apis":
            return self._json(discovery.api_group_list(self.registry))
        parts = path.strip("/").split("/")
        if path == "/api/v1" or (parts[0] == "apis" and len(parts) == 3):
            group, version = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
            return self._json(discovery.api_resource_list(self.registry, group, version))
        if path == "/openapi/v2":
            document = self.openapi.v2(accept)
            if document is None:
                return web.Response(status=406)
            return web.Response(body=document.body, headers={
                "Content-Type": document.content_type, "ETag": document.etag, "Vary": "Accept"})
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            found = (self.openapi.v3_discovery() if path == "/openapi/v3"
                     else self.openapi.v3_document(path.removeprefix("/openapi/v3/")))
            if found is None:
                return web.Response(status=404)
            return web.Response(body=found.body, headers={"Content-Type": found.content_type, "ETag": found.etag})
        return self._resource(request, parts)

    def _resource(self, request: web.Request, parts: list[str]) -> web.Response:
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            group, version, rest = parts[1], parts[2], parts[3:]
        if len(rest) >= 2 and rest[0] == "namespaces":
            rest = rest[2:]
        info = self.registry.lookup(group, version, rest[0]) if rest else None
        if info is None or len(rest) > 2:
            return self._json({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                               "reason": "NotFound", "message": "the server could not find the requested resource"},
                              404)
        items = list(self.objects.get((group, version, info.resource), []))
        crd = CLONESET_CRD if info.custom is not None else None
        printer = printer_for(group, version, info.kind, crd)
        wanted = table_request(request.headers.get("Accept"))
        include = include_object(request.query.get("includeObject"))
        if len(rest) == 2:
            match = [o for o in items if o["metadata"]["name"] == rest[1]]
            if not match:
                return self._json({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                                   "reason": "NotFound",
                                   "message": f'{info.resource} "{rest[1]}" not found'}, 404)
            if wanted is not None:
                return self._json(object_table(printer, match[0], request=wanted, include=include,
                                               api_version=info.api_version, kind=info.kind, now=self.now))
            return self._json({"kind": info.kind, "apiVersion": info.api_version, **match[0]})
        listed = {"kind": info.list_kind, "apiVersion": info.api_version, "metadata": {"resourceVersion": "42"},
                  "items": items}
        if wanted is not None:
            return self._json(list_table(printer, listed, request=wanted, include=include,
                                         api_version=info.api_version, kind=info.kind, now=self.now))
        return self._json(listed)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


async def run_kubectl(kubectl: Kubectl, kubeconfig: Path, home: Path, *args: str) -> Result:
    """Run one kubectl command against the fake server (its own HOME, so no cached discovery)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "KUBECONFIG": str(kubeconfig)}
    process = await asyncio.create_subprocess_exec(
        kubectl.path, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    return Result(process.returncode if process.returncode is not None else -1, stdout.decode(), stderr.decode())
