#!/usr/bin/env bash
# Usage: scripts/mvn-fetch.sh POM DEST
# Copies the runtime dependencies POM declares into DEST with Maven, once
# (DEST/.complete marks a finished copy), and prints DEST.
#
# The copy is made once per user and POM content, in the corral cache
# ($CORRAL_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/corral), and DEST is
# a symbolic link to it: a fresh clone (CI clones one for every run) then
# links in seconds instead of starting Maven again. A POM that changes
# gets a new copy. Set CORRAL_CACHE=none to copy into DEST itself.
set -euo pipefail
pom=$1 dest=$2
if [ -f "$dest/.complete" ]; then echo "$dest"; exit 0; fi
# No usable cache directory (no HOME, a read-only one, no flock): work in
# place, as CORRAL_CACHE=none does.
. "$(dirname "$0")/lib/cache.sh"
cache=$(corral_cache mvn)
if [ "$cache" = none ] || [ -e "$dest" ] || [ -L "$dest" ]; then
  # No shared cache, or DEST already exists (an unfinished copy): fill it.
  mkdir -p "$dest"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dest" -DincludeScope=runtime >&2
  touch "$dest/.complete"
  echo "$dest"
  exit 0
fi
shared="$cache/mvn/$(sha256sum "$pom" | cut -c1-16)"
mkdir -p "$cache/mvn"
(
  flock 9
  if [ ! -f "$shared/.complete" ]; then
    rm -rf "$shared"
    mkdir -p "$shared"
    mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$shared" -DincludeScope=runtime >&2
    touch "$shared/.complete"
  fi
) 9>"$shared.lock"
mkdir -p "$(dirname "$dest")"
ln -sfn "$shared" "$dest"
echo "$dest"
