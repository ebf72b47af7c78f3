#!/usr/bin/env bash
# Fetches Apache ZooKeeper 3.9.3's jars with Maven into .cache/zookeeper/lib
# (idempotent) and prints that directory. Tests and `corral bench` run the
# reference server as: java -cp "$dir/*" org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest="$root/.cache/zookeeper/lib"
if [ -f "$dest/.complete" ]; then echo "$dest"; exit 0; fi
mkdir -p "$dest"
mvn -q -B -f "$(dirname "$0")/pom.xml" dependency:copy-dependencies \
  -DoutputDirectory="$dest" -DincludeScope=runtime >&2
touch "$dest/.complete"
echo "$dest"
