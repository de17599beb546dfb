# Sourced by scripts/test: installs the Debian packages the tests drive, when missing.
# - kubernetes-client: kubectl 1.20 (the kubectl compatibility tests run it, and any newer
#   kubectl they find). /usr/bin/kubectl may already belong to another package (a newer
#   kubectl from the Google Cloud SDK); Debian's then overwrites it, the newer one stays
#   reachable in its own directory.
# - chromium: the dashboard's browser test.
set -euo pipefail

_debian_missing=()
if ! dpkg -s kubernetes-client >/dev/null 2>&1; then _debian_missing+=(kubernetes-client); fi
if ! command -v chromium >/dev/null 2>&1; then _debian_missing+=(chromium); fi

if [ "${#_debian_missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing Debian packages (${_debian_missing[*]}) and no root apt-get to install them" >&2
    exit 1
  fi
  echo "== installing Debian packages: ${_debian_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -o Dpkg::Options::=--force-overwrite "${_debian_missing[@]}" >/dev/null
fi
