#!/usr/bin/env bash
# Prints the Java classpath that runs Apache ZooKeeper 3.9.3 for the e2e
# suites: scripts/zookeeper/fetch.sh's lib dir, plus the two dependencies
# zookeeper's pom declares with scope "provided" (so copy-dependencies
# leaves them out) although the standalone server needs them at start-up:
# Dropwizard metrics-core (ServerMetrics) and snappy-java (SnapStream).
# Versions are the ones zookeeper-parent 3.9.3 pins. Idempotent; progress
# goes to stderr, the classpath alone to stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$(bash "$root/scripts/zookeeper/fetch.sh" | tail -n 1)
extra="$root/.cache/zookeeper/provided"
cp="$lib/*"
for spec in io.dropwizard.metrics:metrics-core:4.1.12.1 org.xerial.snappy:snappy-java:1.1.10.5; do
  artifact=$(echo "$spec" | cut -d: -f2)
  if compgen -G "$lib/$artifact-*.jar" >/dev/null; then continue; fi
  if ! compgen -G "$extra/$artifact-*.jar" >/dev/null; then
    mkdir -p "$extra"
    mvn -q -B dependency:copy -Dartifact="$spec" -DoutputDirectory="$extra" >&2
  fi
  cp="$cp:$(compgen -G "$extra/$artifact-*.jar" | head -n 1)"
done
echo "$cp"
