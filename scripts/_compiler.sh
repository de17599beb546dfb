# Sourced by scripts/test before the environment is set up. The tests insist that kubeloop's C
# extensions were built (the protobuf writer's and the work queue's "native by default here"
# tests), while an install without a compiler quietly runs the Python code; so on a machine
# without a C compiler or Python's headers, Debian's are installed first (added packages: they
# replace nothing of the user's), and the environment is reinstalled to build the extensions.
set -euo pipefail
_build_python="$(command -v python3.11 || command -v python3)"
_build_packages=()
if ! command -v cc >/dev/null 2>&1; then
  _build_packages+=(gcc libc6-dev)
fi
if ! "$_build_python" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  _build_packages+=(python3-dev)
fi
if [ "${#_build_packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing ${_build_packages[*]} to build kubeloop's C extensions, and no root apt-get to fetch them" >&2
    exit 1
  fi
  echo "== installing Debian's ${_build_packages[*]} (to build kubeloop's C extensions)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${_build_packages[@]}" >/dev/null
  rm -f .venv/.installed-*  # an environment installed without them is built again
fi
