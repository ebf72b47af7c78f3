package harness

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testport"
)

// Timeouts for process control. Generous: a JVM on a loaded 2-core machine
// can take several seconds to start, and none of these is asserted on.
const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 20 * time.Second
	pollInterval = 100 * time.Millisecond
)

// Server is one server process on a fixed loopback port and data
// directory; it can be stopped, killed, paused and started again on both.
// Methods are meant for the test goroutine (they call t.Fatal).
type Server struct {
	t   testing.TB
	env *Env
	cfg Config

	Dir     string // the test's directory for this server
	DataDir string
	CfgPath string
	LogPath string
	Port    int

	mu     sync.Mutex
	proc   *process
	starts int
}

type process struct {
	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{} // closed when the process has exited
	paused bool
}

// Start launches a server with the standard test configuration and waits
// until it serves. It is stopped (by PID) when the test ends.
func (e *Env) Start(t testing.TB) *Server {
	t.Helper()
	return e.StartWith(t, Config{})
}

// StartWith launches a server with cfg and waits until it serves.
func (e *Env) StartWith(t testing.TB, cfg Config) *Server {
	t.Helper()
	// NewEnv read these in TestMain, which go test's result cache does not
	// see; reading them again while a test runs keys cached results on
	// the target, so switching CORRAL_E2E_TARGET never replays the other
	// target's result.
	_ = os.Getenv(EnvTarget)
	_ = os.Getenv(EnvCorralBin)
	e.Require(t)
	dir := t.TempDir()
	s := &Server{
		t:       t,
		env:     e,
		cfg:     cfg,
		Dir:     dir,
		DataDir: filepath.Join(dir, "data"),
		CfgPath: filepath.Join(dir, "zoo.cfg"),
		LogPath: filepath.Join(dir, "server.log"),
		Port:    freePort(t),
	}
	if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.CfgPath, []byte(cfg.zooCfg(s.DataDir, s.Port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e.Kind == ZooKeeper {
		if err := os.WriteFile(filepath.Join(dir, "logback.xml"), []byte(logbackXML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.cleanup)
	s.StartAgain()
	return s
}

// Addr is the client address, host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Env is the environment that started the server.
func (s *Server) Env() *Env { return s.env }

// StartAgain starts the process again on the same data directory and port
// (after Stop or Kill) and waits until it serves.
func (s *Server) StartAgain() {
	s.t.Helper()
	s.waitReady(s.launch())
}

// launch starts the process and returns without waiting for it to serve:
// an ensemble member serves only once a quorum of its peers runs too.
func (s *Server) launch() *process {
	s.t.Helper()
	s.mu.Lock()
	if s.proc != nil && !s.proc.exited() {
		s.mu.Unlock()
		s.t.Fatal("harness: StartAgain while the server is running")
	}
	s.starts++
	n := s.starts
	s.mu.Unlock()

	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	fmt.Fprintf(logf, "==== harness: start #%d of %s at %s ====\n", n, s.env.Kind, time.Now().Format(time.RFC3339Nano))
	cmd := s.command()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.Dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		s.t.Fatalf("harness: start %s: %v", s.env.Kind, err)
	}
	p := &process{cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		// Wait only reaps; the test goroutine decides what an exit means.
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	s.t.Logf("harness: started %s pid %d on %s (start #%d)", s.env.Kind, cmd.Process.Pid, s.Addr(), n)
	return p
}

func (s *Server) command() *exec.Cmd {
	if s.env.Kind == ZooKeeper {
		args := []string{"-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dlogback.configurationFile=" + filepath.Join(s.Dir, "logback.xml")}
		args = append(args, s.cfg.javaProps()...)
		args = append(args, "-cp", s.env.zkClasspath,
			"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.CfgPath)
		return exec.Command(s.env.java, args...)
	}
	return exec.Command(s.env.corralBin, "server", s.CfgPath)
}

// waitReady polls srvr until the server reports a Mode line: ruok answers
// as soon as the port is open, srvr only once the server serves requests.
func (s *Server) waitReady(p *process) {
	s.t.Helper()
	deadline := time.Now().Add(readyTimeout)
	var last string
	for time.Now().Before(deadline) {
		if p.exited() {
			s.t.Fatalf("harness: %s exited during start-up (%s)\n%s", s.env.Kind, p.cmd.ProcessState, s.logTail(200))
		}
		// A short timeout per probe: a server that has bound its port but
		// is not yet answering is simply polled again.
		out, err := fourLetter(s.Addr(), []byte("srvr"), time.Second)
		if err == nil && strings.Contains(out, "\nMode: ") {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = strings.TrimSpace(out)
		}
		time.Sleep(pollInterval)
	}
	s.t.Fatalf("harness: %s not serving on %s after %s (last srvr: %s)\n%s",
		s.env.Kind, s.Addr(), readyTimeout, last, s.logTail(200))
}

// PID is the current process id (0 if never started).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Stop sends SIGTERM and waits for the process to exit (SIGKILL after a
// grace period).
func (s *Server) Stop() {
	s.t.Helper()
	p := s.current()
	if p == nil || p.exited() {
		return
	}
	if p.paused {
		s.signal(p, syscall.SIGCONT)
		p.paused = false
	}
	s.signal(p, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		s.t.Logf("harness: %s ignored SIGTERM for %s; killing", s.env.Kind, stopTimeout)
		s.signal(p, syscall.SIGKILL)
		<-p.done
	}
}

// Kill sends SIGKILL and waits for the process to be reaped.
func (s *Server) Kill() {
	s.t.Helper()
	p := s.current()
	if p == nil || p.exited() {
		return
	}
	s.signal(p, syscall.SIGKILL)
	<-p.done
	p.paused = false
}

// Restart is Stop then StartAgain: same data directory, same port.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.StartAgain()
}

// Pause freezes the process with SIGSTOP; Resume continues it.
func (s *Server) Pause() {
	s.t.Helper()
	p := s.current()
	if p == nil || p.exited() {
		s.t.Fatal("harness: Pause of a server that is not running")
	}
	s.signal(p, syscall.SIGSTOP)
	p.paused = true
}

func (s *Server) Resume() {
	s.t.Helper()
	p := s.current()
	if p == nil || p.exited() {
		s.t.Fatal("harness: Resume of a server that is not running")
	}
	s.signal(p, syscall.SIGCONT)
	p.paused = false
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	p := s.current()
	return p != nil && !p.exited()
}

// FourLetter sends a four-letter word to this server; see FourLetter.
func (s *Server) FourLetter(word string) (string, error) { return FourLetter(s.Addr(), word) }

// MustFourLetter is FourLetter that fails the test on a network error.
func (s *Server) MustFourLetter(word string) string {
	s.t.Helper()
	out, err := s.FourLetter(word)
	if err != nil {
		s.t.Fatalf("4lw %s: %v", word, err)
	}
	return out
}

func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

func (s *Server) signal(p *process, sig syscall.Signal) {
	// Signal the PID we started, never a name; ESRCH means it already exited.
	if err := syscall.Kill(p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.t.Errorf("harness: kill -%d %d: %v", sig, p.cmd.Process.Pid, err)
	}
}

func (s *Server) cleanup() {
	if p := s.current(); p != nil && !p.exited() {
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			s.t.Errorf("harness: pid %d not reaped after SIGKILL", p.cmd.Process.Pid)
		}
	}
	if s.t.Failed() {
		s.t.Logf("harness: %s log %s (last lines):\n%s", s.env.Kind, s.LogPath, s.logTail(300))
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail returns the last n lines of the server's output.
func (s *Server) logTail(n int) string {
	f, err := os.Open(s.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 2*n {
			lines = append(lines[:0], lines[len(lines)-n:]...)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort is a free loopback port below the kernel's ephemeral range, so
// that no outgoing connection takes it before the server binds it (see
// testport). Another process could still bind it first; a bind failure
// shows up clearly in the server log.
func freePort(t testing.TB) int {
	t.Helper()
	return testport.Free(t)
}
