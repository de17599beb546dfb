#!/usr/bin/env bash
# Runs this checkout's bench/server.py against the server code of two checkouts, alternating,
# ROUNDS times each, with this project's virtual environment: old and new side by side in one run.
#   bench/compare_server.sh OLD_CHECKOUT NEW_CHECKOUT [ROUNDS] [server.py arguments...]
# Make OLD_CHECKOUT with e.g. `git worktree add /tmp/kubeloop-old <commit>`.
set -euo pipefail
old=$1 new=$2 rounds=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
here="$(cd "$(dirname "$0")/.." && pwd)"
python="$here/.venv/bin/python"
for round in $(seq 1 "$rounds"); do
  for side in old new; do
    dir=${!side}
    echo "== round $round: $side ($(git -C "$dir" rev-parse --short HEAD))"
    (cd "$dir" && PYTHONPATH="$dir" "$python" "$here/bench/server.py" "$@" | grep -E "pod (create|update)|pods:|fan-out")
  done
done
