package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/proc"
)

// Target names. corral+ops is corral with the AdminServer (and so the web
// console) and the Prometheus endpoint on: measured beside corral, it says
// what they cost when nobody is looking at them.
const (
	TargetCorral    = "corral"
	TargetCorralOps = "corral+ops"
	TargetZooKeeper = "zookeeper"
)

// Base is the server a target starts: corral for corral+ops.
func Base(target string) string {
	if target == TargetCorralOps {
		return TargetCorral
	}
	return target
}

// opsPorts picks free ports for a corral+ops server's HTTP endpoints; nil
// for every other target.
func opsPorts(target string) (*OpsPorts, error) {
	if target != TargetCorralOps {
		return nil, nil
	}
	p, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	return &OpsPorts{Admin: p[0], Metrics: p[1]}, nil
}

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

	p   *proc.Process
	log *slog.Logger
}

// PID is the server's process id.
func (s *Server) PID() int { return s.p.PID() }

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
		p, err := FreePorts(1)
		if err != nil {
			return nil, err
		}
		cfg.Port = p[0]
	}
	dataDir := filepath.Join(cfg.Dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	ops, err := opsPorts(target)
	if err != nil {
		return nil, err
	}
	zc := ServerConfig{DataDir: dataDir, Port: cfg.Port, GlobalOutstandingLimit: cfg.GlobalOutstandingLimit, Timing: cfg.Timing,
		Durability: cfg.Durability, Ops: ops}
	cfgPath := filepath.Join(cfg.Dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(zc.ZooCfg()), 0o644); err != nil {
		return nil, err
	}
	argv, err := serverArgv(target, cfg, cfgPath)
	if err != nil {
		return nil, err
	}
	s, err := Spawn(target, argv, cfg.Dir, filepath.Join(cfg.Dir, target+".log"), cfg.Log)
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
	switch Base(target) {
	case TargetCorral:
		if cfg.CorralBin == "" {
			return nil, errors.New("bench: no corral binary")
		}
		return []string{cfg.CorralBin, "server", cfgPath}, nil
	case TargetZooKeeper:
		if cfg.ZKLib == "" {
			return nil, errors.New("bench: no ZooKeeper lib directory")
		}
		heap := cfg.JavaHeap
		if heap == "" {
			heap = DefaultJavaHeap
		}
		logback, err := proc.WriteLogback(filepath.Dir(cfgPath))
		if err != nil {
			return nil, err
		}
		return proc.ZooKeeperArgv(cfg.Java, []string{"-Xmx" + heap}, logback, proc.LibClasspath(cfg.ZKLib), cfgPath), nil
	}
	return nil, fmt.Errorf("bench: unknown target %q (want %s, %s or %s)", target, TargetCorral, TargetCorralOps, TargetZooKeeper)
}

// Spawn starts argv in dir with its stdout and stderr appended to logPath
// (a restarted server continues the log of its earlier life) and returns
// at once: the caller knows what ready means for what it started. Launch
// and LaunchEnsemble start their servers with it; an experiment that
// runs other processes (a KV store, etcd) starts them with it too, so
// every process is stopped and killed the same way, by its PID.
func Spawn(name string, argv []string, dir, logPath string, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p, err := proc.Start(name, argv, dir, logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &Server{Name: name, Argv: argv, LogPath: logPath, p: p, log: log}, nil
}

// waitReady polls until a session can be established.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := proc.WaitUntil(ctx, s.p, 100*time.Millisecond, func(ctx context.Context) error {
		// ZooKeeper opens its port before it serves sessions and logs a
		// stack trace for each session attempted in between; its srvr says
		// when it is serving. A server without four-letter words goes
		// straight to the session attempt.
		if out, err := load.FourLetter(ctx, s.Addr, "srvr"); err == nil && strings.Contains(out, notServing) {
			return errors.New(notServing)
		}
		dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
		defer dcancel()
		c, err := load.Dial(dctx, s.Addr, 30*time.Second)
		if err == nil {
			err = c.CloseSession(dctx)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: %s not ready after %v: %w; see %s", s.Name, timeout, err, s.LogPath)
	}
	return nil
}

// notServing is what ZooKeeper's four-letter words answer before the server
// is up.
const notServing = "not currently serving requests"

// StopTimeout is how long a server gets to exit on SIGTERM.
const StopTimeout = 15 * time.Second

// Stop ends the server by its PID: SIGTERM, then SIGKILL if it has not
// exited in time. It waits for the process to be reaped.
func (s *Server) Stop() error {
	killed, err := s.p.Stop(StopTimeout)
	if killed {
		s.log.Warn("server ignored SIGTERM; killed", "target", s.Name, "pid", s.PID())
	}
	return err
}

// killTimeout bounds the wait for a SIGKILLed process to be reaped.
const killTimeout = 30 * time.Second

// Kill sends SIGKILL to the server's PID and waits until it is reaped: a
// Crash, with no chance to close connections or flush anything. It returns
// when the signal had been sent (the kill(2) call had returned).
func (s *Server) Kill() (time.Time, error) {
	at, err := s.p.Kill(killTimeout)
	if err != nil {
		return at, fmt.Errorf("bench: %w", err)
	}
	return at, nil
}

// Exited reports whether the process has exited.
func (s *Server) Exited() bool { return s.p.Exited() }

// Err is how the process ended; nil while it runs.
func (s *Server) Err() error { return s.p.Err() }

func FirstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
