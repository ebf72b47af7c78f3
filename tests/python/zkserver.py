"""Server process control for the kazoo suite (the Python twin of
tests/harness): resolve the target, write zoo.cfg, start/stop/kill/restart
by PID, poll readiness with `srvr`, send four-letter words, and a TCP proxy
that can cut a client off from the server."""

import fcntl
import os
import random
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time

SUPER_DIGEST = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="  # user "super", password "test"
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


class TargetError(Exception):
    """A prerequisite of the chosen target is missing."""


class Target:
    def __init__(self, kind, corral_bin=None, java=None, classpath=None):
        self.kind = kind
        self.corral_bin = corral_bin
        self.java = java
        self.classpath = classpath


def _which(name):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def resolve_target(root, bindir):
    kind = os.environ.get("CORRAL_E2E_TARGET", "").strip() or "corral"
    if kind == "corral":
        binary = os.environ.get("CORRAL_BIN")
        if binary:
            if not os.path.isfile(binary):
                raise TargetError("CORRAL_BIN=%s does not exist" % binary)
            return Target(kind, corral_bin=binary)
        go = _which("go")
        if go is None:
            raise TargetError("CORRAL_BIN is unset and go is not installed")
        binary = os.path.join(bindir, "corral")
        r = subprocess.run([go, "build", "-o", binary, "./cmd/corral"], cwd=root,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise TargetError("go build ./cmd/corral failed:\n" + r.stdout + r.stderr)
        return Target(kind, corral_bin=binary)
    if kind == "zookeeper":
        java = _which("java")
        if java is None:
            raise TargetError("java not found")
        r = subprocess.run(["bash", os.path.join(root, "tests", "zookeeper-classpath.sh")],
                           cwd=root, capture_output=True, text=True)
        lines = r.stdout.strip().splitlines()
        if r.returncode != 0 or not lines:
            raise TargetError("tests/zookeeper-classpath.sh failed:\n" + r.stderr)
        return Target(kind, java=java, classpath=lines[-1].strip())
    # An unknown target is a typo: fail, never skip.
    raise ValueError("CORRAL_E2E_TARGET=%r: want 'corral' or 'zookeeper'" % kind)


# Ports are picked as the Go harness's internal/testport picks them: at
# random below the kernel's ephemeral range, where no outgoing connection
# or port-0 listen takes one meanwhile; bound once to check it is free;
# claimed with an exclusive flock on the same per-port file under the
# temporary directory, held while this process lives, so no two live test
# processes (Go or Python) get one port; and never handed out twice here.
# (Asking the kernel for port 0 and closing could return one port twice:
# a zoo.cfg with server.2's election port equal to server.3's client port
# failed four reconfig tests once.)
_PORT_LOW = 20000
_handed_out = {}  # port -> the lock file held for it
_LOCK_DIR = os.path.join(tempfile.gettempdir(), "corral-testport")


def _ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            first = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768
    return first if _PORT_LOW + 1000 < first < 32768 else 32768


_PORT_HIGH = _ephemeral_start()


def _claim(port):
    """An exclusive flock on the port's lock file: the file (held while
    this process lives), None where locking does not work (the port is
    then taken unlocked), or False if another process holds it."""
    try:
        os.makedirs(_LOCK_DIR, exist_ok=True)
        f = open(os.path.join(_LOCK_DIR, str(port)), "a+")
    except OSError:
        return None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return False
    except OSError:
        f.close()
        return None
    return f


def _take(port):
    if port in _handed_out:
        return False
    lock = _claim(port)
    if lock is False:
        return False
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        if lock:
            lock.close()
        return False
    finally:
        s.close()
    _handed_out[port] = lock
    return True


def free_ports(n):
    """n distinct loopback ports, free a moment ago, none handed out before
    by this process nor held by another test process."""
    ports = []
    for _ in range(1000 + n):
        if len(ports) == n:
            return ports
        port = random.randrange(_PORT_LOW, _PORT_HIGH)
        if _take(port):
            ports.append(port)
    raise RuntimeError("no %d free loopback ports in [%d, %d)" % (n, _PORT_LOW, _PORT_HIGH))


def free_port():
    return free_ports(1)[0]


def four_letter(addr, word, timeout=10.0):
    """Send a four-letter word on a new connection and read to EOF."""
    if isinstance(word, str):
        word = word.encode()
    with socket.create_connection(addr, timeout=timeout) as s:
        s.sendall(word)
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode("utf-8", "replace")


LOGBACK = """<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="OUT"/></root>
</configuration>
"""


class ServerProcess:
    """One server on a fixed loopback port and data directory."""

    def __init__(self, target, workdir, max_client_cnxns=0, container_interval_ms=1000,
                 port=None, myid=None, extra=()):
        self.target = target
        self.dir = workdir
        self.data_dir = os.path.join(workdir, "data")
        self.cfg_path = os.path.join(workdir, "zoo.cfg")
        self.log_path = os.path.join(workdir, "server.log")
        self.port = port or free_port()
        self.container_interval_ms = container_interval_ms
        self.proc = None
        os.makedirs(self.data_dir, exist_ok=True)
        with open(self.cfg_path, "w") as f:
            f.write("\n".join([
                "tickTime=2000",
                "dataDir=" + self.data_dir,
                "clientPort=%d" % self.port,
                "clientPortAddress=127.0.0.1",
                "4lw.commands.whitelist=*",
                "extendedTypesEnabled=true",
                "znode.container.checkIntervalMs=%d" % container_interval_ms,
                "DigestAuthenticationProvider.superDigest=" + SUPER_DIGEST,
                "maxClientCnxns=%d" % max_client_cnxns,
                "admin.enableServer=false",
            ] + list(extra)) + "\n")
        if myid is not None:
            with open(os.path.join(self.data_dir, "myid"), "w") as f:
                f.write("%d\n" % myid)
        if target.kind == "zookeeper":
            with open(os.path.join(workdir, "logback.xml"), "w") as f:
                f.write(LOGBACK)

    @property
    def addr(self):
        return ("127.0.0.1", self.port)

    @property
    def hosts(self):
        return "127.0.0.1:%d" % self.port

    def _command(self):
        if self.target.kind == "zookeeper":
            return [self.target.java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-Dlogback.configurationFile=" + os.path.join(self.dir, "logback.xml"),
                    # znode.container.checkIntervalMs is read only as a system
                    # property (no "zookeeper." prefix); the rest are passed as
                    # -D too so the reference run never depends on zoo.cfg parsing.
                    "-Dzookeeper.extendedTypesEnabled=true",
                    "-Dzookeeper.DigestAuthenticationProvider.superDigest=" + SUPER_DIGEST,
                    "-Dznode.container.checkIntervalMs=%d" % self.container_interval_ms,
                    "-Dzookeeper.4lw.commands.whitelist=*",
                    "-Dzookeeper.admin.enableServer=false",
                    "-cp", self.target.classpath,
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain", self.cfg_path]
        return [self.target.corral_bin, "server", self.cfg_path]

    def start(self):
        self.launch()
        self._wait_ready()

    def launch(self):
        """Start the process without waiting for it to serve (an ensemble
        member serves once a quorum of its peers runs)."""
        if self.running():
            raise RuntimeError("server already running")
        log = open(self.log_path, "ab")
        log.write(("==== start of %s at %s ====\n" % (self.target.kind, time.ctime())).encode())
        log.flush()
        self.proc = subprocess.Popen(self._command(), cwd=self.dir, stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited during start-up (code %s)\n%s"
                                   % (self.target.kind, self.proc.returncode, self.log_tail(100)))
            try:
                out = four_letter(self.addr, "srvr", timeout=1.0)
                if "\nMode: " in out:
                    return
                last = out.strip()
            except OSError as e:
                last = str(e)
            time.sleep(0.1)
        raise RuntimeError("%s not serving on %s after %ss (last srvr: %s)\n%s"
                           % (self.target.kind, self.hosts, READY_TIMEOUT, last, self.log_tail(100)))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def _signal(self, sig):
        # By PID, never by name.
        try:
            os.kill(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self):
        """SIGTERM and wait (SIGKILL after a grace period)."""
        if not self.running():
            return
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait()

    def kill(self):
        if not self.running():
            return
        self._signal(signal.SIGKILL)
        self.proc.wait()

    def restart(self):
        self.stop()
        self.start()

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self._signal(signal.SIGKILL)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass

    def four_letter(self, word):
        return four_letter(self.addr, word)

    def log_tail(self, n):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError as e:
            return "(no log: %s)" % e
        return "\n".join(lines[-n:])


def start_ensemble(target, workdirs, extra=()):
    """Start one server per work directory as a replicated ensemble (myid
    1, 2, ...), with extra zoo.cfg lines for every member, and wait until
    every member serves."""
    n = len(workdirs)
    ports = free_ports(3 * n)
    clients = ports[:n]
    peers = [(ports[n + 2 * i], ports[n + 2 * i + 1]) for i in range(n)]
    lines = ["initLimit=10", "syncLimit=5"] + list(extra)
    for i in range(n):
        lines.append("server.%d=127.0.0.1:%d:%d:participant;127.0.0.1:%d"
                     % (i + 1, peers[i][0], peers[i][1], clients[i]))
    servers = [ServerProcess(target, d, port=clients[i], myid=i + 1, extra=lines)
               for i, d in enumerate(workdirs)]
    try:
        for s in servers:
            s.launch()
        for s in servers:
            s._wait_ready()
    except Exception:
        for s in servers:
            s.close()
        raise
    return servers


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a server. cut() drops every forwarded
    connection and holds new ones open without forwarding anything, so a
    client sees a silent network; heal() forwards again."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.cut_off = False
        self.socks = []
        self.closed = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def hosts(self):
        return "127.0.0.1:%d" % self.port

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                held = self.cut_off
                self.socks.append(client)
            if held:
                continue  # accepted, never forwarded
            try:
                up = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.socks.append(up)
            threading.Thread(target=self._pump, args=(client, up), daemon=True).start()

    def _pump(self, a, b):
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 0.5)
                if self.closed:
                    break
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("eof")
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):
            # OSError: a side hung up; ValueError: cut() or close() closed
            # a socket under select (its descriptor is now -1).
            pass
        finally:
            a.close()
            b.close()

    def _drop_all(self):
        with self.lock:
            socks, self.socks = self.socks, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def cut(self):
        with self.lock:
            self.cut_off = True
        self._drop_all()

    def heal(self):
        with self.lock:
            self.cut_off = False
        self._drop_all()

    def close(self):
        self.closed = True
        self.listener.close()
        self._drop_all()
