#!/usr/bin/env bash
# Fetches Apache Curator 5.9.0's jars (without ZooKeeper's, which
# scripts/zookeeper/fetch.sh provides) into .cache/curator/lib with Maven
# (idempotent) and prints that directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
exec "$root/scripts/mvn-fetch.sh" "$here/pom.xml" "$root/.cache/curator/lib"
