#!/usr/bin/env bash
# Usage: [GOGC=N] scripts/probe/heap.sh BIN
#
# The members' heaps after a tree is grown: starts BIN three times on
# 127.0.0.1 (ports as members.sh; each with --pprof on 127.0.0.1:2606N),
# runs 6 s of pipelined creates (16 connections x 64 in flight, 128-byte
# values) on a diskless ensemble, and prints each member's VmRSS and the
# runtime's HeapAlloc, HeapInuse, NextGC and NumGC
# (/debug/pprof/heap?debug=1), then the bytes each member allocated per
# create during the 6 s (from two /debug/pprof/allocs profiles, `go tool
# pprof -base`). GOGC=100 turns the server's GC headroom
# (internal/gcpace) off. corral only: no ZooKeeper in this probe.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: heap.sh BIN}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
gen="$root/bin/corral"
out=$(mktemp -d /tmp/corral-heap-XXXXXX)
# shellcheck source=members.sh
. "$root/scripts/probe/members.sh"
trap 'stop_members; rm -rf "$out"' EXIT
cat > "$out/with-pprof.sh" <<W
#!/usr/bin/env bash
# \$1 is "server", \$2 the member's zoo.cfg (.../sN/zoo.cfg)
i=\$(basename "\$(dirname "\$2")" | tr -d s)
exec "$bin" server --pprof "127.0.0.1:2606\$i" "\$2"
W
chmod +x "$out/with-pprof.sh"
start_members "$out/with-pprof.sh" "$out" "durability=diskless"
addrs=127.0.0.1:25101,127.0.0.1:25102,127.0.0.1:25103
wait_serving "$gen" "$out"
for i in 1 2 3; do curl -s "http://127.0.0.1:2606$i/debug/pprof/allocs" -o "$out/a0-$i.pb.gz"; done
ops=$("$gen" bench run --connect "$addrs" --workload create --conns 16 --inflight 64 --value 128 \
  --duration 6s --warmup 0s -q | grep -oE '"ops":[0-9]+' | cut -d: -f2)
echo "creates $ops"
for i in 1 2 3; do curl -s "http://127.0.0.1:2606$i/debug/pprof/allocs" -o "$out/a1-$i.pb.gz"; done
sleep 1
for i in 1 2 3; do
  p=${members[$((i-1))]}
  stats=$(curl -s "http://127.0.0.1:2606$i/debug/pprof/heap?debug=1" |
    grep -E '^# (HeapAlloc|HeapInuse|NextGC|NumGC) =' | sed 's/^# //' | tr '\n' ' ')
  total=$(go tool pprof -sample_index=alloc_space -top -base "$out/a0-$i.pb.gz" "$out/a1-$i.pb.gz" 2>/dev/null |
    grep -oE 'of [0-9.]+[kMG]?B total' | head -1 | cut -d" " -f2)
  echo "s$i $(grep VmRSS "/proc/$p/status" | tr -s ' \t' ' ') $stats allocated during the creates $total"
done
