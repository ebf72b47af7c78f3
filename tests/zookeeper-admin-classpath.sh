#!/usr/bin/env bash
# Prints the extra Java classpath Apache ZooKeeper 3.9.3's AdminServer
# needs (Jetty and Jackson, which zookeeper's pom declares "provided"), as
# fetched by Maven from scripts/zookeeper/admin/pom.xml into
# .cache/zookeeper/admin-lib, or into $CORRAL_ZK_ADMIN_LIB when set.
# Idempotent; progress goes to stderr, the classpath alone to stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${CORRAL_ZK_ADMIN_LIB:-$root/.cache/zookeeper/admin-lib}
lib=$(bash "$root/scripts/mvn-fetch.sh" "$root/scripts/zookeeper/admin/pom.xml" "$dest" | tail -n 1)
echo "$lib/*"
