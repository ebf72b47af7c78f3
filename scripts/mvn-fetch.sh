#!/usr/bin/env bash
# Usage: scripts/mvn-fetch.sh POM DEST
# Copies the runtime dependencies POM declares into DEST with Maven, once
# (DEST/.complete marks a finished copy), and prints DEST.
set -euo pipefail
pom=$1 dest=$2
if [ -f "$dest/.complete" ]; then echo "$dest"; exit 0; fi
mkdir -p "$dest"
mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dest" -DincludeScope=runtime >&2
touch "$dest/.complete"
echo "$dest"
