#!/usr/bin/env bash
# zkServer.sh for corral: Apache ZooKeeper's launcher, same commands,
# variables and files, starting `corral server` instead of a JVM.
#
#   zkServer.sh [--config <conf-dir>] {start|start-foreground|stop|restart|status|print-cmd|version} [zoo.cfg]
#
# As ZooKeeper's (bin/zkServer.sh and bin/zkEnv.sh of 3.9):
#   ZOOCFGDIR   the configuration directory (default ../conf beside this
#               script, else ../etc/zookeeper); --config <dir> sets it
#   ZOOCFG      the file in it (default zoo.cfg); a second argument names
#               another (relative to ZOOCFGDIR, or a path)
#   zookeeper-env.sh and java.env in ZOOCFGDIR are sourced if present
#   ZOO_LOG_DIR the log directory (default ../logs); the server's output
#               goes to zookeeper-$USER-server-$HOSTNAME.out there
#   ZOOPIDFILE  the pid file (default dataDir/zookeeper_server.pid)
#   ZOO_DATADIR_AUTOCREATE_DISABLE  refuse to start without dataDir/version-2
#   SERVER_JVMFLAGS, JVMFLAGS
#               every -Dkey=value in them is passed to corral as
#               `-D key=value`: zookeeper.* system properties configure the
#               server as they configure ZooKeeper (a key set in zoo.cfg
#               wins, as in ZooKeeper); other JVM flags are ignored
# corral's own:
#   CORRAL_BIN  the corral binary (default: corral beside this script, else
#               on PATH)
#   ZOO_STOP_TIMEOUT  seconds stop waits for the server to exit (default 30)

ZOOBIN="${BASH_SOURCE-$0}"
ZOOBIN="$(dirname "${ZOOBIN}")"
ZOOBINDIR="$(cd "${ZOOBIN}" && pwd)"
ZOOKEEPER_PREFIX="${ZOOBINDIR}/.."
_ZOOCFG_ARG="$ZOOCFG" # as given, for restart's child invocations

if [ $# -gt 1 ] && [ "--config" = "$1" ]; then
  shift
  ZOOCFGDIR=$1
  shift
fi
if [ "x$ZOOCFGDIR" = "x" ]; then
  if [ -e "${ZOOKEEPER_PREFIX}/conf" ]; then
    ZOOCFGDIR="$ZOOBINDIR/../conf"
  else
    ZOOCFGDIR="$ZOOBINDIR/../etc/zookeeper"
  fi
fi
if [ -f "${ZOOCFGDIR}/zookeeper-env.sh" ]; then
  . "${ZOOCFGDIR}/zookeeper-env.sh"
fi
if [ "x$ZOOCFG" = "x" ]; then
  ZOOCFG="zoo.cfg"
fi
ZOOCFG="$ZOOCFGDIR/$ZOOCFG"
if [ -f "$ZOOCFGDIR/java.env" ]; then
  . "$ZOOCFGDIR/java.env"
fi
if [ "x${ZOO_LOG_DIR}" = "x" ]; then
  ZOO_LOG_DIR="$ZOOKEEPER_PREFIX/logs"
fi
export ZOO_LOG_DIR # corral puts the audit log there by default

if [ -z "$CORRAL_BIN" ]; then
  if [ -x "$ZOOBINDIR/corral" ]; then
    CORRAL_BIN="$ZOOBINDIR/corral"
  elif command -v corral > /dev/null 2>&1; then
    CORRAL_BIN="$(command -v corral)"
  else
    echo "Error: corral not found beside $0 or on PATH; set CORRAL_BIN." 1>&2
    exit 1
  fi
fi

if [ "x$SERVER_JVMFLAGS" != "x" ]; then
  JVMFLAGS="$SERVER_JVMFLAGS $JVMFLAGS"
fi

if [ "x$2" != "x" ]; then
  ZOOCFG="$ZOOCFGDIR/$2"
fi
# if we give a more complicated path to the config, don't screw around in $ZOOCFGDIR
if [ "x$(dirname "$ZOOCFG")" != "x$ZOOCFGDIR" ]; then
  ZOOCFG="$2"
fi
echo "Using config: $ZOOCFG" >&2

# The system properties of JVMFLAGS, word-split as the JVM's command line
# would be: -Dkey=value becomes -D key=value; a bare -Dkey is key=true
# (how Boolean.getBoolean reads it).
SYSPROPS=()
for flag in $JVMFLAGS; do
  case "$flag" in
  -D?*=*) SYSPROPS+=(-D "${flag#-D}") ;;
  -D?*) SYSPROPS+=(-D "${flag#-D}=true") ;;
  esac
