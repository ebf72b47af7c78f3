#!/usr/bin/env bash
# Usage: scripts/probe/disk-full.sh tree|kv|logs BIN [SIZE]
#
# Every member's disk fills (needs root: each member's dataDir is a tmpfs
# of SIZE, default 150m for tree, 200m for kv, 300m for logs). Starts BIN
# three times as `corral server` on 127.0.0.1 (client ports 24201-24203,
# quorum 24211-24213, election 24221-24223, kv API 24301-24303; data
# under a new temporary directory), loads until every member has exited
# on its full disk, then:
#   1. starts them again on the same full disks: they must elect a leader
#      and serve every acknowledged write from each member (as ZooKeeper
#      restarts on a full disk and serves reads until a write needs a new
#      log file);
#   2. remounts the disks four times larger, loads more, and checks
#      every write on every member again.
#   tree: 1 KiB znodes /df/kN through go-zookeeper (scripts/probe/diskfull),
#         the acknowledged ones listed and checked;
#   kv:   store=kv, rows of 4 KiB (scripts/probe/snapload), scanned through
#         the leader;
#   logs: rlog.root=/logs, 64 KiB appends under /logs/a (snapload).
# Stops the members by PID, unmounts and removes its directory at exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:?usage: disk-full.sh tree|kv|logs BIN [SIZE]}
bin=${2:?usage: disk-full.sh tree|kv|logs BIN [SIZE]}
case $mode in
tree) size=${3:-150m} ;; kv) size=${3:-200m} ;; logs) size=${3:-300m} ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "disk-full.sh: needs root (mounts a tmpfs per member)" >&2; exit 2; }
d=$(mktemp -d)
pids=(0 0 0 0)
cleanup() {
  for i in 1 2 3; do [ "${pids[$i]}" != 0 ] && kill "${pids[$i]}" 2>/dev/null; done
  sleep 1
  for i in 1 2 3; do umount "$d/$i" 2>/dev/null; done
  rm -rf "$d"
}
trap cleanup EXIT
go build -o "$d/diskfull" "$root/scripts/probe/diskfull" || exit 1
go build -o "$d/snapload" "$root/scripts/probe/snapload" || exit 1
for i in 1 2 3; do
  mkdir -p "$d/$i" && mount -t tmpfs -o "size=$size" tmpfs "$d/$i" || exit 1
  echo $i > "$d/$i/myid"
  {
    echo "tickTime=500"; echo "initLimit=40"; echo "syncLimit=20"
    echo "dataDir=$d/$i"; echo "clientPort=2420$i"; echo "clientPortAddress=127.0.0.1"
    echo "4lw.commands.whitelist=*"; echo "admin.enableServer=false"
    case $mode in
    kv) echo "snapCount=2000"; echo "store=kv"; echo "apiPort=2430$i"; echo "apiPortAddress=127.0.0.1"
        for j in 1 2 3; do echo "apiAddress.$j=127.0.0.1:2430$j"; done ;;
    logs) echo "snapCount=2000"; echo "rlog.root=/logs" ;;
    esac
    for j in 1 2 3; do echo "server.$j=127.0.0.1:2421$j:2422$j"; done
  } > "$d/zoo$i.cfg"
