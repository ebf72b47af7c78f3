package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-db/corral/bench/load"
)

// Target names.
const (
	TargetCorral    = "corral"
	TargetZooKeeper = "zookeeper"
)

// LaunchConfig says how to start a server under test.
type LaunchConfig struct {
	// Dir holds zoo.cfg, the data directory and the server's output.
	Dir string
	// Port is the client port; a free one is picked if 0.
	Port                   int
	GlobalOutstandingLimit int
	// CorralBin is the corral binary.
	CorralBin string
	// ZKLib is the directory of ZooKeeper's jars, Java the java command and
	// JavaHeap its -Xmx value.
	ZKLib    string
	Java     string
	JavaHeap string
	// Timing is the quorum timing written to zoo.cfg (zero fields take
	// DefaultTiming's).
	Timing Timing
	// Durability is written to zoo.cfg (zero value: forceSync=yes).
	Durability Durability
	// ReadyTimeout bounds the wait for the server to accept sessions.
	ReadyTimeout time.Duration
	Log          *slog.Logger
}

// DefaultJavaHeap is ZooKeeper's -Xmx in the benchmark.
const DefaultJavaHeap = "2g"

// Server is a running server under test.
type Server struct {
	Name string
	Addr string
	// Argv is the command line it was started with.
	Argv []string
	// Version is the first line of its srvr output, if it answered.
	Version string
	// LogPath is the file with the server's stdout and stderr.
	LogPath string
	// ZooCfgPath is the configuration file it was started from.
	ZooCfgPath string
	DataDir    string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	log     *slog.Logger
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Launch writes zoo.cfg into cfg.Dir, starts the named target from it and
// waits until it accepts sessions.
func Launch(ctx context.Context, target string, cfg LaunchConfig) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 60 * time.Second
	}
	if cfg.Port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		cfg.Port = p
	}
	dataDir := filepath.Join(cfg.Dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	zc := ServerConfig{DataDir: dataDir, Port: cfg.Port, GlobalOutstandingLimit: cfg.GlobalOutstandingLimit, Timing: cfg.Timing,
		Durability: cfg.Durability}
	cfgPath := filepath.Join(cfg.Dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(zc.ZooCfg()), 0o644); err != nil {
		return nil, err
	}
	argv, err := serverArgv(target, cfg, cfgPath)
	if err != nil {
		return nil, err
	}
	s, err := spawn(target, argv, cfg.Dir, filepath.Join(cfg.Dir, target+".log"), cfg.Log)
	if err != nil {
		return nil, err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port))
	s.ZooCfgPath, s.DataDir = cfgPath, dataDir
	cfg.Log.Info("server started", "target", target, "pid", s.PID(), "addr", s.Addr)
	if err := s.waitReady(ctx, cfg.ReadyTimeout); err != nil {
		s.Stop()
		return nil, err
	}
	if out, err := load.FourLetter(ctx, s.Addr, "srvr"); err == nil {
		s.Version = FirstLine(out)
	}
	return s, nil
}