done

ZOO_DATADIR="$(grep "^[[:space:]]*dataDir" "$ZOOCFG" | sed -e 's/.*=//')"
ZOO_DATADIR="$(echo -e "${ZOO_DATADIR}" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')"

ZOO_DATALOGDIR="$(grep "^[[:space:]]*dataLogDir" "$ZOOCFG" | sed -e 's/.*=//')"
if [ -n "$ZOO_DATADIR_AUTOCREATE_DISABLE" ]; then
  if [ ! -d "$ZOO_DATADIR/version-2" ]; then
    echo "ZooKeeper data directory is missing at $ZOO_DATADIR fix the path or run initialize"
    exit 1
  fi
  if [ -n "$ZOO_DATALOGDIR" ] && [ ! -d "$ZOO_DATALOGDIR/version-2" ]; then
    echo "ZooKeeper txnlog directory is missing at $ZOO_DATALOGDIR fix the path or run initialize"
    exit 1
  fi
fi

if [ -z "$ZOOPIDFILE" ]; then
  if [ ! -d "$ZOO_DATADIR" ]; then
    mkdir -p "$ZOO_DATADIR"
  fi
  ZOOPIDFILE="$ZOO_DATADIR/zookeeper_server.pid"
else
  # ensure it exists, otw stop will fail
  mkdir -p "$(dirname "$ZOOPIDFILE")"
fi

if [ ! -w "$ZOO_LOG_DIR" ]; then
  mkdir -p "$ZOO_LOG_DIR"
fi
ZOO_LOG_FILE=${ZOO_LOG_FILE:-zookeeper-$USER-server-$HOSTNAME.log}
_ZOO_DAEMON_OUT="$ZOO_LOG_DIR/zookeeper-$USER-server-$HOSTNAME.out"

ZOO_CMD=("$CORRAL_BIN" server "${SYSPROPS[@]}" "$ZOOCFG")

# srvr asks the server for srvr and prints its Mode line (FourLetterWordMain
# in ZooKeeper's script).
srvr() {
  local host=$1 port=$2
  (
    exec 3<> "/dev/tcp/$host/$port" || exit 1
    printf srvr >&3
    timeout 10 cat <&3
  ) 2> /dev/null | grep Mode
}

case $1 in
start)
  echo -n "Starting zookeeper ... "
  if [ -f "$ZOOPIDFILE" ]; then
    if kill -0 "$(cat "$ZOOPIDFILE")" > /dev/null 2>&1; then
      echo zookeeper already running as process "$(cat "$ZOOPIDFILE")".
      exit 1
    fi
  fi
  nohup "${ZOO_CMD[@]}" > "$_ZOO_DAEMON_OUT" 2>&1 < /dev/null &
  if [ $? -eq 0 ]; then
    if /bin/echo -n $! > "$ZOOPIDFILE"; then
      sleep 1
      pid=$(cat "${ZOOPIDFILE}")
      if ps -p "${pid}" > /dev/null 2>&1; then
        echo STARTED
      else
        echo FAILED TO START
        exit 1
      fi
    else
      echo FAILED TO WRITE PID
      exit 1
    fi
  else
    echo SERVER DID NOT START
    exit 1
  fi
  ;;
start-foreground)
  if [ "${ZOO_NOEXEC}" != "" ]; then
    "${ZOO_CMD[@]}"
  else
    exec "${ZOO_CMD[@]}"
  fi
  ;;
print-cmd)
  printf '%q ' "${ZOO_CMD[@]}"
  echo "> \"$_ZOO_DAEMON_OUT\" 2>&1 < /dev/null"
  ;;
