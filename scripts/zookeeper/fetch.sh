#!/usr/bin/env bash
# Fetches Apache ZooKeeper 3.9.3's jars with Maven into .cache/zookeeper/lib
# (idempotent) and prints that directory. Tests and `corral bench` run the
# reference server as: java -cp "$dir/*" org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
exec "$root/scripts/mvn-fetch.sh" "$here/pom.xml" "$root/.cache/zookeeper/lib"
