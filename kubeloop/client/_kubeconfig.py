"""Loading a :class:`ClientConfig` from kubeconfig files or from inside a pod.

Kubeconfig merging follows client-go's loading rules: ``KUBECONFIG`` is a list of paths
(``os.pathsep``-separated; empty entries and missing files are skipped); for the named maps
(clusters, contexts, users) the first file that defines a name wins, and ``current-context``
comes from the first file that sets it. Relative file references in a cluster or user
(certificate-authority, client-certificate, client-key, tokenFile, and an exec command
containing a path separator) are resolved against the directory of the file that defined
that entry. ``*-data`` fields are base64 and win over the matching path.

In-cluster: ``KUBERNETES_SERVICE_HOST`` / ``_PORT`` plus the service-account directory's
``token`` (re-read every minute, so rotated tokens are used), ``ca.crt`` and ``namespace``.

:func:`load_config` tries, in controller-runtime's order: an explicit path, ``KUBECONFIG``,
in-cluster, then ``~/.kube/config``.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubeloop.client._config import ClientConfig, ExecConfig
from kubeloop.client._errors import ConfigError

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
EXEC_EXTENSION = "client.authentication.k8s.io/exec"


@dataclass
class _Entry:
    body: dict[str, Any]
    base_dir: str


@dataclass
class _Merged:
    clusters: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    current_context: str = ""


def default_kubeconfig_paths(env: Mapping[str, str] | None = None) -> list[str]:
    """The files client-go would read: ``KUBECONFIG``'s list, else ``~/.kube/config``."""
    environ = os.environ if env is None else env
    listed = environ.get("KUBECONFIG", "")
    if listed:
        return [p for p in listed.split(os.pathsep) if p]
    return [os.path.join(os.path.expanduser("~"), ".kube", "config")]


def _read_yaml(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
    except yaml.YAMLError as exc:
        raise ConfigError(f"error loading config file {path!r}: {exc}") from exc
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"error loading config file {path!r}: not a kubeconfig mapping")
    return doc


def _merge_files(paths: list[str], required: bool) -> _Merged:
    merged = _Merged()
    found = False
    for path in paths:
        if not os.path.exists(path):
            if required:
                raise ConfigError(f"kubeconfig file {path!r} does not exist")
            continue
        found = True
        doc = _read_yaml(path)
        base_dir = os.path.dirname(os.path.abspath(path))
        for key, inner, target in (("clusters", "cluster", merged.clusters),
                                   ("contexts", "context", merged.contexts),
                                   ("users", "user", merged.users)):
            for item in doc.get(key) or []:
                if not isinstance(item, dict) or not item.get("name"):
                    raise ConfigError(f"{path}: every entry of {key!r} needs a name")
                name = str(item["name"])
                if name not in target:
                    target[name] = _Entry(dict(item.get(inner) or {}), base_dir)
        if not merged.current_context and doc.get("current-context"):
            merged.current_context = str(doc["current-context"])
    if not found:
        raise ConfigError(f"no kubeconfig found (looked at {', '.join(paths) or 'nothing'})")
    return merged


def _resolve(path: str | None, base_dir: str) -> str | None:
    if not path:
        return None
    expanded = os.path.expanduser(str(path))
    return expanded if os.path.isabs(expanded) else os.path.join(base_dir, expanded)


def _b64(value: Any, what: str) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"{what} is not valid base64: {exc}") from exc


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _exec_config(raw: dict[str, Any], base_dir: str, cluster: dict[str, Any],
                 cluster_dir: str) -> ExecConfig:
    command = str(raw.get("command") or "")
    if not command:
        raise ConfigError("exec plugin: command is required")
    if os.sep in command:
        command = _resolve(command, base_dir) or command
    api_version = str(raw.get("apiVersion") or "")
    mode = raw.get("interactiveMode")
    if not mode:
        if api_version == "client.authentication.k8s.io/v1":
            raise ConfigError("exec plugin: interactiveMode must be specified for "
                              "client.authentication.k8s.io/v1")
        mode = "IfAvailable"
    env: dict[str, str] = {}
    for item in raw.get("env") or []:
        if not isinstance(item, dict) or "name" not in item:
            raise ConfigError("exec plugin: every env entry needs a name and a value")
        env[str(item["name"])] = str(item.get("value", ""))
    provide = bool(raw.get("provideClusterInfo", False))
    cluster_info: dict[str, Any] | None = None
    if provide:
        cluster_info = {"server": cluster.get("server", "")}
        # ExecCredential's Cluster uses kubeconfig's own kebab-case field names.
        for key in ("tls-server-name", "proxy-url"):
            if cluster.get(key):
                cluster_info[key] = cluster[key]
        if cluster.get("insecure-skip-tls-verify"):
            cluster_info["insecure-skip-tls-verify"] = True
        ca_path = _resolve(cluster.get("certificate-authority"), cluster_dir)
        if cluster.get("certificate-authority-data"):
            cluster_info["certificate-authority-data"] = cluster["certificate-authority-data"]
        elif ca_path:
            cluster_info["certificate-authority-data"] = base64.b64encode(_read_bytes(ca_path)).decode()
        for ext in cluster.get("extensions") or []:
            if isinstance(ext, dict) and ext.get("name") == EXEC_EXTENSION:
                cluster_info["config"] = ext.get("extension")
    return ExecConfig(
        command=command,
        api_version=api_version,
        args=[str(a) for a in raw.get("args") or []],
        env=env,
        interactive_mode=str(mode),
        install_hint=str(raw.get("installHint") or ""),
        provide_cluster_info=provide,
        cluster_info=cluster_info,
    )


