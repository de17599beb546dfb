"""Write the bootstrap RBAC policy facts into ``kubeloop/server/auth/rbac/bootstrap_policy.json``.

kube-apiserver creates its default ClusterRoles, ClusterRoleBindings, Roles and RoleBindings
at start (post-start hook ``rbac/bootstrap-roles``, ``pkg/registry/rbac/rest/storage_rbac.go``).
Upstream pins the exact objects in golden files beside the policy code
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/*.yaml``, compared by
``policy_test.go``). This script reads those six files from a local git snapshot of
kubernetes/kubernetes at one revision and writes the objects as one JSON fact file, grouped
the way the hook creates them (cluster roles, cluster role bindings, then namespaced roles and
bindings), each group in the golden files' order. ``creationTimestamp: null`` is dropped: the
server stamps its own. No YAML text is stored.

Regenerate (from the repository root)::

    PYTHONPATH=$PWD /work/main/.venv/bin/python scripts/rbac_bootstrap.py \\
        --repo /work/.mirror/kevinhehc+k8s-1.28/repo --rev HEAD > kubeloop/server/auth/rbac/bootstrap_policy.json

``--dir DIR`` reads the six files from a plain directory instead (e.g. a newer release's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

TESTDATA = "plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata"
GROUPS = {
    "clusterroles": ("cluster-roles.yaml", "controller-roles.yaml"),
    "clusterrolebindings": ("cluster-role-bindings.yaml", "controller-role-bindings.yaml"),
    "roles": ("namespace-roles.yaml",),
    "rolebindings": ("namespace-role-bindings.yaml",),
}
KINDS = {"clusterroles": "ClusterRole", "clusterrolebindings": "ClusterRoleBinding", "roles": "Role",
         "rolebindings": "RoleBinding"}


def _read(args: argparse.Namespace, name: str) -> str:
    if args.dir:
        return Path(args.dir, name).read_text()
    return subprocess.run(["git", "-C", args.repo, "show", f"{args.rev}:{TESTDATA}/{name}"], check=True,
                          capture_output=True, text=True).stdout


def _clean(item: dict[str, Any]) -> dict[str, Any]:
    metadata = item.get("metadata") or {}
    metadata.pop("creationTimestamp", None)
    if item.get("rules", ()) is None:
        # Go writes a nil rule list as null; the API serves it as an absent field.
        del item["rules"]
    return item


def policy(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for group, files in GROUPS.items():
        items: list[dict[str, Any]] = []
        for name in files:
            document = yaml.safe_load(_read(args, name))
            for item in document.get("items") or []:
                if item.get("kind") != KINDS[group]:
                    raise SystemExit(f"{name}: unexpected kind {item.get('kind')!r} in {group}")
                items.append(_clean(item))
        out[group] = items
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", default="/work/.mirror/kevinhehc+k8s-1.28/repo")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--dir", default="")
    args = parser.parse_args()
    json.dump(policy(args), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
