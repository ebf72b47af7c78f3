#!/usr/bin/env bash
# Usage: scripts/probe/member-memory.sh SECONDS [PATTERN]
#
# Samples, once a second for SECONDS, the memory makeup of every running
# `corral server` whose command line matches PATTERN (default "tree/s",
# the Fig. 5.3/5.4 ensembles of `corral bench durability`): threads,
# mappings, page-table size (VmPTE) and smaps_rollup's resident, anonymous
# and huge-page figures in MiB. Run it beside a benchmark and match its
# lines to the bench's "killing server ... pid=" lines by PID. It only
# reads /proc; it starts and stops nothing.
set -euo pipefail
secs=${1:?usage: member-memory.sh SECONDS [PATTERN]}
pat=${2:-tree/s}
end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt "$end" ]; do
  for p in $(pgrep -f "corral server" || true); do
    cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null) || continue
    case "$cmd" in *"$pat"*) ;; *) continue ;; esac
    cfg=$(grep -oE '[^ /]+/s[0-9]+/zoo\.cfg' <<<"$cmd" | head -1)
    mem=$(grep -E '^(Rss|Anonymous|AnonHugePages):' "/proc/$p/smaps_rollup" 2>/dev/null |
      awk '{printf "%s%d ", $1, $2/1024}') || continue
    th=$(ls "/proc/$p/task" 2>/dev/null | wc -l)
    maps=$(wc -l < "/proc/$p/maps" 2>/dev/null || echo 0)
    pte=$(awk '/^VmPTE/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    echo "$(date +%T) pid=$p $cfg threads=$th maps=$maps pte_kB=$pte $mem"
  done
  sleep 1
done
