# Sourced by scripts/test: brings the tools the tests drive, without touching the user's own.
# - kubectl 1.20 (Debian's kubernetes-client): its .deb is downloaded and unpacked into the
#   project's .tools/ (never installed over a kubectl the user has); the tests find it through
#   $KUBELOOP_KUBECTL, beside any newer kubectl of the machine (the Cloud SDK's kubectl.1.NN).
# - chromium: the dashboard's browser test (installed from Debian when missing; it replaces
#   nothing).
set -euo pipefail

_tools="$root/.tools"
_kubectl_120="$_tools/kubernetes-client/usr/bin/kubectl"
_apt_updated=""
_apt_update() {
  if [ -z "$_apt_updated" ]; then apt-get update -qq; _apt_updated=1; fi
}
_need_root() {
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing $1 and no root apt-get to fetch it" >&2
    exit 1
  fi
}

if [ ! -x "$_kubectl_120" ]; then
  _need_root "kubectl 1.20 (Debian's kubernetes-client)"
  echo "== fetching Debian's kubernetes-client into $_tools"
  _apt_update
  _download="$(mktemp -d)"
  chmod 0777 "$_download"  # apt fetches as its own user, which must be able to write here
  (cd "$_download" && apt-get download -qq kubernetes-client >/dev/null)
  mkdir -p "$_tools/kubernetes-client"
  dpkg-deb -x "$_download"/kubernetes-client_*.deb "$_tools/kubernetes-client"
  rm -rf "$_download"
fi
export KUBELOOP_KUBECTL="$_kubectl_120${KUBELOOP_KUBECTL:+:$KUBELOOP_KUBECTL}"

if ! command -v chromium >/dev/null 2>&1; then
  _need_root "chromium"
  echo "== installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  _apt_update
  apt-get install -y -qq chromium >/dev/null
fi
