#!/usr/bin/env bash
# Usage: scripts/probe/diskless-cpu.sh BIN [SECONDS]
#
# Throughput and the members' CPU per create of one corral build under
# Fig. 5.1's load (60 synchronous clients, 128-byte creates) on a fresh
# 3-member diskless ensemble: starts BIN three times on 127.0.0.1 (client
# ports 25101-25103, quorum 25201-25203, election 25301-25303; dataDirs
# under a new temporary directory), warms up for a second, runs
# `corral bench run --workload create --conns 60 --inflight 1 --value 128`
# for SECONDS (default 10), reads the members' utime+stime from /proc
# before and after, and their read and write system calls from
# /proc/PID/io, stops them by PID and prints one line. corral against
# corral: run two builds alternately, several times each; CPU per create
# moves less with the machine's noise than throughput does. The load
# generator is this checkout's bin/corral (make build). EXTRA_CFG, if
# set, is appended to the members' zoo.cfg (e.g. EXTRA_CFG=snapCount=1000000).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: diskless-cpu.sh BIN [SECONDS]}
secs=${2:-10}
gen="$root/bin/corral"
out=$(mktemp -d /tmp/corral-dlcpu-XXXXXX)
# shellcheck source=members.sh
. "$root/scripts/probe/members.sh"
trap 'stop_members; rm -rf "$out"' EXIT
cfg=durability=diskless
[ -z "${EXTRA_CFG:-}" ] || cfg="$cfg"$'\n'"$EXTRA_CFG"
start_members "$bin" "$out" "$cfg"
addrs=127.0.0.1:25101,127.0.0.1:25102,127.0.0.1:25103
# Warm up once the ensemble serves (the election takes a moment).
wait_serving "$gen" "$out"
c0=$(cpu_ticks "${members[@]}")
read -r r0 w0 <<< "$(syscalls "${members[@]}")"
res=$("$gen" bench run --connect "$addrs" --workload create --conns 60 --inflight 1 --value 128 \
  --duration "${secs}s" --warmup 0s -q 2>&1)
c1=$(cpu_ticks "${members[@]}")
read -r r1 w1 <<< "$(syscalls "${members[@]}")"
ops=$(grep -oE '"ops":[0-9]+' <<< "$res" | cut -d: -f2)
rate=$(grep -oE '"ops_per_sec":[0-9.]+' <<< "$res" | cut -d: -f2)
hz=$(getconf CLK_TCK)
python3 -c "print(f'creates/s {float($rate):.0f}  members CPU us per create {($c1-$c0)*1e6/$hz/$ops:.1f}  '
  f'reads {($r1-$r0)/$ops:.2f} writes {($w1-$w0)/$ops:.2f} per create (system calls, all members)')"
