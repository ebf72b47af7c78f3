#!/usr/bin/env bash
# Usage: scripts/probe/snap-catchup.sh logs|tree|kv|diff BIN N
#
# A member wiped and restarted catches up by a streamed SNAP
# (docs/design/snapstream.md): starts BIN three times as `corral server`
# on 127.0.0.1 (client or API ports 24101-24103, quorum 24111-24113,
# election 24121-24123; data under a new temporary directory), loads N
# items through scripts/probe/snapload, SIGKILLs a follower, empties its
# data directory but for myid and zoo.cfg, restarts it, waits until it
# has installed the leader's snapshot and caught up, and checks what it
# holds. Prints the load, the catch-up time, the leader's peak resident
# memory meanwhile, the caught-up member's (VmHWM) and the members' stream log
# lines.
#   logs: rlog.root=/logs, snapCount=2000, N appends of 64 KiB through
#         go-zookeeper (16 in flight); every entry read back from the
#         wiped member (1.5 GiB: N=24000).
#   tree: no logs, snapCount=N/5, N znodes of 1 KiB (64 in flight);
#         the wiped member's znode count and data size against the
#         leader's (mntr) (a tree past 1 GiB: N=1100000).
#   kv:   store=kv, snapCount=2000, N rows of 4 KiB (32 in flight); the
#         others are killed in turn until the wiped member leads, then it
#         scans every row back (past 512 MiB: N=160000).
#   diff: no snapshots (snapSizeLimitInKb=0, snapCount=1000000); the
#         follower is SIGKILLed before N znodes of 1 KiB are written and
#         restarted with its disk, so the leader syncs it by DIFF (past
#         the transport's 64 MiB send queue: N=100000); prints the
#         restarted follower's sync sessions and both znode counts.
# WAIT (half-seconds, default 240) bounds the wait for the catch-up.
# KILL_LEADER_AFTER=S SIGKILLs the leader S seconds after the wiped member
# logs that its stream began (in the middle of it, for a large enough N)
# and starts it again 5 s later: the wiped member must catch up from the
# next leader.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:?usage: snap-catchup.sh logs|tree|kv|diff BIN N}
bin=${2:?usage: snap-catchup.sh logs|tree|kv|diff BIN N}
n=${3:?usage: snap-catchup.sh logs|tree|kv|diff BIN N}
d=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 1; if [ -n "${KEEP:-}" ]; then echo "kept $d"; else rm -rf "$d"; fi; }
trap cleanup EXIT
go build -o "$d/snapload" "$root/scripts/probe/snapload" || exit 1
load=$d/snapload
case $mode in
logs) extra="rlog.root=/logs"; snapcount=2000 ;;
tree) extra=""; snapcount=$(( n / 5 > 1000 ? n / 5 : 1000 )) ;;
diff) extra="snapSizeLimitInKb=0"; snapcount=1000000 ;;
kv) extra="store=kv
apiPortAddress=127.0.0.1
apiAddress.1=127.0.0.1:24101
apiAddress.2=127.0.0.1:24102
apiAddress.3=127.0.0.1:24103"; snapcount=2000 ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
for i in 1 2 3; do
  mkdir -p "$d/$i"; echo $i > "$d/$i/myid"
  {
    echo "tickTime=500"; echo "initLimit=40"; echo "syncLimit=20"
    echo "dataDir=$d/$i"; echo "clientPort=2410$i"; echo "clientPortAddress=127.0.0.1"
    echo "snapCount=$snapcount"; echo "4lw.commands.whitelist=*"
    [ "$mode" = kv ] && echo "apiPort=2410$i"
    [ -n "$extra" ] && echo "$extra"
    for j in 1 2 3; do echo "server.$j=127.0.0.1:2411$j:2412$j"; done
  } > "$d/$i/zoo.cfg"
