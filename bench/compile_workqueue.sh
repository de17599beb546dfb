#!/usr/bin/env bash
# Compile a copy of kubeloop's work-queue modules with mypyc, for bench/workqueue.py --tree.
#
#   bench/compile_workqueue.sh DEST
#
# Copies this checkout's `kubeloop` package into DEST (outside the repository) and compiles
# the work queue's modules there with mypyc (shipped with mypy) and the C compiler; then
#   bench/workqueue.py --go BINARY --tree python=. --tree mypyc=DEST
# measures the interpreted and the compiled queue side by side. An experiment only: the
# package itself is not built this way (see bench/README.md, "Work queue against client-go").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=$(realpath -m "$1")
python=${PYTHON:-$here/.venv/bin/python}
[ -x "$python" ] || python=/work/main/.venv/bin/python
rm -rf "$dest"
mkdir -p "$dest"
git -C "$here" ls-files -z kubeloop | (cd "$here" && tar -c --null -T -) | tar -x -C "$dest"
cd "$dest"
sources=()
for module in queue batch delaying ratelimiting; do sources+=("kubeloop/runtime/workqueue/$module.py"); done
"$python" -m mypyc --strict "${sources[@]}" >build.log 2>&1 \
  || { tail -30 build.log; exit 1; }
echo "compiled into $dest"
