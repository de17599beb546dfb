"""Write ``deploy/`` (the kustomize base and overlays) from kubeloop's sources.

    PYTHONPATH=$PWD .venv/bin/python scripts/gen_deploy.py          # rewrite deploy/
    PYTHONPATH=$PWD .venv/bin/python scripts/gen_deploy.py --check  # exit 1 if deploy/ is stale

The files are :func:`kubeloop.install.tree.deploy_tree`; YAML files under ``deploy/`` that the
tree no longer has are removed. Run it after changing a CRD, a controller's rules, the webhook's
names or the version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kubeloop.install.tree import deploy_tree

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    args = parser.parse_args()
    tree = deploy_tree()
    stale = [path for path in DEPLOY.rglob("*.yaml") if path.relative_to(DEPLOY).as_posix() not in tree]
    differ = [rel for rel, text in tree.items()
              if not (DEPLOY / rel).is_file() or (DEPLOY / rel).read_text() != text]
    if args.check:
        for rel in [*differ, *(p.relative_to(DEPLOY).as_posix() for p in stale)]:
            print(f"deploy/{rel} is stale: run scripts/gen_deploy.py", file=sys.stderr)
        return 1 if differ or stale else 0
    for path in stale:
        path.unlink()
    for rel in differ:
        target = DEPLOY / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text := tree[rel])
        print(f"wrote deploy/{rel} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