done
start() { "$bin" server -log-level "${2:-warn}" "$d/$1/zoo.cfg" >> "$d/$1.log" 2>&1 & pids[$1]=$!; }
flw() { timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/2410$1 && echo $2 >&3 && cat <&3" 2>/dev/null; }
mode_of() { flw "$1" srvr | awk '/^Mode/ {print $2}'; }
zxid_of() { flw "$1" srvr | awk '/^Zxid/ {print $2}'; }
eps=127.0.0.1:24101,127.0.0.1:24102,127.0.0.1:24103
leader() {
  if [ "$mode" = kv ]; then "$load" kv-leader -endpoints $eps; return; fi
  for i in 1 2 3; do [ "$(mode_of $i)" = leader ] && { echo $i; return; }; done; echo 0
}
# diff: every member at info, for the leader's "sent a learner's sync paced".
lvl=warn; [ "$mode" = diff ] && lvl=info
for i in 1 2 3; do start $i $lvl; done
for _ in $(seq 1 120); do l=$(leader); [ "$l" != 0 ] && break; sleep 0.5; done
echo "leader $l"
# The highest-id follower, which wins the elections between equals.
f=3; [ "$l" = 3 ] && f=2
if [ "$mode" = diff ]; then
  echo "stop follower $f (pid ${pids[$f]}) before the load"
  kill -9 "${pids[$f]}"; sleep 1
fi
case $mode in
logs) "$load" zk-load -servers 127.0.0.1:2410$l -n "$n" -c 16 -size 65536 || exit 1 ;;
tree|diff) "$load" zk-load -servers 127.0.0.1:2410$l -n "$n" -c 64 -size 1024 || exit 1 ;;
kv) "$load" kv-load -endpoints $eps -n "$n" -c 32 -size 4096 || exit 1 ;;
esac
if [ "$mode" != diff ]; then
  echo "wipe follower $f (pid ${pids[$f]})"
  kill -9 "${pids[$f]}"; sleep 1
  find "$d/$f" -mindepth 1 -maxdepth 1 ! -name myid ! -name zoo.cfg -exec rm -rf {} +
fi
base=$(cat "$d/$f.log" 2>/dev/null | wc -l)
t0=$(date +%s); start $f info; peak=0; lpeak=0; ok=0
if [ -n "${KILL_LEADER_AFTER:-}" ]; then
  for _ in $(seq 1 600); do grep -q "receiving a streamed snapshot" "$d/$f.log" && break; sleep 0.05; done
  sleep "$KILL_LEADER_AFTER"
  echo "kill leader $l (pid ${pids[$l]}) $KILL_LEADER_AFTER s into the stream"
  kill -9 "${pids[$l]}"; old=$l; tk=$(date +%s)
  for _ in $(seq 1 120); do l=$(leader); [ "$l" != 0 ] && [ "$l" != "$old" ] && break; sleep 0.5; done
  echo "leader now $l"
  sleep $(( 5 - ($(date +%s) - tk) > 0 ? 5 - ($(date +%s) - tk) : 0 ))
  start "$old"
fi
for _ in $(seq 1 "${WAIT:-240}"); do
  r=$(awk '/VmRSS/ {print $2}' /proc/${pids[$l]}/status 2>/dev/null); [ "${r:-0}" -gt "$peak" ] && peak=$r
  r=$(awk '/VmHWM/ {print $2}' /proc/${pids[$f]}/status 2>/dev/null); [ "${r:-0}" -gt "$lpeak" ] && lpeak=$r
  if [ "$mode" = diff ] || grep -q "installed the leader's snapshot" "$d/$f.log"; then
    if [ "$mode" = kv ] || { [ "$(mode_of $f)" = follower ] && [ "$(zxid_of $f)" = "$(zxid_of $l)" ]; }; then ok=1; break; fi
  fi
  sleep 0.5
done
echo "caught up=$ok after $(( $(date +%s) - t0 )) s; leader peak RSS during the catch-up ${peak} kB; member $f's peak RSS ${lpeak} kB"
grep -h "streamed a snapshot\|a streamed snapshot\|message too large\|sync paced" "$d"/*.log | cut -c1-240 | tail -8
echo "sync sessions of member $f since its restart: $(tail -n +$((base + 1)) "$d/$f.log" | grep -c 'zab=.*state=following phase=sync')"
[ $ok = 1 ] || exit 1
case $mode in
logs) "$load" zk-check -servers 127.0.0.1:2410$f -n "$n" -size 65536 ;;
tree|diff)
  for m in $l $f; do echo "member $m: $(flw $m mntr | grep -E 'zk_znode_count|zk_approximate_data_size' | tr '\n\t' '  ')"; done ;;
kv)
  for _ in 1 2 3 4 5 6 7 8; do
    cur=$(leader); [ "$cur" = $f ] && break
    if [ "$cur" != 0 ]; then kill -9 "${pids[$cur]}"; sleep 3; start "$cur"; sleep 2; else sleep 1; fi
  done
  echo "leader now $(leader)"
  "$load" kv-check -endpoints 127.0.0.1:2410$f -n "$n" -size 4096 ;;
esac
