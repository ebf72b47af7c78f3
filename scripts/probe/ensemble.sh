#!/usr/bin/env bash
# Usage: scripts/probe/ensemble.sh [OUTDIR]
#
# Where a sequential create's time goes on a 3-server sync ensemble: builds
# corral with the probe build tag, starts three members on 127.0.0.1 (client
# ports 25101-25103, quorum 25201-25203, election 25301-25303; one dataDir
# each under OUTDIR), runs `corral bench run --workload seqcreate` for 3 s
# against a follower, stops the members by PID (each writes its marks when
# it stops) and prints scripts/probe/timeline.py's per-stage medians.
# OUTDIR (default: a new temporary directory) keeps the marks, the members'
# logs and the load generator's output. Corral only: a breakdown, not a
# comparison with ZooKeeper (that is `corral bench compare --servers 3`).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d /tmp/corral-probe-XXXXXX)}
mkdir -p "$out"
bin="$out/corral-probe"
(cd "$root" && go build -tags probe -o "$bin" ./cmd/corral && go build -o "$out/corral" ./cmd/corral && go build -o "$out/corral-bench" ./cmd/corral-bench)

# shellcheck source=members.sh
. "$root/scripts/probe/members.sh"
trap stop_members EXIT
CORRAL_PROBE_DIR="$out" start_members "$bin" "$out" forceSync=yes

# srvr's Mode line of the member on client port $1 ("" while it has none).
mode() {
  { exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && sed -n 's/^Mode: //p' <&3; exec 3>&-; } 2>/dev/null || true
}
follower="" leader=""
for _ in $(seq 300); do
  follower="" leader=""
  for i in 1 2 3; do
    case "$(mode 2510$i)" in
      leader) leader=$i ;;
      follower) [ -z "$follower" ] && follower=$i ;;
    esac
  done
  [ -n "$leader" ] && [ -n "$follower" ] && break
  sleep 0.1
done
[ -n "$leader" ] && [ -n "$follower" ] || { echo "no leader and follower within 30 s; logs in $out" >&2; exit 1; }

"$out/corral" bench run --connect "127.0.0.1:2510$follower" --workload seqcreate --duration 3s --warmup 1s -q > "$out/bench.txt" 2>&1
grep -E '^\| seqcreate \| p(50|99) ' "$out/bench.txt" || cat "$out/bench.txt"
stop_members
trap - EXIT

args=()
for i in 1 2 3; do
  p=${members[$((i-1))]}
  if [ "$i" = "$follower" ]; then lab=C$i; elif [ "$i" = "$leader" ]; then lab=L$i; else lab=F$i; fi
  args+=("$lab=$out/probe-$p.txt")
done
python3 "$root/scripts/probe/timeline.py" c-write-rx "${args[@]}"
python3 "$root/scripts/probe/timeline.py" --flushes "L$leader" c-write-rx "${args[@]}"
echo "marks, logs and load output in $out"
