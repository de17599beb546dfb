# Sourced by the scripts in this folder: creates or reuses .venv and installs kubeloop into it.
# EXTRAS names the optional dependency group to install as well ("" or "test").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python_bin="$(command -v python3.11 || command -v python3)"
if [ ! -x "$venv/bin/python" ]; then
  "$python_bin" -m venv "$venv" 2>/dev/null || {
    # Debian keeps ensurepip in a separate package.
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    "$python_bin" -m venv "$venv"
  }
fi
stamp="$venv/.installed-${EXTRAS:-base}"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install -q --upgrade pip
  if [ -n "${EXTRAS:-}" ]; then
    "$venv/bin/python" -m pip install -q -e "$root[$EXTRAS]"
  else
    "$venv/bin/python" -m pip install -q -e "$root"
  fi
  touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
