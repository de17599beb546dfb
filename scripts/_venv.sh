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
# Reinstalled when pyproject.toml or a C source of the package changed (the install builds the
# C extension in place; without a compiler kubeloop installs and runs on its Python code).
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ] \
    || [ -n "$(find "$root/kubeloop" -name '*.c' -newer "$stamp" -print -quit)" ]; then
  "$venv/bin/python" -m pip install -q --upgrade pip
  if [ -n "${EXTRAS:-}" ]; then
    "$venv/bin/python" -m pip install -q -e "$root[$EXTRAS]"
  else
    "$venv/bin/python" -m pip install -q -e "$root"
  fi
  touch "$stamp"
fi
# kubeloop is installed editable (the checkout is the package), so pip has not byte-compiled it
# as it does the packages it installs; where PYTHONDONTWRITEBYTECODE is set, as on these
# machines, every process would compile each module it imports, again at every start (about a
# second of CPU for the server's). Compile into the checkout's own __pycache__ folders (git
# ignores them); when nothing changed this only compares times (0.4 s).
"$venv/bin/python" -m compileall -q -j 0 "$root/kubeloop" >/dev/null
export PATH="$venv/bin:$PATH"
