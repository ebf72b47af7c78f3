package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// What readratio and failures share: the flags of a mixed read/write load,
// the targets they launch or connect to, starting an ensemble and saving
// its files, and preloading the nodes the load reads and writes.

// Mixed-load defaults, sized for a 2-core machine. 30 connections divide
// evenly over ensembles of 3 and 5, so every member serves as many
// sessions; 32 requests in flight each keep about a thousand outstanding,
// which saturates the servers here (the paper's 250 clients with at least
// 100 each saturated 50 dual-core machines).
const (
	DefaultMixedConns    = 30
	DefaultMixedInflight = 32
	DefaultMixedKeys     = 10000
	DefaultMixedValue    = 1024
	DefaultMixedWarmup   = 2 * time.Second
	maxMixedKeys         = 1_000_000
)

// LaunchBoth is the --launch value that measures both servers in one run.
const LaunchBoth = "both"

// ParseLaunch turns a --launch value into the targets to start, in order.
func ParseLaunch(s string) ([]string, error) {
	switch s {
	case TargetCorral, TargetZooKeeper:
		return []string{s}, nil
	case LaunchBoth:
		return []string{TargetCorral, TargetZooKeeper}, nil
	}
	return nil, fmt.Errorf("bench: --launch %q (want %s, %s or %s)", s, TargetCorral, TargetZooKeeper, LaunchBoth)
}

// mixedFlags are the flags of a mixed read/write load.
type mixedFlags struct {
	launch, connect string
	conns, inflight int
	value           int
	keys            int64
	warmup          time.Duration
	sessionTimeout  time.Duration
	out             string
	quiet           bool
}

func (m *mixedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.launch, "launch", LaunchBoth, "servers to start on 127.0.0.1 and measure in turn: corral, zookeeper or both (same zoo.cfg)")
	fs.StringVar(&m.connect, "connect", "", "comma-separated host:port list of a running ensemble to measure instead of launching one")
	fs.IntVar(&m.conns, "conns", DefaultMixedConns, "client connections (sessions)")
	fs.IntVar(&m.inflight, "inflight", DefaultMixedInflight, "requests in flight per connection")
	fs.IntVar(&m.value, "value", DefaultMixedValue, "setData value size and preloaded node size in bytes (paper: 1 KiB)")
	fs.Int64Var(&m.keys, "keys", DefaultMixedKeys, "nodes preloaded before measuring; requests pick one uniformly at random")
	fs.DurationVar(&m.warmup, "warmup", DefaultMixedWarmup, "unmeasured warm-up before each measurement")
	fs.DurationVar(&m.sessionTimeout, "session-timeout", DefaultSessionTimeout, "session timeout every client asks for")
	fs.StringVar(&m.out, "out", "", "directory for report.md, results.jsonl, the PNG plot and server logs "+
		"(default: the report and JSON lines go to stdout and no plot is drawn)")
	fs.BoolVar(&m.quiet, "q", false, "no progress messages on stderr")
}

// validate checks the flags and returns the targets to launch, or the
// addresses to connect to.
func (m *mixedFlags) validate() (targets, addrs []string, err error) {
	switch {
	case m.conns < 1 || m.conns > maxConns:
		return nil, nil, fmt.Errorf("--conns must be in [1, %d]", maxConns)
	case m.inflight < 1 || m.inflight > maxInflight:
		return nil, nil, fmt.Errorf("--inflight must be in [1, %d]", maxInflight)
	case m.value < 0 || m.value > 1<<20-1024:
		return nil, nil, errors.New("--value must be in [0, 1047552] (jute.maxbuffer)")
	case m.keys < 1 || m.keys > maxMixedKeys:
		return nil, nil, fmt.Errorf("--keys must be in [1, %d]", maxMixedKeys)
	case m.warmup < 0 || m.warmup > maxPhase:
		return nil, nil, fmt.Errorf("--warmup must be in [0, %v]", maxPhase)
	case m.sessionTimeout <= 0 || m.sessionTimeout > 10*time.Minute:
		return nil, nil, errors.New("--session-timeout must be in (0, 10m]")
	}
	if addrs = splitList(m.connect); len(addrs) > 0 {
		return nil, addrs, nil
	}
	targets, err = ParseLaunch(m.launch)
	return targets, nil, err
}

func (m *mixedFlags) logger(env CommandEnv) *slog.Logger {
	l := loadFlags{quiet: m.quiet}
	return l.logger(env)
}