done
start() { "$bin" server -log-level info "$d/zoo$1.cfg" >> "$d/m$1.log" 2>&1 & pids[$1]=$!; }
alive() { local n=0; for i in 1 2 3; do kill -0 "${pids[$i]}" 2>/dev/null && n=$((n+1)); done; echo $n; }
flw() { timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/2420$1 && echo $2 >&3 && cat <&3" 2>/dev/null; }
leader() {
  if [ "$mode" = kv ]; then "$d/snapload" kv-leader -endpoints 127.0.0.1:24301,127.0.0.1:24302,127.0.0.1:24303; return; fi
  for i in 1 2 3; do [ "$(flw $i srvr | awk '/^Mode/ {print $2}')" = leader ] && { echo $i; return; }; done; echo 0
}
await_leader() { for _ in $(seq 1 60); do l=$(leader); [ "$l" != 0 ] && return; sleep 0.5; done; echo "no leader" >&2; exit 1; }
servers=127.0.0.1:24201,127.0.0.1:24202,127.0.0.1:24203
# load BASE N: writes until the members stop (or N items); check N: every member.
load() {
  case $mode in
  tree) timeout 300 "$d/diskfull" load -servers $servers -dur "${3:-60s}" -c 16 -base "$1" -acked "$d/acked.$1" | tail -1 ;;
  kv) timeout 120 "$d/snapload" kv-load -endpoints "127.0.0.1:2430$l" -n "$2" -size 4096 -c 16 2>&1 | tail -1 ;;
  logs) timeout 120 "$d/snapload" zk-load -servers "127.0.0.1:2420$l" -n "$2" -size 65536 -c 16 -base "$1" 2>&1 | tail -1 ;;
  esac
}
check() {
  local bad=0
  for i in 1 2 3; do
    case $mode in
    tree) cat "$d"/acked.* > "$d/acked"; out=$("$d/diskfull" check -server "127.0.0.1:2420$i" -acked "$d/acked" 2>&1 | tail -1) || bad=1 ;;
    kv) # reads are the leader's: one scan through it
        [ $i = 1 ] || continue
        out=$("$d/snapload" kv-check -endpoints "127.0.0.1:2430$l" -n "$1" -size 4096 2>&1 | tail -1)
        echo "$out" | grep -q " 0 bad" || bad=1; i="$l (leader)" ;;
    logs) out=$("$d/snapload" zk-check -servers "127.0.0.1:2420$i" -n "$1" -size 65536 2>&1 | tail -1)
        echo "$out" | grep -q " 0 bad" || bad=1 ;;
    esac
    echo "  member $i: $out"
  done
  return $bad
}
for i in 1 2 3; do start $i; done
await_leader
echo "filling the disks ($mode, $size each); leader $l"
load 0 1000000 600s
for _ in $(seq 1 20); do [ "$(alive)" = 0 ] && break; sleep 0.5; done
echo "members alive after the load: $(alive)"
for i in 1 2 3; do grep -m1 -E 'exiting|kv member stopped' "$d/m$i.log" | cut -c1-220; done
df -h "$d"/1 "$d"/2 "$d"/3 | tail -3
for i in 1 2 3; do kill "${pids[$i]}" 2>/dev/null; done; sleep 1
echo "1. restart on the full disks"
for i in 1 2 3; do start $i; done
await_leader
sleep 2
echo "members alive: $(alive), leader $l"
case $mode in
tree) n=0 ;;
kv) n=$("$d/snapload" kv-check -endpoints "127.0.0.1:2430$l" -n 0 -size 4096 2>&1 | grep -o '^snapload: [0-9]*' | grep -o '[0-9]*') ;;
logs) n=$("$d/snapload" zk-check -servers "127.0.0.1:2420$l" -n 0 -size 65536 2>&1 | grep -o '^snapload: [0-9]*' | grep -o '[0-9]*') ;;
esac
ok=1
check "$n" || ok=0
echo "2. disks remounted larger, more writes"
for i in 1 2 3; do kill "${pids[$i]}" 2>/dev/null; done; sleep 1
big=$(( ${size%m} * 4 ))m
for i in 1 2 3; do mount -o "remount,size=$big" "$d/$i"; start $i; done
await_leader
case $mode in
tree) load 100000000 0 10s ;;
kv) load 0 $((n + 5000)); n=$((n + 5000)) ;;
logs) load "$n" 1000; n=$((n + 1000)) ;;
esac
check "$n" || ok=0
echo "members alive: $(alive)"
[ $ok = 1 ] && echo "PASS" || { echo "FAIL"; exit 1; }
