#!/usr/bin/env bash
# Creates (idempotently) the virtualenv for the Python end-to-end suite in
# .venv at the module root, installs tests/python/requirements.txt into it,
# and prints the venv's python path. Re-installs only when the requirements
# file changed since the last install.
#
# Without a .venv, the venv is made once per user, Python and requirements
# file in the corral cache ($CORRAL_CACHE, default
# ${XDG_CACHE_HOME:-~/.cache}/corral) and .venv is a symbolic link to it: a
# fresh clone (CI clones one for every run) links it instead of installing
# every package again. Set CORRAL_CACHE=none to build .venv in place.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
req="$root/tests/python/requirements.txt"
want=$(sha256sum "$req" | cut -d' ' -f1)

# install makes $1 a venv with the requirements, unless its stamp says so.
install() {
  local dir=$1 stamp="$1/.requirements.sha256"
  if [ ! -x "$dir/bin/python" ]; then
    python3 -m venv "$dir" >&2
  fi
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
    echo "$want" > "$stamp"
  fi
}

# No usable cache directory (no HOME, a read-only one, no flock): work in
# place, as CORRAL_CACHE=none does.
. "$root/scripts/lib/cache.sh"
cache=$(corral_cache venv)
if [ "$cache" = none ] || [ -e "$venv" ] || [ -L "$venv" ]; then
  install "$venv"
else
  pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  shared="$cache/venv/py$pyver-$(printf '%s' "$want" | cut -c1-16)"
  mkdir -p "$cache/venv"
  (
    flock 9
    install "$shared"
  ) 9>"$shared.lock"
  ln -sfn "$shared" "$venv"
fi
echo "$venv/bin/python"
