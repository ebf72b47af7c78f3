package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// What readratio and failures share: the flags of a mixed read/write load,
// the targets they launch or connect to, starting an ensemble and saving
// its files, and preloading the nodes the load reads and writes.

// Mixed-load defaults, sized for a 2-core machine. 30 connections divide
// evenly over ensembles of 3 and 5, so every member serves as many
// Sessions; 32 requests in flight each keep about a thousand outstanding,
// which saturates the servers here (the paper's 250 clients with at least
// 100 each saturated 50 dual-core machines).
const (
	DefaultMixedConns    = 30
	DefaultMixedInflight = 32
	DefaultMixedKeys     = 10000
	DefaultMixedValue    = 1024
	DefaultMixedWarmup   = 2 * time.Second
	MaxMixedKeys         = 1_000_000
)

// LaunchBoth is the --launch value that measures both servers in one run.
const LaunchBoth = "both"

// ParseLaunch turns a --launch value into the targets to start, in order.
func ParseLaunch(s string) ([]string, error) {
	switch s {
	case launch.TargetCorral, launch.TargetZooKeeper:
		return []string{s}, nil
	case LaunchBoth:
		return []string{launch.TargetCorral, launch.TargetZooKeeper}, nil
	}
	return nil, fmt.Errorf("bench: --launch %q (want %s, %s or %s)", s, launch.TargetCorral, launch.TargetZooKeeper, LaunchBoth)
}

// LaunchSpec is how readratio and failures start servers.
type LaunchSpec struct {
	Timing    launch.Timing
	WorkDir   string
	Keep      bool
	OutDir    string
	CorralBin string
	ZKLib     string
	Java      string
	JavaHeap  string
	Log       *slog.Logger
}

// Prepare builds corral or fetches ZooKeeper's jars for each target once,
// so that every ensemble of a run starts the same binaries.
func (s *LaunchSpec) Prepare(ctx context.Context, targets []string, work string) error {
	for _, t := range targets {
		lc := s.config(work, t)
		if err := PrepareLaunch(ctx, t, &lc, work); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		s.CorralBin, s.ZKLib = lc.CorralBin, lc.ZKLib
	}
	return nil
}

func (s *LaunchSpec) config(dir, target string) launch.LaunchConfig {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	return launch.LaunchConfig{
		Dir: dir, Timing: s.Timing.OrDefault(), ReadyTimeout: WholeTimeout,
		CorralBin: s.CorralBin, Java: s.Java, JavaHeap: s.JavaHeap, ZKLib: s.ZKLib, Log: s.Log,
	}
}

// Start launches target's ensemble of n servers in work and waits until it
// is whole; it returns the ensemble, its leader and what stops it and
// saves its members' output and zoo.cfg into OutDir as base.sN.*.
func (s *LaunchSpec) Start(ctx context.Context, work, target string, n int, base string) (*launch.Ensemble, int, func(), error) {
	lc := s.config(filepath.Join(work, base), target)
	ens, err := launch.LaunchEnsemble(ctx, target, launch.EnsembleConfig{LaunchConfig: lc, Servers: n})
	if err != nil {
		return nil, 0, nil, err
	}
	stop := func() {
		ens.Stop()
		for _, m := range ens.Members {
			if s.OutDir != "" {
				name := fmt.Sprintf("%s.s%d", base, m.ID)
				CopyFile(m.LogPath, filepath.Join(s.OutDir, name+".log"))
				CopyFile(m.ZooCfgPath, filepath.Join(s.OutDir, name+".zoo.cfg"))
			}
			if !s.Keep {
				// Free the disk before the next ensemble starts.
				os.RemoveAll(m.DataDir)
			}
		}
	}
	leader, err := ens.WaitWhole(ctx, WholeTimeout)
	if err != nil {
		stop()
		return nil, 0, nil, err
	}
	return ens, leader, stop, nil
}

// MemberProcs names every running member's process with its role, for CPU
// measurement.
func MemberProcs(ens *launch.Ensemble, leader int) []load.ServerProc {
	var procs []load.ServerProc
	for _, m := range ens.Members {
		if pid := m.PID(); pid > 0 {
			mode := launch.ModeFollower
			if m.ID == leader {
				mode = launch.ModeLeader
			}
			procs = append(procs, load.ServerProc{Name: fmt.Sprintf("server.%d %s", m.ID, mode), PID: pid})
		}
	}
	return procs
}

// Preload creates keys nodes of valueSize bytes under DefaultRoot, spread
// over addrs, unmeasured, and returns them.
func Preload(ctx context.Context, target string, addrs []string, keys int64, conns, inflight, valueSize int,
	sessionTimeout time.Duration, log *slog.Logger) (*load.KeySpace, error) {
	log.Info("preloading nodes", "target", target, "keys", keys, "bytes", valueSize)
	r, err := load.RunPhase(ctx, load.PhaseConfig{
		Target: target, Phase: "preload", Addrs: addrs, Workload: load.WorkloadCreate,
		Conns: int(min(int64(conns), keys)), Inflight: inflight, ValueSize: valueSize,
		Duration: PopulateLimit, MaxOps: keys, SessionTimeout: sessionTimeout, Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("bench: preloading %d nodes: %w", keys, err)
	}
	if r.Errors > 0 {
		return nil, fmt.Errorf("bench: preloading %d nodes: %d creates failed, first %s", keys, r.Errors, r.FirstError)
	}
	return r.Keys, nil
}

// ProbeLeader asks each address for srvr and returns the index of the one
// that leads (or serves standalone), or -1.
func ProbeLeader(ctx context.Context, addrs []string) int {
	for i, a := range addrs {
		out, err := load.FourLetter(ctx, a, "srvr")
		if err != nil {
			continue
		}
		if m := launch.SrvrMode(out); m == launch.ModeLeader || m == launch.ModeStandalone {
			return i
		}
	}
	return -1
}