// launchSpec is how readratio and failures start servers.
type launchSpec struct {
	Timing    Timing
	WorkDir   string
	Keep      bool
	OutDir    string
	CorralBin string
	ZKLib     string
	Java      string
	JavaHeap  string
	Log       *slog.Logger
}

func (s *launchSpec) fromFlags(sf serverFlags) {
	s.CorralBin, s.ZKLib, s.Java, s.JavaHeap = sf.corralBin, sf.zkLib, sf.java, sf.javaHeap
	s.WorkDir, s.Keep, s.Timing = sf.workDir, sf.keep, sf.timing
}

// prepare builds corral or fetches ZooKeeper's jars for each target once,
// so that every ensemble of a run starts the same binaries.
func (s *launchSpec) prepare(ctx context.Context, targets []string, work string) error {
	for _, t := range targets {
		lc := s.config(work, t)
		if err := prepareLaunch(ctx, t, &lc, work); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		s.CorralBin, s.ZKLib = lc.CorralBin, lc.ZKLib
	}
	return nil
}

func (s *launchSpec) config(dir, target string) LaunchConfig {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	return LaunchConfig{
		Dir: dir, Timing: s.Timing.orDefault(), ReadyTimeout: wholeTimeout,
		CorralBin: s.CorralBin, Java: s.Java, JavaHeap: s.JavaHeap, ZKLib: s.ZKLib, Log: s.Log,
	}
}

// start launches target's ensemble of n servers in work and waits until it
// is whole; it returns the ensemble, its leader and what stops it and
// saves its members' output and zoo.cfg into OutDir as base.sN.*.
func (s *launchSpec) start(ctx context.Context, work, target string, n int, base string) (*Ensemble, int, func(), error) {
	lc := s.config(filepath.Join(work, base), target)
	ens, err := LaunchEnsemble(ctx, target, EnsembleConfig{LaunchConfig: lc, Servers: n})
	if err != nil {
		return nil, 0, nil, err
	}
	stop := func() {
		ens.Stop()
		for _, m := range ens.Members {
			if s.OutDir != "" {
				name := fmt.Sprintf("%s.s%d", base, m.ID)
				copyFile(m.LogPath, filepath.Join(s.OutDir, name+".log"))
				copyFile(m.ZooCfgPath, filepath.Join(s.OutDir, name+".zoo.cfg"))
			}
			if !s.Keep {
				// Free the disk before the next ensemble starts.
				os.RemoveAll(m.DataDir)
			}
		}
	}
	leader, err := ens.WaitWhole(ctx, wholeTimeout)
	if err != nil {
		stop()
		return nil, 0, nil, err
	}
	return ens, leader, stop, nil
}

// memberProcs names every running member's process with its role, for CPU
// measurement.
func memberProcs(ens *Ensemble, leader int) []ServerProc {
	var procs []ServerProc
	for _, m := range ens.Members {
		if pid := m.PID(); pid > 0 {
			mode := ModeFollower
			if m.ID == leader {
				mode = ModeLeader
			}
			procs = append(procs, ServerProc{Name: fmt.Sprintf("server.%d %s", m.ID, mode), PID: pid})
		}
	}
	return procs
}

// preload creates keys nodes of valueSize bytes under DefaultRoot, spread
// over addrs, unmeasured, and returns them.
func preload(ctx context.Context, target string, addrs []string, keys int64, conns, inflight, valueSize int,
	sessionTimeout time.Duration, log *slog.Logger) (*KeySpace, error) {
	log.Info("preloading nodes", "target", target, "keys", keys, "bytes", valueSize)
	r, err := RunPhase(ctx, PhaseConfig{
		Target: target, Phase: "preload", Addrs: addrs, Workload: WorkloadCreate,
		Conns: int(min(int64(conns), keys)), Inflight: inflight, ValueSize: valueSize,
		Duration: populateLimit, MaxOps: keys, SessionTimeout: sessionTimeout, Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("bench: preloading %d nodes: %w", keys, err)
	}
	if r.Errors > 0 {
		return nil, fmt.Errorf("bench: preloading %d nodes: %d creates failed, first %s", keys, r.Errors, r.FirstError)
	}
	return r.Keys, nil
}

// probeLeader asks each address for srvr and returns the index of the one
// that leads (or serves standalone), or -1.
func probeLeader(ctx context.Context, addrs []string) int {
	for i, a := range addrs {
		out, err := fourLetter(ctx, a, "srvr")
		if err != nil {
			continue
		}
		if m := srvrMode(out); m == ModeLeader || m == ModeStandalone {
			return i
		}
	}
	return -1
}
