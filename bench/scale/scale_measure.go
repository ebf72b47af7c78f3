package scale

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// This file is what the scale and factorial experiments share: start a
// fresh server set of some size and durability, measure one workload
// against it a number of times, and stop it.

// LoadSpec is the load of one measurement.
type LoadSpec struct {
	Workload  load.Workload
	Conns     int
	Inflight  int
	ValueSize int
	Warmup    time.Duration
	Duration  time.Duration
	// Keys are created (unmeasured) before a set or get workload.
	Keys int64
}

// TrialSpec is one launch of a server set and the phases measured on it.
type TrialSpec struct {
	// Name labels the trial in logs and names its log directory.
	Name    string
	Target  string
	Servers int
	// Durability is levelSync, levelAsync or levelDiskless.
	Durability string
	Load       LoadSpec
	// Reps is how many times the measured phase runs on the one launch.
	Reps int
}

// TrialRunner starts a trial's servers, measures and stops them. It
// returns what it learned of the servers and a result per measured phase
// (fewer than Reps if it failed part way). Tests substitute a fake.
type TrialRunner func(ctx context.Context, spec TrialSpec) (bench.ServerInfo, []load.PhaseResult, error)

// Durability levels of the scale and factorial experiments.
const (
	LevelSync     = "sync"
	LevelAsync    = "async"
	LevelDiskless = "diskless"
	levelsHelp    = LevelSync + ", " + LevelAsync + " or " + LevelDiskless
)

// DurabilityFor is the zoo.cfg durability of level for target: corral's
// durability key, or for ZooKeeper its closest equivalent, forceSync (as
// DurabilityTargets pairs them). ZooKeeper has no diskless mode.
func DurabilityFor(target, level string) (launch.Durability, error) {
	switch target {
	case launch.TargetCorral:
		switch level {
		case LevelSync, LevelAsync, LevelDiskless:
			return launch.Durability{Mode: level}, nil
		}
	case launch.TargetZooKeeper:
		switch level {
		case LevelSync:
			return launch.Durability{}, nil
		case LevelAsync:
			return launch.Durability{NoForceSync: true}, nil
		case LevelDiskless:
			return launch.Durability{}, fmt.Errorf("bench: %s has no %s mode", launch.TargetZooKeeper, LevelDiskless)
		}
	default:
		return launch.Durability{}, fmt.Errorf("bench: unknown target %q (want %s or %s)", target, launch.TargetCorral, launch.TargetZooKeeper)
	}
	return launch.Durability{}, fmt.Errorf("bench: unknown durability %q (want %s)", level, levelsHelp)
}

// Launcher starts trials' servers on 127.0.0.1: a standalone server for
// one, an ensemble for more, from the same zoo.cfg compare writes but for
// the durability lines.
type Launcher struct {
	CorralBin, ZKLib, Java, JavaHeap string
	Timing                           launch.Timing
	// Work is the run's temporary directory; each trial gets its own
	// directory in it.
	Work string
	// OutDir, if set, receives each trial's zoo.cfg and server output in
	// OutDir/logs/<trial name>.
	OutDir string
	Keep   bool
	Log    *slog.Logger
	trials int
}

// Run is a trialRunner.
func (l *Launcher) Run(ctx context.Context, spec TrialSpec) (bench.ServerInfo, []load.PhaseResult, error) {
	info := bench.ServerInfo{Target: spec.Target}
	fail := func(err error) (bench.ServerInfo, []load.PhaseResult, error) {
		info.Err = err.Error()
		return info, nil, err
	}
	dur, err := DurabilityFor(spec.Target, spec.Durability)
	if err != nil {
		return fail(err)
	}
	l.trials++
	lc := launch.LaunchConfig{
		Dir: filepath.Join(l.Work, fmt.Sprintf("t%03d-%s", l.trials, spec.Target)), GlobalOutstandingLimit: launch.DefaultGlobalOutstandingLimit,
		Timing: l.Timing, CorralBin: l.CorralBin, ZKLib: l.ZKLib, Java: l.Java, JavaHeap: l.JavaHeap,
		Durability: dur, Log: l.Log,
	}
	if spec.Target == launch.TargetZooKeeper {
		info.JavaHeap = l.JavaHeap
	}
	// Build corral or fetch ZooKeeper once, for every later trial.
	if err := bench.PrepareLaunch(ctx, spec.Target, &lc, l.Work); err != nil {
		return fail(err)
	}
	l.CorralBin, l.ZKLib = lc.CorralBin, lc.ZKLib
	cc := bench.StartSpec{Servers: spec.Servers, Keep: l.Keep}
	if l.OutDir != "" {
		cc.OutDir = filepath.Join(l.OutDir, "logs", logDirName(spec.Name))
		if err := os.MkdirAll(cc.OutDir, 0o755); err != nil {
			return fail(err)
		}
	}
	start := bench.StartStandalone
	if spec.Servers > 1 {
		start = bench.StartEnsemble
	}
	l.Log.Info("trial start", "trial", spec.Name, "target", spec.Target, "servers", spec.Servers, "durability", spec.Durability)
	ut, err := start(ctx, cc, lc, &info)
	if err != nil {
		return fail(err)
	}
	results, err := measureLoad(ctx, spec, ut.Addrs, ut.Pid, ut.Procs, l.Log)
	ut.Finish(&info)
	if !l.Keep {
		os.RemoveAll(lc.Dir)
	}
	if err != nil {
		info.Err = err.Error()
	}
	return info, results, err
}

// logDirName makes a trial name a file name: "corral n=3" is "corral-n3".
func logDirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_':
			b.WriteRune(r)
		case r == ' ' || r == ',' || r == '/':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// measureLoad runs spec's load against running servers at addrs: first,
// for set and get, the creation of its keys (unmeasured), then Reps
// Measured phases. pid or procs name the server processes whose CPU is
// Measured. It stops at the first phase that fails, returning it with the
// ones before.
func measureLoad(ctx context.Context, spec TrialSpec, addrs []string, pid int, procs []load.ServerProc, log *slog.Logger) ([]load.PhaseResult, error) {
	ld := spec.Load
	pc := load.PhaseConfig{
		Target: spec.Target, Phase: string(ld.Workload), Addrs: addrs, Workload: ld.Workload,
		Conns: ld.Conns, Inflight: ld.Inflight, ValueSize: ld.ValueSize,
		Warmup: ld.Warmup, Duration: ld.Duration, ServerPID: pid, ServerProcs: procs, Log: log,
	}
	if !ld.Workload.Creates() {
		if ld.Keys < 1 {
			return nil, errors.New("bench: a set or get workload needs keys")
		}
		pop := pc
		pop.Workload, pop.Phase, pop.Warmup, pop.Duration, pop.MaxOps = load.WorkloadCreate, "populate", 0, bench.PopulateLimit, ld.Keys
		pop.ServerPID, pop.ServerProcs = 0, nil
		r, err := load.RunPhase(ctx, pop)
		if err != nil {
			return nil, fmt.Errorf("bench: creating %d keys: %w", ld.Keys, err)
		}
		pc.Keys = r.Keys
	}
	var out []load.PhaseResult
	for rep := range max(spec.Reps, 1) {
		r, err := load.RunPhase(ctx, pc)
		if r.Phase == "" { // refused before it started
			r = load.PhaseResult{Target: spec.Target, Phase: pc.Phase, Workload: pc.Workload, Err: err.Error()}
		}
		out = append(out, r)
		if err != nil {
			return out, fmt.Errorf("%s rep %d: %w", spec.Name, rep+1, err)
		}
	}
	return out, nil
}
