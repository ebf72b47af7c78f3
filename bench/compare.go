package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// CompareConfig configures Compare. Start from DefaultCompareConfig: zero
// counts and durations take the defaults, but a zero ValueSize means empty
// values and a zero warm-up means none.
type CompareConfig struct {
	// Targets are measured in this order, each started afresh.
	Targets  []string
	Conns    int
	Inflight int
	// ValueSize is the data size of create and setData.
	ValueSize int
	// Warmup and Duration apply to each of the create, set and get phases;
	// SeqWarmup and SeqDuration to the sequential create phase.
	Warmup      time.Duration
	Duration    time.Duration
	SeqWarmup   time.Duration
	SeqDuration time.Duration
	// WorkDir is where the per-run temporary directory (configuration,
	// data, server output) is made; the system's temp dir if empty. It is
	// removed afterwards unless Keep.
	WorkDir string
	Keep    bool
	// OutDir, if set, receives each server's zoo.cfg and output.
	OutDir                 string
	CorralBin              string
	ZKLib                  string
	Java                   string
	JavaHeap               string
	GlobalOutstandingLimit int
	Log                    *slog.Logger
}

// Compare defaults.
const (
	DefaultConns       = 32
	DefaultInflight    = 32
	DefaultValueSize   = 1024
	DefaultWarmup      = 3 * time.Second
	DefaultDuration    = 10 * time.Second
	DefaultSeqWarmup   = 1 * time.Second
	DefaultSeqDuration = 5 * time.Second
)

// DefaultCompareConfig is what `corral bench compare` runs without flags.
func DefaultCompareConfig() CompareConfig {
	return CompareConfig{
		Targets: []string{TargetCorral, TargetZooKeeper},
		Conns:   DefaultConns, Inflight: DefaultInflight, ValueSize: DefaultValueSize,
		Warmup: DefaultWarmup, Duration: DefaultDuration,
		SeqWarmup: DefaultSeqWarmup, SeqDuration: DefaultSeqDuration,
		Java: "java", JavaHeap: DefaultJavaHeap, GlobalOutstandingLimit: DefaultGlobalOutstandingLimit,
	}
}

