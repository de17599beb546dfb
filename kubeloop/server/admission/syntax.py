"""Syntax of the small names inside pod specs and data maps, with upstream's messages.

Port names (IANA service names), port numbers, environment variable names and ConfigMap /
Secret keys; each ``*_errors`` function returns the messages kube-apiserver gives (empty when
the value is fine).
"""

from __future__ import annotations

import re

from kubeloop.api import names

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")


def port_name_errors(port: str) -> list[str]:
    """``IsValidPortName``: an IANA service name."""
    errors: list[str] = []
    if len(port) > 15:
        errors.append(names.max_len_error(15))
    if not _PORT_NAME_CHARS.match(port):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errors.append("must contain at least one letter (a-z)")
    if "--" in port:
        errors.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def port_number_errors(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def _dot_prefix_errors(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def env_var_name_errors(value: str) -> list[str]:
    errors: list[str] = []
    if not _ENV_NAME.match(value):
        errors.append(names.regex_error(
            "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
            "and must not start with a digit",
            "[-._a-zA-Z][-._a-zA-Z0-9]*",
            "my.env-name", "MY_ENV.NAME", "MyEnvName1",
        ))
    return errors + _dot_prefix_errors(value)


def config_map_key_errors(value: str) -> list[str]:
    """``IsConfigMapKey``: keys of ConfigMaps and Secrets."""
    errors: list[str] = []
    if len(value) > names.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(names.max_len_error(names.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_KEY.match(value):
        errors.append(names.regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            "key.name", "KEY_NAME", "key-name",
        ))
    return errors + _dot_prefix_errors(value)