// serverArgv is the command line that starts target from the zoo.cfg at
// cfgPath; files it needs besides (logback.xml) are written beside it.
func serverArgv(target string, cfg LaunchConfig, cfgPath string) ([]string, error) {
	switch target {
	case TargetCorral:
		if cfg.CorralBin == "" {
			return nil, errors.New("bench: no corral binary")
		}
		return []string{cfg.CorralBin, "server", cfgPath}, nil
	case TargetZooKeeper:
		if cfg.ZKLib == "" {
			return nil, errors.New("bench: no ZooKeeper lib directory")
		}
		java := cfg.Java
		if java == "" {
			java = "java"
		}
		heap := cfg.JavaHeap
		if heap == "" {
			heap = DefaultJavaHeap
		}
		// ZooKeeper's jars bring logback; without a configuration it logs
		// DEBUG to the console, which would slow it down. This one logs
		// INFO, as ZooKeeper's own conf/logback.xml does, without caller
		// data (cheaper than its default pattern).
		logback := filepath.Join(filepath.Dir(cfgPath), "logback.xml")
		if err := os.WriteFile(logback, []byte(logbackXML), 0o644); err != nil {
			return nil, err
		}
		return []string{java, "-Xmx" + heap, "-Dlogback.configurationFile=" + logback,
			"-cp", filepath.Join(cfg.ZKLib, "*"), "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath}, nil
	}
	return nil, fmt.Errorf("bench: unknown target %q (want %s or %s)", target, TargetCorral, TargetZooKeeper)
}

// spawn starts argv in dir with its stdout and stderr appended to logPath
// (a restarted server continues the log of its earlier life).
func spawn(name string, argv []string, dir, logPath string, log *slog.Logger) (*Server, error) {
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	fmt.Fprintf(logFile, "--- corral bench: starting %s at %s ---\n", name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Take the server down with us if we die without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	s := &Server{
		Name: name, Argv: argv, LogPath: logPath,
		cmd: cmd, exited: make(chan struct{}), log: log,
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// waitReady polls until a session can be established.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("bench: %s exited during start-up (%v); see %s", s.Name, s.waitErr, s.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("bench: %s not ready after %v: %v; see %s", s.Name, timeout, last, s.LogPath)
		case <-tick.C:
		}
		// ZooKeeper opens its port before it serves sessions and logs a
		// stack trace for each session attempted in between; its srvr says
		// when it is serving. A server without four-letter words goes
		// straight to the session attempt.
		if out, err := load.FourLetter(ctx, s.Addr, "srvr"); err == nil && strings.Contains(out, notServing) {
			last = errors.New(notServing)
			continue
		}
		dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := load.Dial(dctx, s.Addr, 30*time.Second)
		if err == nil {
			err = c.CloseSession(dctx)
		}
		dcancel()
		if err == nil {
			return nil
		}
		last = err
	}
}

// notServing is what ZooKeeper's four-letter words answer before the server
// is up.
const notServing = "not currently serving requests"

// StopTimeout is how long a server gets to exit on SIGTERM.
const StopTimeout = 15 * time.Second

// Stop ends the server by its PID: SIGTERM, then SIGKILL if it has not
// exited in time. It waits for the process to be reaped.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(StopTimeout)
	defer t.Stop()
	select {
	case <-s.exited:
		return nil
	case <-t.C:
	}
	s.log.Warn("server ignored SIGTERM; killing", "target", s.Name, "pid", s.PID())
	s.cmd.Process.Kill()
	<-s.exited
	return nil
}

// killTimeout bounds the wait for a SIGKILLed process to be reaped.
const killTimeout = 30 * time.Second

// Kill sends SIGKILL to the server's PID and waits until it is reaped: a
// Crash, with no chance to close connections or flush anything. It returns
// when the signal had been sent (the kill(2) call had returned).
func (s *Server) Kill() (time.Time, error) {
	select {
	case <-s.exited:
		return time.Now(), nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return time.Time{}, fmt.Errorf("bench: kill %s (pid %d): %w", s.Name, s.PID(), err)
	}
	at := time.Now()
	t := time.NewTimer(killTimeout)
	defer t.Stop()
	select {
	case <-s.exited:
		return at, nil
	case <-t.C:
		return at, fmt.Errorf("bench: %s (pid %d) not reaped %v after SIGKILL", s.Name, s.PID(), killTimeout)
	}
}

// Exited reports whether the process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// freePort asks the kernel for an unused loopback port. Another process
// could take it before the server binds it; on this single-user benchmark
// machine that race is accepted (the server would then fail to bind and
// exit, which the readiness check usually reports).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

const logbackXML = `<configuration>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} %-5p [%t] %c{1} - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="CONSOLE"/></root>
</configuration>
`

func FirstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
