# Sourced by the probe scripts: three corral members on 127.0.0.1 (client
# ports 25101-25103, quorum 25201-25203, election 25301-25303), started and
# stopped by PID.
#
#   start_members BIN OUTDIR DURABILITY_LINE
#       writes OUTDIR/sN/zoo.cfg (with DURABILITY_LINE, e.g. forceSync=yes
#       or durability=diskless) and starts BIN server on each, appending
#       the PIDs to members; the caller's environment is passed on.
#   stop_members
#       stops them (SIGTERM, then waits up to 10 s each).
#   wait_serving GEN OUTDIR [ADDRS]
#       waits until they (or the members at ADDRS) answer creates from
#       GEN (a corral binary).
#   cpu_ticks PID..., syscalls PID...
#       the processes' CPU ticks, and their read and write system calls.

members=()

start_members() {
  local bin=$1 out=$2 durability=$3 i
  for i in 1 2 3; do
    member_cfg "$out/s$i" "$i" "$durability" 25000
    "$bin" server "$out/s$i/zoo.cfg" > "$out/s$i/server.log" 2>&1 &
    members+=($!)
  done
}

# member_cfg DIR ID DURABILITY_LINE BASE: writes DIR/zoo.cfg (and
# DIR/data/myid) for member ID of a 3-member ensemble on 127.0.0.1 with
# client ports BASE+101..103, quorum BASE+201..203, election BASE+301..303.
member_cfg() {
  local d=$1 i=$2 durability=$3 b=$4
  mkdir -p "$d/data"
  echo "$i" > "$d/data/myid"
  cat > "$d/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$d/data
maxClientCnxns=0
$durability
globalOutstandingLimit=100000
admin.enableServer=false
4lw.commands.whitelist=*
server.1=127.0.0.1:$((b+201)):$((b+301));127.0.0.1:$((b+101))
server.2=127.0.0.1:$((b+202)):$((b+302));127.0.0.1:$((b+102))
server.3=127.0.0.1:$((b+203)):$((b+303));127.0.0.1:$((b+103))
CFG
}

stop_members() {
  local p
  for p in "${members[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${members[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
}

# wait_serving GEN OUTDIR [ADDRS]: waits (up to 30 s) until the members at
# ADDRS (default the three above) answer a second of creates from GEN (a
# corral binary) without an error; fails with the last attempt's output
# otherwise.
wait_serving() {
  local gen=$1 out=$2 addrs=${3:-127.0.0.1:25101,127.0.0.1:25102,127.0.0.1:25103}
  for _ in $(seq 60); do
    if "$gen" bench run --connect "$addrs" --workload create \
      --conns 60 --inflight 1 --value 128 --duration 1s --warmup 0s -q > "$out/warmup.txt" 2>&1 &&
      ! grep -q '"error"' "$out/warmup.txt"; then
      return 0
    fi
    sleep 0.5
  done
  echo "the ensemble at $addrs did not serve within 30 s" >&2
  cat "$out/warmup.txt" >&2
  return 1
}

# cpu_ticks PID...: the processes' utime+stime summed, in clock ticks.
cpu_ticks() {
  local t=0 p
  for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
  echo "$t"
}

# syscalls PID...: the processes' read and write system calls summed
# (/proc/PID/io syscr and syscw), as "READS WRITES".
syscalls() {
  local r=0 w=0 p
  for p in "$@"; do
    r=$((r + $(awk '/^syscr/{print $2}' "/proc/$p/io")))
    w=$((w + $(awk '/^syscw/{print $2}' "/proc/$p/io")))
  done
  echo "$r $w"
}
