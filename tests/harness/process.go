package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/proc"
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
	proc   *proc.Process
	starts int
	// flags are corral server flags (SetFlags) for the next starts.
	flags []string
}

// SetFlags gives the next starts of a corral server these command-line
// flags before zoo.cfg (e.g. -force-recover); none clears them.
func (s *Server) SetFlags(flags ...string) {
	s.mu.Lock()
	s.flags = append([]string(nil), flags...)
	s.mu.Unlock()
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
func (s *Server) launch() *proc.Process {
	s.t.Helper()
	s.mu.Lock()
	if s.proc != nil && !s.proc.Exited() {
		s.mu.Unlock()
		s.t.Fatal("harness: StartAgain while the server is running")
	}
	s.starts++
	n := s.starts
	s.mu.Unlock()

	argv, err := s.argv()
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := proc.Start(fmt.Sprintf("%s (harness start #%d)", s.env.Kind, n), argv, s.Dir, s.LogPath)
	if err != nil {
		s.t.Fatalf("harness: %v", err)
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	s.t.Logf("harness: started %s pid %d on %s (start #%d)", s.env.Kind, p.PID(), s.Addr(), n)
	return p
}

// argv is the command line of the server: corral, or ZooKeeper with a
// small heap and a JIT that starts fast, its logging configuration
// written beside zoo.cfg.
func (s *Server) argv() ([]string, error) {
	if s.env.Kind != ZooKeeper {
		s.mu.Lock()
		argv := append([]string{s.env.corralBin, "server"}, s.flags...)
		s.mu.Unlock()
		return append(argv, s.CfgPath), nil
	}
	logback, err := proc.WriteLogback(s.Dir)
	if err != nil {
		return nil, err
	}
	flags := append([]string{"-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, s.cfg.javaProps()...)
	return proc.ZooKeeperArgv(s.env.java, flags, logback, s.env.zkClasspath, s.CfgPath), nil
}

// waitReady polls srvr until the server reports a Mode line: ruok answers
// as soon as the port is open, srvr only once the server serves requests.
func (s *Server) waitReady(p *proc.Process) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err := proc.WaitUntil(ctx, p, pollInterval, func(ctx context.Context) error {
		// A short timeout per probe: a server that has bound its port but
		// is not yet answering is simply polled again.
		out, err := proc.FourLetter(ctx, s.Addr(), []byte("srvr"), time.Second)
		if err != nil {
			return err
		}
		// A recovering corral member (diskless) answers "Mode: looking"
		// but serves nobody until a leader has synchronized it.
		if m := proc.SrvrMode(out); m == "" || m == "looking" {
			return errors.New(strings.TrimSpace(out))
		}
		return nil
	})
	if errors.Is(err, proc.ErrExited) {
		s.t.Fatalf("harness: %s exited during start-up (%s)\n%s", s.env.Kind, p.State(), s.logTail(200))
	}
	if err != nil {
		s.t.Fatalf("harness: %s not serving on %s after %s (%v)\n%s",
			s.env.Kind, s.Addr(), readyTimeout, err, s.logTail(200))
	}
}

// PID is the current process id (0 if never started).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Stop sends SIGTERM and waits for the process to exit (SIGKILL after a
// grace period).
func (s *Server) Stop() {
	s.t.Helper()
	p := s.current()
	if p == nil {
		return
	}
	killed, err := p.Stop(stopTimeout)
	if killed {
		s.t.Logf("harness: %s ignored SIGTERM for %s; killed", s.env.Kind, stopTimeout)
	}
	if err != nil {
		s.t.Errorf("harness: %v", err)
	}
}

// Kill sends SIGKILL and waits for the process to be reaped.
func (s *Server) Kill() {
	s.t.Helper()
	p := s.current()
	if p == nil {
		return
	}
	if _, err := p.Kill(stopTimeout); err != nil {
		s.t.Errorf("harness: %v", err)
	}
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
	if p == nil || p.Exited() {
		s.t.Fatal("harness: Pause of a server that is not running")
	}
	if err := p.Pause(); err != nil {
		s.t.Error(err)
	}
}

func (s *Server) Resume() {
	s.t.Helper()
	p := s.current()
	if p == nil || p.Exited() {
		s.t.Fatal("harness: Resume of a server that is not running")
	}
	if err := p.Resume(); err != nil {
		s.t.Error(err)
	}
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	p := s.current()
	return p != nil && !p.Exited()
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

func (s *Server) current() *proc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

func (s *Server) cleanup() {
	if p := s.current(); p != nil {
		if _, err := p.Kill(stopTimeout); err != nil {
			s.t.Errorf("harness: %v", err)
		}
	}
	if s.t.Failed() {
		s.t.Logf("harness: %s log %s (last lines):\n%s", s.env.Kind, s.LogPath, s.logTail(300))
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