func (c *CompareConfig) fill() {
	if len(c.Targets) == 0 {
		c.Targets = []string{TargetCorral, TargetZooKeeper}
	}
	if c.Conns == 0 {
		c.Conns = DefaultConns
	}
	if c.Inflight == 0 {
		c.Inflight = DefaultInflight
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.SeqDuration == 0 {
		c.SeqDuration = DefaultSeqDuration
	}
	if c.JavaHeap == "" {
		c.JavaHeap = DefaultJavaHeap
	}
	if c.Java == "" {
		c.Java = "java"
	}
	if c.GlobalOutstandingLimit == 0 {
		c.GlobalOutstandingLimit = DefaultGlobalOutstandingLimit
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Report is the outcome of a compare or run invocation.
type Report struct {
	Mode    string // "compare" or "run"
	Start   time.Time
	Env     Env
	Servers []ServerInfo
	Results []PhaseResult
}

// Env records the conditions of the measurement.
type Env struct {
	GOOS, GOARCH           string
	CPUs                   int
	GOMAXPROCS             int
	GoVersion              string
	Conns                  int
	Inflight               int
	ValueSize              int
	Warmup, Duration       time.Duration
	SeqWarmup, SeqDuration time.Duration
	GlobalOutstandingLimit int
	WorkDir                string
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start:
	// anything well above zero means the CPUs were not the benchmark's own.
	LoadAvg string
}

// ServerInfo describes one server under test.
type ServerInfo struct {
	Target   string
	Addr     string
	Version  string
	Argv     []string
	JavaHeap string
	Err      string
}

func newEnv() Env {
	e := Env{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			e.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return e
}

// Compare starts each target in turn from the same generated zoo.cfg,
// measures the create, set, get and sequential create phases against it,
// and stops it. A target that fails is reported and the others still run;
// the returned error joins the failures.
func Compare(ctx context.Context, cfg CompareConfig) (*Report, error) {
	cfg.fill()
	for _, t := range cfg.Targets {
		if t != TargetCorral && t != TargetZooKeeper {
			return nil, fmt.Errorf("bench: unknown target %q (want %s or %s)", t, TargetCorral, TargetZooKeeper)
		}
	}
	work, err := os.MkdirTemp(cfg.WorkDir, "corral-bench-")
	if err != nil {
		return nil, err
	}
	if cfg.Keep {
		cfg.Log.Info("keeping work directory", "dir", work)
	} else {
		defer os.RemoveAll(work)
	}
	rep := &Report{Mode: "compare", Start: time.Now(), Env: newEnv()}
	rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = cfg.Conns, cfg.Inflight, cfg.ValueSize
	rep.Env.Warmup, rep.Env.Duration = cfg.Warmup, cfg.Duration
	rep.Env.SeqWarmup, rep.Env.SeqDuration = cfg.SeqWarmup, cfg.SeqDuration
	rep.Env.GlobalOutstandingLimit = cfg.GlobalOutstandingLimit
	rep.Env.WorkDir = work

	var errs []error
	for _, t := range cfg.Targets {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		info, results, err := compareTarget(ctx, cfg, work, t)
		rep.Servers = append(rep.Servers, info)
		rep.Results = append(rep.Results, results...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
		}
	}
	return rep, errors.Join(errs...)
}

func compareTarget(ctx context.Context, cfg CompareConfig, work, target string) (ServerInfo, []PhaseResult, error) {
	info := ServerInfo{Target: target}
	fail := func(err error) (ServerInfo, []PhaseResult, error) {
		info.Err = err.Error()
		return info, nil, err
	}
	lc := LaunchConfig{
		Dir: filepath.Join(work, target), GlobalOutstandingLimit: cfg.GlobalOutstandingLimit,
		CorralBin: cfg.CorralBin, Java: cfg.Java, JavaHeap: cfg.JavaHeap, ZKLib: cfg.ZKLib, Log: cfg.Log,
	}
	switch {
	case target == TargetCorral && lc.CorralBin == "":
		cfg.Log.Info("building corral")
		bin, err := buildCorral(ctx, work)
		if err != nil {
			return fail(err)
		}
		lc.CorralBin = bin
	case target == TargetZooKeeper:
		info.JavaHeap = cfg.JavaHeap
		if lc.ZKLib == "" {
			lib, err := zookeeperLib(ctx)
			if err != nil {
				return fail(err)
			}
			lc.ZKLib = lib
		}
	}
	srv, err := Launch(ctx, target, lc)
	if err != nil {
		return fail(err)
	}
	info.Version, info.Argv, info.Addr = srv.Version, srv.Argv, srv.Addr
	defer func() {
		srv.Stop()
		if cfg.OutDir != "" {
			copyFile(srv.LogPath, filepath.Join(cfg.OutDir, target+".log"))
			copyFile(srv.ZooCfgPath, filepath.Join(cfg.OutDir, target+".zoo.cfg"))
		}
		if !cfg.Keep {
			// Free the disk before the next target runs.
			os.RemoveAll(srv.DataDir)
		}
	}()

	base := PhaseConfig{
		Target: target, Addrs: []string{srv.Addr}, Conns: cfg.Conns, Inflight: cfg.Inflight,
		ValueSize: cfg.ValueSize, Warmup: cfg.Warmup, Duration: cfg.Duration,
		ServerPID: srv.PID(), Log: cfg.Log,
	}
	var results []PhaseResult
	var errs []error
	run := func(pc PhaseConfig) PhaseResult {
		r, err := RunPhase(ctx, pc)
		if r.Phase == "" { // refused before it started
			r = PhaseResult{Target: target, Phase: pc.Phase, Workload: pc.Workload, Err: err.Error()}
		}
		results = append(results, r)
		if err != nil {
			errs = append(errs, err)
		}
		return r
	}

	create := base
	create.Workload, create.Phase, create.Prefix = WorkloadCreate, "create", "c"
	cr := run(create)
	for _, w := range []Workload{WorkloadSet, WorkloadGet} {
		if ctx.Err() != nil {
			break
		}
		pc := base
		pc.Workload, pc.Phase, pc.Keys = w, string(w), cr.Keys
		run(pc)
	}
	if ctx.Err() == nil {
		seq := base
		seq.Workload, seq.Phase, seq.Prefix = WorkloadSeqCreate, "seqcreate", "s"
		seq.Conns, seq.Inflight = 1, 1
		seq.Warmup, seq.Duration = cfg.SeqWarmup, cfg.SeqDuration
		run(seq)
	}
	return info, results, errors.Join(errs...)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