def load_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None,
                    *, env: Mapping[str, str] | None = None) -> ClientConfig:
    """Build a :class:`ClientConfig` from kubeconfig.

    ``path`` names one file (like ``--kubeconfig``; it must exist); without it the
    ``KUBECONFIG`` list or ``~/.kube/config`` is merged. ``context`` overrides
    ``current-context``. Raises :class:`ConfigError` for anything unusable.
    """
    paths = [os.fspath(path)] if path is not None else default_kubeconfig_paths(env)
    merged = _merge_files(paths, required=path is not None)
    context_name = context or merged.current_context
    if not context_name:
        raise ConfigError("no context chosen: current-context is not set and no context was given")
    ctx_entry = merged.contexts.get(context_name)
    if ctx_entry is None:
        raise ConfigError(f"context {context_name!r} does not exist")
    ctx = ctx_entry.body
    cluster_name = str(ctx.get("cluster") or "")
    cluster_entry = merged.clusters.get(cluster_name)
    if cluster_entry is None:
        raise ConfigError(f"context {context_name!r}: cluster {cluster_name!r} does not exist")
    user_name = str(ctx.get("user") or "")
    user_entry = merged.users.get(user_name) if user_name else _Entry({}, cluster_entry.base_dir)
    if user_entry is None:
        raise ConfigError(f"context {context_name!r}: user {user_name!r} does not exist")
    cluster, user = cluster_entry.body, user_entry.body
    server = str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} has no server")
    if user.get("auth-provider"):
        raise ConfigError(f"user {user_name!r}: auth-provider plugins are not supported "
                          "(they were removed from client-go too); use an exec plugin")
    cdir, udir = cluster_entry.base_dir, user_entry.base_dir
    raw_exec = user.get("exec")
    return ClientConfig(
        server=server,
        namespace=str(ctx.get("namespace") or "default"),
        ca_data=_b64(cluster.get("certificate-authority-data"), "certificate-authority-data"),
        ca_file=_resolve(cluster.get("certificate-authority"), cdir),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        client_cert_data=_b64(user.get("client-certificate-data"), "client-certificate-data"),
        client_cert_file=_resolve(user.get("client-certificate"), udir),
        client_key_data=_b64(user.get("client-key-data"), "client-key-data"),
        client_key_file=_resolve(user.get("client-key"), udir),
        token=user.get("token") or None,
        token_file=_resolve(user.get("tokenFile"), udir),
        username=user.get("username") or None,
        password=user.get("password") or None,
        exec=_exec_config(raw_exec, udir, cluster, cdir) if isinstance(raw_exec, dict) else None,
    )


def load_incluster_config(*, env: Mapping[str, str] | None = None,
                          service_account_dir: str = SERVICE_ACCOUNT_DIR) -> ClientConfig:
    """Config for a pod's service account; :class:`ConfigError` when not in a cluster."""
    environ = os.environ if env is None else env
    host = environ.get("KUBERNETES_SERVICE_HOST", "")
    port = environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must be defined")
    token_path = os.path.join(service_account_dir, "token")
    if not os.path.isfile(token_path):
        raise ConfigError(f"in-cluster token file {token_path} does not exist")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    ca_path = os.path.join(service_account_dir, "ca.crt")
    namespace = "default"
    try:
        with open(os.path.join(service_account_dir, "namespace"), encoding="utf-8") as handle:
            namespace = handle.read().strip() or "default"
    except OSError:
        namespace = "default"
    return ClientConfig(
        server=f"https://{host}:{port}",
        namespace=namespace,
        ca_file=ca_path if os.path.isfile(ca_path) else None,
        token_file=token_path,
        token_file_period=60.0,
    )


def load_config(context: str | None = None, *, path: str | os.PathLike[str] | None = None,
                env: Mapping[str, str] | None = None,
                service_account_dir: str = SERVICE_ACCOUNT_DIR) -> ClientConfig:
    """The config a controller should use wherever it runs.

    controller-runtime's ``GetConfig`` order: ``path`` if given; else, when ``KUBECONFIG``
    is unset, the in-cluster config if it loads; else the ``KUBECONFIG`` list or
    ``~/.kube/config``.
    """
    environ = os.environ if env is None else env
    if path is not None:
        return load_kubeconfig(path, context, env=environ)
    if environ.get("KUBECONFIG"):
        return load_kubeconfig(None, context, env=environ)
    try:
        return load_incluster_config(env=environ, service_account_dir=service_account_dir)
    except ConfigError as in_cluster_error:
        try:
            return load_kubeconfig(None, context, env=environ)
        except ConfigError as exc:
            raise ConfigError(f"{exc}; and not in a cluster: {in_cluster_error}") from exc
