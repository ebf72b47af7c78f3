#!/usr/bin/env bash
# Usage: [A_ENV=VAR=value] [B_ENV=VAR=value] scripts/probe/pair.sh BIN_A BIN_B [SECONDS]
#
# Two corral builds side by side under Fig. 5.1's load: a fresh 3-member
# diskless ensemble of each (A on ports 25101-25303, B on 26101-26303,
# dataDirs under a new temporary directory), each loaded at the same time
# by its own `corral bench run --workload create --conns 60 --inflight 1
# --value 128` for SECONDS (default 8). Prints each one's creates/s and
# members' CPU µs per create (utime+stime from /proc), and B's ratios to
# A. Run one after the other, two builds see a machine whose speed drifts
# by ±15% within minutes; run together, they see the same one, so the
# ratio is the comparison. Run it both ways round, several times: the same
# build on both sides gave B/A 0.97 and 0.97 over 8 s, 0.76 and 0.86 over
# 3 s: use 8 s or more.
# A_ENV and B_ENV add
# one environment variable to that ensemble's members (e.g.
# A_ENV=GOMAXPROCS=1); A_DUR and B_DUR replace that ensemble's
# durability line (default durability=diskless; e.g. B_DUR=durability=async
# with the same build on both sides compares the modes). The load generators are this checkout's bin/corral
# (make build). corral against corral only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
binA=${1:?usage: pair.sh BIN_A BIN_B [SECONDS]}
binB=${2:?usage: pair.sh BIN_A BIN_B [SECONDS]}
secs=${3:-8}
gen="$root/bin/corral"
out=$(mktemp -d /tmp/corral-pair-XXXXXX)
# shellcheck source=members.sh
. "$root/scripts/probe/members.sh"
trap 'stop_members; rm -rf "$out"' EXIT

# start TAG BIN BASE ENV DUR: three members with client ports
# BASE+101..103.
A_pids=()
B_pids=()
start() {
  local tag=$1 bin=$2 b=$3 envv=$4 dur=$5 i d
  for i in 1 2 3; do
    d="$out/$tag/s$i"
    member_cfg "$d" "$i" "$dur" "$b"
    if [ -n "$envv" ]; then
      env "$envv" "$bin" server "$d/zoo.cfg" > "$d/server.log" 2>&1 &
    else
      "$bin" server "$d/zoo.cfg" > "$d/server.log" 2>&1 &
    fi
    members+=($!)
    if [ "$tag" = A ]; then A_pids+=($!); else B_pids+=($!); fi
  done
}
addrs() { echo "127.0.0.1:$(($1+101)),127.0.0.1:$(($1+102)),127.0.0.1:$(($1+103))"; }
start A "$binA" 25000 "${A_ENV:-}" "${A_DUR:-durability=diskless}"
start B "$binB" 26000 "${B_ENV:-}" "${B_DUR:-durability=diskless}"

wait_serving "$gen" "$out" "$(addrs 25000)"
wait_serving "$gen" "$out" "$(addrs 26000)"
a0=$(cpu_ticks "${A_pids[@]}")
b0=$(cpu_ticks "${B_pids[@]}")
"$gen" bench run --connect "$(addrs 25000)" --workload create --conns 60 --inflight 1 --value 128 \
  --duration "${secs}s" --warmup 0s -q > "$out/a.txt" 2>&1 &
ga=$!
"$gen" bench run --connect "$(addrs 26000)" --workload create --conns 60 --inflight 1 --value 128 \
  --duration "${secs}s" --warmup 0s -q > "$out/b.txt" 2>&1 &
gb=$!
wait "$ga" "$gb"
a1=$(cpu_ticks "${A_pids[@]}")
b1=$(cpu_ticks "${B_pids[@]}")
oa=$(grep -oE '"ops":[0-9]+' "$out/a.txt" | cut -d: -f2)
ob=$(grep -oE '"ops":[0-9]+' "$out/b.txt" | cut -d: -f2)
hz=$(getconf CLK_TCK)
python3 -c "
oa, ob, s, hz = $oa, $ob, $secs, $hz
ca, cb = ($a1-$a0)*1e6/hz/oa, ($b1-$b0)*1e6/hz/ob
print(f'A {oa/s:.0f} creates/s {ca:.1f} us/create  B {ob/s:.0f} creates/s {cb:.1f} us/create  B/A throughput {ob/oa:.3f} cpu {cb/ca:.3f}')"
