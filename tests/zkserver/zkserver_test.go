// Package zkserver tests scripts/zkServer.sh: ZooKeeper's launcher
// commands, variables and pid file, starting corral, with -D system
// properties from SERVER_JVMFLAGS configuring it.
package zkserver

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	target := os.Getenv(harness.EnvTarget)
	os.Setenv(harness.EnvTarget, string(harness.Corral))
	var cleanup func()
	env, cleanup = harness.NewEnv()
	os.Setenv(harness.EnvTarget, target)
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// install lays out a ZooKeeper-style installation: bin/zkServer.sh and
// bin/corral, conf/zoo.cfg, logs/.
type install struct {
	t                   *testing.T
	root, dataDir, port string
	env                 []string
}

func newInstall(t *testing.T) *install {
	t.Helper()
	if env.CorralBin() == "" {
		t.Skip("no corral binary")
	}
	root := t.TempDir()
	for _, d := range []string{"bin", "conf", "data"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	script, err := os.ReadFile(filepath.Join(env.Root, "scripts", "zkServer.sh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "bin", "zkServer.sh"), script, 0o755)
	if err := os.Symlink(env.CorralBin(), filepath.Join(root, "bin", "corral")); err != nil {
		t.Fatal(err)
	}
	in := &install{t: t, root: root, dataDir: filepath.Join(root, "data"), port: strconv.Itoa(testport.Free(t))}
	in.writeCfg("zoo.cfg", in.port)
	in.env = append(os.Environ(), "ZOO_STOP_TIMEOUT=30")
	t.Cleanup(in.kill)
	return in
}

func (in *install) writeCfg(name, port string) {
	in.writeCfgAt(filepath.Join(in.root, "conf", name), port)
}

// writeCfgAt writes the installation's zoo.cfg, with client port port, at
// path.
func (in *install) writeCfgAt(path, port string) {
	z := config.Default()
	z.DataDir, z.ClientPortAddress = in.dataDir, "127.0.0.1"
	z.ClientPort, _ = strconv.Atoi(port)
	z.FourLetterWordWhitelist = []string{"*"}
	// TestStartStatusStop turns TTL nodes on with a -D flag through the
	// script; a key in the file would win over it.
	text := strings.Replace(harness.ZooCfg(z), "extendedTypesEnabled=false\n", "", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		in.t.Fatal(err)
	}
}

// run runs zkServer.sh with args and returns its combined output and exit
// status.
func (in *install) run(extraEnv []string, args ...string) (string, int) {
	in.t.Helper()
	cmd := exec.Command(filepath.Join(in.root, "bin", "zkServer.sh"), args...)
	cmd.Env = append(append([]string(nil), in.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		in.t.Fatal(err)
	}
	return string(out), code
}

func (in *install) pidFile() string { return filepath.Join(in.dataDir, "zookeeper_server.pid") }

func (in *install) pid() int {
	b, err := os.ReadFile(in.pidFile())
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// kill stops a server the test started and left running (by its pid).
func (in *install) kill() {
	if p := in.pid(); p > 0 {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

func (in *install) addr() string { return net.JoinHostPort("127.0.0.1", in.port) }

func waitServing(t *testing.T, addr string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, addr+" answers ruok", func() bool {
		out, err := harness.FourLetter(addr, "ruok")
		return err == nil && out == "imok"
	})
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func TestStartStatusStop(t *testing.T) {
	in := newInstall(t)
	// System properties as go-zookeeper's own test harness passes them.
	jvm := []string{"SERVER_JVMFLAGS=-Xmx256m -Dzookeeper.extendedTypesEnabled=true " +
		"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + harness.SuperDigest + " -Djava.net.preferIPv4Stack=true"}

	out, code := in.run(jvm, "start")
	if code != 0 || !strings.Contains(out, "Starting zookeeper ... STARTED") || !strings.Contains(out, "Using config: "+in.root+"/bin/../conf/zoo.cfg") {
		t.Fatalf("start: code %d\n%s", code, out)
	}
	if in.pid() == 0 {
		t.Fatal("no pid file in dataDir")
	}
	waitServing(t, in.addr())
	if out, code := in.run(jvm, "start"); code != 1 || !strings.Contains(out, "already running as process") {
		t.Fatalf("second start: code %d\n%s", code, out)
	}
	if out, code := in.run(nil, "status"); code != 0 || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("status: code %d\n%s", code, out)
	}

	// The -D properties took effect: TTL nodes (extendedTypesEnabled) and
	// the super user.
	c, _, err := zk.Connect([]string{in.addr()}, 10*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTTL("/ttl", nil, zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
		t.Fatalf("TTL create (needs -Dzookeeper.extendedTypesEnabled=true): %v", err)
	}
	if _, err := c.Create("/locked", nil, 0, zk.DigestACL(zk.PermAll, "nobody", "x")); err != nil {
		t.Fatal(err)
	}
	if err := c.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get("/locked"); err != nil {
		t.Fatalf("super user (from -Dzookeeper.DigestAuthenticationProvider.superDigest) cannot read: %v", err)
	}
	c.Close()

	oldPid := in.pid()
	if out, code := in.run(jvm, "restart"); code != 0 || !strings.Contains(out, "STOPPED") || !strings.Contains(out, "STARTED") {
		t.Fatalf("restart: code %d\n%s", code, out)
	}
	if in.pid() == oldPid || syscall.Kill(oldPid, 0) == nil {
		t.Fatalf("restart left pid %d running (new %d)", oldPid, in.pid())
	}
	waitServing(t, in.addr())

	pid := in.pid()
	if out, code := in.run(nil, "stop"); code != 0 || !strings.Contains(out, "Stopping zookeeper ... STOPPED") {
		t.Fatalf("stop: code %d\n%s", code, out)
	}
	if _, err := os.Stat(in.pidFile()); !os.IsNotExist(err) {
		t.Fatalf("pid file still there: %v", err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("server %d still running after stop", pid)
	}
	if out, code := in.run(nil, "status"); code != 1 || !strings.Contains(out, "Error contacting service. It is probably not running.") {
		t.Fatalf("status of a stopped server: code %d\n%s", code, out)
	}
	if out, _ := in.run(nil, "stop"); !strings.Contains(out, "no zookeeper to stop") {
		t.Fatalf("second stop:\n%s", out)
	}
	// The server's output went where zkServer.sh puts it.
	logs, _ := filepath.Glob(filepath.Join(in.root, "logs", "zookeeper-*-server-*.out"))
	if len(logs) != 1 {
		t.Fatalf("daemon output files %v", logs)
	}
}

// TestConfigDirAndForeground: ZOOCFGDIR and ZOOCFG choose the file, and
// start-foreground runs the server in the script's process.
func TestConfigDirAndForeground(t *testing.T) {
	in := newInstall(t)
	other := filepath.Join(in.root, "etc")
	os.MkdirAll(other, 0o755)
	port2 := strconv.Itoa(testport.Free(t))
	in.writeCfg("unused.cfg", in.port)
	in.writeCfgAt(filepath.Join(other, "server.cfg"), port2)

	cmd := exec.Command(filepath.Join(in.root, "bin", "zkServer.sh"), "start-foreground")
	cmd.Env = append(append([]string(nil), in.env...), "ZOOCFGDIR="+other, "ZOOCFG=server.cfg")
	logf, _ := os.Create(filepath.Join(in.root, "foreground.log"))
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill() // the process the test started
			<-done
		}
	})
	waitServing(t, net.JoinHostPort("127.0.0.1", port2))
	// exec: the script's process is the server's.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if waitErr != nil {
			b, _ := os.ReadFile(filepath.Join(in.root, "foreground.log"))
			t.Fatalf("foreground server exited with %v after SIGTERM:\n%s", waitErr, b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("foreground server ignored SIGTERM")
	}
	// ZOO_DATADIR_AUTOCREATE_DISABLE: no version-2 in a fresh dataDir.
	fresh := newInstall(t)
	if out, code := fresh.run([]string{"ZOO_DATADIR_AUTOCREATE_DISABLE=1"}, "start"); code != 1 ||
		!strings.Contains(out, "ZooKeeper data directory is missing at "+fresh.dataDir) {
		t.Fatalf("start without version-2 and autocreate disabled: code %d\n%s", code, out)
	}
	// A second argument names a file in ZOOCFGDIR.
	out, code := in.run([]string{"ZOOCFGDIR=" + other}, "print-cmd", "server.cfg")
	if code != 0 || !strings.Contains(out, filepath.Join(other, "server.cfg")) || !strings.Contains(out, "server") {
		t.Fatalf("print-cmd: code %d\n%s", code, out)
	}
}
