import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.client import ConfigError, load_config, load_incluster_config, load_kubeconfig

CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def kubeconfig(current: str | None, clusters: dict[str, Any], users: dict[str, Any],
               contexts: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current is not None:
        doc["current-context"] = current
    return doc


def test_single_file_with_data_fields(tmp_path: Path) -> None:
    path = write(tmp_path / "config", kubeconfig(
        "dev",
        {"c": {"server": "https://dev:6443", "certificate-authority-data": b64(CA_PEM)}},
        {"u": {"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY"), "token": "t0"}},
        {"dev": {"cluster": "c", "user": "u", "namespace": "team"}},
    ))
    config = load_kubeconfig(path)
    assert config.server == "https://dev:6443"
    assert config.namespace == "team"
    assert config.ca_data == CA_PEM
    assert config.client_cert_data == b"CERT"
    assert config.client_key_data == b"KEY"
    assert config.token == "t0"
    assert config.exec is None
    assert not config.insecure_skip_tls_verify
    assert config.proxy_url is None


def test_relative_paths_resolve_against_the_defining_file(tmp_path: Path) -> None:
    first = write(tmp_path / "a" / "config", kubeconfig(
        "ctx",
        {"c": {"server": "https://a", "certificate-authority": "certs/ca.crt"}},
        {},
        {"ctx": {"cluster": "c", "user": "u"}},
    ))
    second = write(tmp_path / "b" / "config", kubeconfig(
        None, {}, {"u": {"client-certificate": "tls/client.crt", "client-key": "/abs/client.key",
                         "tokenFile": "token"}}, {},
    ))
    config = load_kubeconfig(env={"KUBECONFIG": f"{first}{os.pathsep}{second}"})
    assert config.ca_file == str(tmp_path / "a" / "certs" / "ca.crt")
    assert config.client_cert_file == str(tmp_path / "b" / "tls" / "client.crt")
    assert config.client_key_file == "/abs/client.key"
    assert config.token_file == str(tmp_path / "b" / "token")


def test_merging_first_file_wins_per_name_and_for_current_context(tmp_path: Path) -> None:
    first = write(tmp_path / "one", kubeconfig(
        None,
        {"shared": {"server": "https://first"}},
        {"shared-user": {"token": "first-token"}},
        {"a": {"cluster": "shared", "user": "shared-user"}},
    ))
    second = write(tmp_path / "two", kubeconfig(
        "b",
        {"shared": {"server": "https://second"}, "only-second": {"server": "https://only"}},
        {"shared-user": {"token": "second-token"}},
        {"a": {"cluster": "only-second"}, "b": {"cluster": "shared", "user": "shared-user"}},
    ))
    third = write(tmp_path / "three", kubeconfig("a", {}, {}, {}))
    env = {"KUBECONFIG": os.pathsep.join([str(first), "", str(tmp_path / "missing"), str(second), str(third)])}
    config = load_kubeconfig(env=env)
    # current-context "b" comes from the second file (the first sets none; the third is later).
    assert config.server == "https://first"
    assert config.token == "first-token"
    # Context "a" is taken from the first file, not the second.
    assert load_kubeconfig(context="a", env=env).server == "https://first"


def test_explicit_context_and_default_namespace(tmp_path: Path) -> None:
    path = write(tmp_path / "config", kubeconfig(
        "one",
        {"c1": {"server": "https://one"}, "c2": {"server": "http://two:8080"}},
        {},
        {"one": {"cluster": "c1"}, "two": {"cluster": "c2"}},
    ))
    config = load_kubeconfig(path, context="two")
    assert config.server == "http://two:8080"
    assert config.namespace == "default"
    assert config.token is None


def test_insecure_proxy_tls_server_name_and_basic_auth(tmp_path: Path) -> None:
    path = write(tmp_path / "config", kubeconfig(
        "x",
        {"c": {"server": "https://x", "insecure-skip-tls-verify": True, "proxy-url": "http://proxy:3128",
               "tls-server-name": "kubernetes"}},
        {"u": {"username": "admin", "password": "secret"}},
        {"x": {"cluster": "c", "user": "u"}},
    ))
    config = load_kubeconfig(path)
    assert config.insecure_skip_tls_verify
    assert config.proxy_url == "http://proxy:3128"
    assert config.tls_server_name == "kubernetes"
    assert (config.username, config.password) == ("admin", "secret")


