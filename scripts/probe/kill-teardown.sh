#!/usr/bin/env bash
# Usage: [DUR=sync|async|diskless] [GOGC=N] scripts/probe/kill-teardown.sh BIN
#
# How long a SIGKILLed leader's peers take to notice, against its size:
# starts BIN three times on 127.0.0.1 (ports as members.sh), grows the tree
# with 6 s of pipelined creates (16 connections x 64 in flight, 128-byte
# values), prints the leader's VmRSS, kills it with SIGKILL by PID and
# prints the kill time and the survivors' "disconnected", checkpoint and
# "leading" log lines. The kernel closes a killed process's sockets only
# after freeing its memory, so the gap grows with the RSS. GOGC=100 turns
# the server's GC headroom (internal/gcpace) off. corral only: no
# ZooKeeper in this probe.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: kill-teardown.sh BIN}
gen="$root/bin/corral"
out=$(mktemp -d /tmp/corral-kill-XXXXXX)
# shellcheck source=members.sh
. "$root/scripts/probe/members.sh"
trap 'stop_members; rm -rf "$out"' EXIT
start_members "$bin" "$out" "durability=${DUR:-diskless}"
addrs=127.0.0.1:25101,127.0.0.1:25102,127.0.0.1:25103
wait_serving "$gen" "$out"
"$gen" bench run --connect "$addrs" --workload create --conns 16 --inflight 64 --value 128 \
  --duration 6s --warmup 0s -q | grep -oE '"ops":[0-9]+'
sleep 1
lead=""
for i in 1 2 3; do if grep -q 'msg=leading' "$out/s$i/server.log"; then lead=$i; fi; done
[ -n "$lead" ] || { echo "no leader found in the logs" >&2; exit 1; }
pid=${members[$((lead-1))]}
echo "leader s$lead pid $pid $(grep VmRSS "/proc/$pid/status")"
t0=$(date +%s.%N)
kill -9 "$pid"
echo "killed at $(date -u -d "@$t0" +%H:%M:%S.%N | cut -c1-12) UTC"
wait "$pid" 2>/dev/null || true
members=("${members[@]/$pid}")
sleep 1.5
for i in 1 2 3; do
  [ "$i" = "$lead" ] && continue
  echo "s$i: $(grep -E 'disconnected|checkpoint written|msg=leading' "$out/s$i/server.log" | tail -3 |
    grep -oE 'time=[^ ]+|msg="[^"]+"|msg=leading|took=[^ ]+' | tr '\n' ' ')"
done