stop)
  echo -n "Stopping zookeeper ... "
  if [ ! -f "$ZOOPIDFILE" ]; then
    echo "no zookeeper to stop (could not find file $ZOOPIDFILE)"
  else
    pid=$(cat "$ZOOPIDFILE")
    kill "$pid"
    rm "$ZOOPIDFILE"
    # ZooKeeper's script sleeps a second and does not wait; corral writes
    # its final state on SIGTERM, so wait for the exit (bounded).
    waited=0
    while kill -0 "$pid" > /dev/null 2>&1 && [ "$waited" -lt "${ZOO_STOP_TIMEOUT:-30}" ]; do
      sleep 1
      waited=$((waited + 1))
    done
    echo STOPPED
  fi
  exit 0
  ;;
version)
  "$CORRAL_BIN" version
  ;;
restart)
  shift
  ZOOCFGDIR="$ZOOCFGDIR" ZOOCFG="$_ZOOCFG_ARG" "$0" stop "${@}"
  sleep 3
  ZOOCFGDIR="$ZOOCFGDIR" ZOOCFG="$_ZOOCFG_ARG" "$0" start "${@}"
  ;;
status)
  clientPortAddress=$(grep "^[[:space:]]*clientPortAddress[^[:alpha:]]" "$ZOOCFG" | sed -e 's/.*=//')
  if ! [ "$clientPortAddress" ]; then
    clientPortAddress="localhost"
  fi
  clientPort=$(grep "^[[:space:]]*clientPort[^[:alpha:]]" "$ZOOCFG" | sed -e 's/.*=//')
  if ! [[ "$clientPort" =~ ^[0-9]+$ ]]; then
    dataDir=$(grep "^[[:space:]]*dataDir" "$ZOOCFG" | sed -e 's/.*=//')
    myid=$(cat "$dataDir/myid" 2> /dev/null)
    if ! [[ "$myid" =~ ^[0-9]+$ ]]; then
      echo "myid could not be determined, will not able to locate clientPort in the server configs."
    else
      clientPortAndAddress=$(grep "^[[:space:]]*server.$myid=.*;.*" "$ZOOCFG" | sed -e 's/.*=//' | sed -e 's/.*;//')
      if [ ! "$clientPortAndAddress" ]; then
        echo "Client port not found in static config file. Looking in dynamic config file."
        dynamicConfigFile=$(grep "^[[:space:]]*dynamicConfigFile" "$ZOOCFG" | sed -e 's/.*=//')
        clientPortAndAddress=$(grep "^[[:space:]]*server.$myid=.*;.*" "$dynamicConfigFile" | sed -e 's/.*=//' | sed -e 's/.*;//')
      fi
      if [ ! "$clientPortAndAddress" ]; then
        echo "Client port not found in the server configs"
      else
        if [[ "$clientPortAndAddress" =~ ^.*:[0-9]+ ]]; then
          if [[ "$clientPortAndAddress" =~ \[.*\]:[0-9]+ ]]; then
            clientPortAddress=$(echo "$clientPortAndAddress" | sed -e 's|\[||' | sed -e 's|\]:.*||')
          else
            clientPortAddress=$(echo "$clientPortAndAddress" | sed -e 's/:.*//')
          fi
        fi
        clientPort=$(echo "$clientPortAndAddress" | sed -e 's/.*://')
      fi
    fi
  fi
  if [ ! "$clientPort" ]; then
    echo "Unable to find a client port in any configs. Terminating."
    exit 1
  fi
  echo "Client port found: $clientPort. Client address: $clientPortAddress. Client SSL: false."
  STAT=$(srvr "$clientPortAddress" "$clientPort")
  if [ "x$STAT" = "x" ]; then
    echo "Error contacting service. It is probably not running."
    exit 1
  else
    echo $STAT
    exit 0
  fi
  ;;
*)
  echo "Usage: $0 [--config <conf-dir>] {start|start-foreground|stop|version|restart|status|print-cmd}" >&2
  ;;
esac