def test_exec_section(tmp_path: Path) -> None:
    path = write(tmp_path / "config", kubeconfig(
        "x",
        {"c": {"server": "https://x", "certificate-authority-data": b64(CA_PEM),
               "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "k"}}]}},
        {"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "bin/get-token",
                        "args": ["--region", "eu"], "env": [{"name": "A", "value": "1"}],
                        "interactiveMode": "Never", "installHint": "install it",
                        "provideClusterInfo": True}},
         "path-user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws"}}},
        {"x": {"cluster": "c", "user": "u"}, "y": {"cluster": "c", "user": "path-user"}},
    ))
    exec_config = load_kubeconfig(path).exec
    assert exec_config is not None
    assert exec_config.command == str(tmp_path / "bin" / "get-token")
    assert exec_config.args == ["--region", "eu"]
    assert exec_config.env == {"A": "1"}
    assert exec_config.interactive_mode == "Never"
    assert exec_config.install_hint == "install it"
    assert exec_config.cluster_info == {"server": "https://x", "certificate-authority-data": b64(CA_PEM),
                                        "config": {"audience": "k"}}
    other = load_kubeconfig(path, context="y").exec
    assert other is not None
    # A bare command is looked up on PATH, so it is left alone; v1beta1 defaults the mode.
    assert other.command == "aws"
    assert other.interactive_mode == "IfAvailable"
    assert not other.provide_cluster_info


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (kubeconfig(None, {"c": {"server": "https://x"}}, {}, {"x": {"cluster": "c"}}), "no context"),
        (kubeconfig("nope", {"c": {"server": "https://x"}}, {}, {"x": {"cluster": "c"}}), "'nope' does not exist"),
        (kubeconfig("x", {}, {}, {"x": {"cluster": "c"}}), "cluster 'c' does not exist"),
        (kubeconfig("x", {"c": {"server": "https://x"}}, {}, {"x": {"cluster": "c", "user": "u"}}),
         "user 'u' does not exist"),
        (kubeconfig("x", {"c": {}}, {}, {"x": {"cluster": "c"}}), "has no server"),
        (kubeconfig("x", {"c": {"server": "https://x", "certificate-authority-data": "!!"}}, {},
                    {"x": {"cluster": "c"}}), "not valid base64"),
        (kubeconfig("x", {"c": {"server": "https://x"}}, {"u": {"auth-provider": {"name": "gcp"}}},
                    {"x": {"cluster": "c", "user": "u"}}), "auth-provider"),
        (kubeconfig("x", {"c": {"server": "https://x"}},
                    {"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "p"}}},
                    {"x": {"cluster": "c", "user": "u"}}), "interactiveMode must be specified"),
        (kubeconfig("x", {"c": {"server": "https://x"}},
                    {"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1"}}},
                    {"x": {"cluster": "c", "user": "u"}}), "command is required"),
    ],
)
def test_unusable_kubeconfigs(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    path = write(tmp_path / "config", doc)
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(path)


def test_explicit_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_kubeconfig(tmp_path / "absent")
    bad = tmp_path / "bad"
    bad.write_text("clusters: [unclosed")
    with pytest.raises(ConfigError, match="error loading config file"):
        load_kubeconfig(bad)
    listy = tmp_path / "listy"
    listy.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="not a kubeconfig mapping"):
        load_kubeconfig(listy)
    with pytest.raises(ConfigError, match="no kubeconfig found"):
        load_kubeconfig(env={"KUBECONFIG": str(tmp_path / "nothing-here")})


def test_home_kubeconfig_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path / ".kube" / "config", kubeconfig("h", {"c": {"server": "https://home"}}, {},
                                                    {"h": {"cluster": "c"}}))
    assert load_kubeconfig(env={}).server == "https://home"
    assert load_config(env={}).server == "https://home"


def service_account(tmp_path: Path, namespace: str | None = "team") -> Path:
    root = tmp_path / "sa"
    root.mkdir()
    (root / "token").write_text("sa-token\n")
    (root / "ca.crt").write_bytes(CA_PEM)
    if namespace is not None:
        (root / "namespace").write_text(namespace)
    return root


def test_incluster(tmp_path: Path) -> None:
    root = service_account(tmp_path)
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = load_incluster_config(env=env, service_account_dir=str(root))
    assert config.server == "https://10.0.0.1:443"
    assert config.namespace == "team"
    assert config.ca_file == str(root / "ca.crt")
    assert config.token_file == str(root / "token")
    assert config.token_file_period == 60.0


def test_incluster_ipv6_and_default_namespace(tmp_path: Path) -> None:
    root = service_account(tmp_path, namespace=None)
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"}
    config = load_incluster_config(env=env, service_account_dir=str(root))
    assert config.server == "https://[fd00::1]:6443"
    assert config.namespace == "default"


def test_incluster_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        load_incluster_config(env={}, service_account_dir=str(tmp_path))
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="token file"):
        load_incluster_config(env=env, service_account_dir=str(tmp_path))


def test_load_config_order(tmp_path: Path) -> None:
    root = service_account(tmp_path)
    explicit = write(tmp_path / "explicit", kubeconfig("e", {"c": {"server": "https://explicit"}}, {},
                                                      {"e": {"cluster": "c"}}))
    listed = write(tmp_path / "listed", kubeconfig("l", {"c": {"server": "https://listed"}}, {},
                                                  {"l": {"cluster": "c"}}))
    incluster = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    sa = str(root)
    assert load_config(path=explicit, env={**incluster, "KUBECONFIG": str(listed)},
                       service_account_dir=sa).server == "https://explicit"
    assert load_config(env={**incluster, "KUBECONFIG": str(listed)}, service_account_dir=sa).server == \
        "https://listed"
    assert load_config(env=incluster, service_account_dir=sa).server == "https://10.0.0.1:443"


def test_load_config_falls_back_from_a_broken_incluster_setup(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    incluster = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    empty_sa = tmp_path / "empty-sa"
    empty_sa.mkdir()
    with pytest.raises(ConfigError, match="not in a cluster: in-cluster token file"):
        load_config(env=incluster, service_account_dir=str(empty_sa))
    write(tmp_path / ".kube" / "config", kubeconfig("h", {"c": {"server": "https://home"}}, {},
                                                    {"h": {"cluster": "c"}}))
    assert load_config(env=incluster, service_account_dir=str(empty_sa)).server == "https://home"


def test_exec_cluster_info_reads_a_ca_file(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(CA_PEM)
    path = write(tmp_path / "config", kubeconfig(
        "x",
        {"c": {"server": "https://x", "certificate-authority": "ca.crt", "proxy-url": "http://p:1",
               "tls-server-name": "k", "insecure-skip-tls-verify": False}},
        {"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "p",
                        "provideClusterInfo": True}}},
        {"x": {"cluster": "c", "user": "u"}},
    ))
    exec_config = load_kubeconfig(path).exec
    assert exec_config is not None
    assert exec_config.cluster_info == {"server": "https://x", "tls-server-name": "k", "proxy-url": "http://p:1",
                                        "certificate-authority-data": b64(CA_PEM)}
