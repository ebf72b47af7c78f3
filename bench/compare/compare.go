package compare

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Config configures Compare. Start from DefaultConfig: zero
// counts and durations take the defaults, but a zero ValueSize means empty
// values and a zero warm-up means none.
type Config struct {
	// Targets are measured in this order, each started afresh.
	Targets []string
	// Servers is the number of servers of each target: 1 (the default) is
	// a standalone server, more an ensemble on 127.0.0.1.
	Servers int
	// Timing is the quorum timing in zoo.cfg (zero fields: DefaultTiming).
	Timing   launch.Timing
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
	// Durability is "" (forceSync=yes for both, the default) or sync,
	// async or diskless (corral only), as ycsb's (see durabilityOf).
	Durability string
	// Repeat is how many times the whole target sequence runs,
	// interleaved (corral, zookeeper, corral, zookeeper, ...) so that drift
	// of the machine hits every target alike; 0 means once.
	Repeat int
	// Phases are the phases each target runs, in order, in groups (default
	// DefaultPhases): each group on the target started afresh, so that a
	// phase need not measure what the ones before it left (a tree whose
	// size depends on how fast the target created it, snapshots of it).
	// set and get address the nodes of a create phase before them in
	// their group or, without one, Keys nodes created unmeasured first,
	// so that every target holds a tree of one size. See ParsePhases.
	Phases [][]string
	// Keys is how many nodes are preloaded for a set or get phase that
	// has no create phase before it (0: DefaultKeys).
	Keys int64
	// Rate, if positive, runs the create, set and get phases open loop at
	// Rate requests per second in total (see openloop.go); seqcreate stays
	// one request at a time.
	Rate float64
	// Floor, if set, is the floor probe run in the work directory before
	// the targets (Members gains Servers if missing); each sequential
	// create p50 is then reported as a multiple of the floor for Servers
	// members. nil skips it.
	Floor *floor.Config
	// Client drives the create, set, get and seqcreate phases: ClientLoad
	// (the built-in load generator, the default) or ClientGozk.
	Client string
	// Progress, if set, draws each phase's progress bar.
	Progress *load.Progress
	Log      *slog.Logger
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

// DefaultPhases is the phase order of a compare run: one group, the
// phases one after the other on one start of each target. seqcreate comes
// last so that a short run still measures the loaded phases first. Give
// --phases seqcreate/create/set,get to run each on a fresh start (set and
// get then on trees of the same size for every target; see BENCHMARKS.md).
var DefaultPhases = [][]string{{"create", "set", "get", "seqcreate"}}

// ParsePhases parses a phase list: groups separated by "/", each a
// comma-separated list of create, set, get and seqcreate; each phase at
// most once in all (checkPhases).
func ParsePhases(s string) ([][]string, error) {
	var groups [][]string
	for _, g := range strings.Split(s, "/") {
		group := []string{}
		for _, p := range strings.Split(g, ",") {
			if p = strings.TrimSpace(p); p != "" {
				group = append(group, p)
			}
		}
		groups = append(groups, group)
	}
	if err := checkPhases(groups); err != nil {
		return nil, fmt.Errorf("%w (in %q)", err, s)
	}
	return groups, nil
}

// checkPhases checks phase groups: none empty, only known phases, each
// at most once in all.
func checkPhases(groups [][]string) error {
	seen := map[string]bool{}
	for _, g := range groups {
		if len(g) == 0 {
			return errors.New("bench: an empty phase group")
		}
		for _, p := range g {
			switch p {
			case "create", "seqcreate", "set", "get":
			default:
				return fmt.Errorf("bench: unknown phase %q (want create, set, get or seqcreate)", p)
			}
			if seen[p] {
				return fmt.Errorf("bench: phase %s given twice", p)
			}
			seen[p] = true
		}
	}
	return nil
}

// FormatPhases is ParsePhases's inverse.
func FormatPhases(groups [][]string) string { return joinPhases(groups, ",", "/") }

// joinPhases joins each group's phases with sep and the groups with
// groupSep.
func joinPhases(groups [][]string, sep, groupSep string) string {
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = strings.Join(g, sep)
	}
	return strings.Join(gs, groupSep)
}

// preloads reports whether a set or get phase of groups has no create
// before it in its group, so that Keys nodes are preloaded for it.
func preloads(groups [][]string) bool {
	for _, g := range groups {
		i := slices.Index(g, "create")
		j := slices.IndexFunc(g, func(p string) bool { return p == "set" || p == "get" })
		if j >= 0 && (i < 0 || i > j) {
			return true
		}
	}
	return false
}

// DefaultConfig is what `corral bench compare` runs without flags.
func DefaultConfig() Config {
	return Config{
		Targets: []string{launch.TargetCorral, launch.TargetZooKeeper},
		Conns:   DefaultConns, Inflight: DefaultInflight, ValueSize: DefaultValueSize,
		Warmup: DefaultWarmup, Duration: DefaultDuration,
		SeqWarmup: DefaultSeqWarmup, SeqDuration: DefaultSeqDuration,
		Java: "java", JavaHeap: launch.DefaultJavaHeap, GlobalOutstandingLimit: launch.DefaultGlobalOutstandingLimit,
		Floor: new(floor.DefaultConfig()), Client: ClientLoad,
	}
}

func (c *Config) fill() {
	if len(c.Targets) == 0 {
		c.Targets = []string{launch.TargetCorral, launch.TargetZooKeeper}
	}
	if c.Servers == 0 {
		c.Servers = 1
	}
	c.Timing = c.Timing.OrDefault()
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
		c.JavaHeap = launch.DefaultJavaHeap
	}
	if c.Java == "" {
		c.Java = "java"
	}
	if c.GlobalOutstandingLimit == 0 {
		c.GlobalOutstandingLimit = launch.DefaultGlobalOutstandingLimit
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Client == "" {
		c.Client = ClientLoad
	}
	if c.Repeat < 1 {
		c.Repeat = 1
	}
	if len(c.Phases) == 0 {
		c.Phases = DefaultPhases
	}
	if c.Keys <= 0 {
		c.Keys = DefaultKeys
	}
}

// Report is the outcome of a compare or run invocation.
type Report struct {
	Mode    string // "compare" or "run"
	Start   time.Time
	Env     bench.Env
	Servers []bench.ServerInfo
	Results []load.PhaseResult
	// Client is what drove the phases (ClientLoad or ClientGozk); empty
	// means ClientLoad.
	Client string
	// Floor is the floor probe's report; nil if it did not run.
	Floor *floor.Report
	// Plots are the PNG files written beside report.md (latency CDFs).
	Plots []string
}

// Compare starts each target in turn from the same generated zoo.cfg,
// measures the create, set, get and sequential create phases against it,
// and stops it. A target that fails is reported and the others still run;
// the returned error joins the failures.
func Compare(ctx context.Context, cfg Config) (*Report, error) {
	cfg.fill()
	if err := checkPhases(cfg.Phases); err != nil {
		return nil, err
	}
	if cfg.Client != ClientLoad && cfg.Client != ClientGozk {
		return nil, fmt.Errorf("bench: unknown client %q (want %s or %s)", cfg.Client, ClientLoad, ClientGozk)
	}
	if cfg.Client == ClientGozk && cfg.Rate > 0 {
		return nil, errors.New("bench: the gozk client runs closed loop only (no rate)")
	}
	for _, t := range cfg.Targets {
		if t != launch.TargetCorral && t != launch.TargetCorralOps && t != launch.TargetZooKeeper {
			return nil, fmt.Errorf("bench: unknown target %q (want %s, %s or %s)", t, launch.TargetCorral, launch.TargetCorralOps, launch.TargetZooKeeper)
		}
		if _, err := bench.DurabilityOf(cfg.Durability, t); err != nil {
			return nil, err
		}
	}
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &Report{Mode: "compare", Start: time.Now(), Env: bench.NewEnv()}
	rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = cfg.Conns, cfg.Inflight, cfg.ValueSize
	rep.Env.Warmup, rep.Env.Duration = cfg.Warmup, cfg.Duration
	rep.Env.SeqWarmup, rep.Env.SeqDuration = cfg.SeqWarmup, cfg.SeqDuration
	rep.Env.GlobalOutstandingLimit = cfg.GlobalOutstandingLimit
	rep.Env.WorkDir = work
	rep.Env.Servers, rep.Env.Timing = cfg.Servers, cfg.Timing
	rep.Env.Repeat, rep.Env.Rate, rep.Env.Durability = cfg.Repeat, cfg.Rate, cfg.Durability
	rep.Env.Phases = cfg.Phases
	rep.Client = cfg.Client
	if preloads(cfg.Phases) {
		rep.Env.Keys = cfg.Keys
	}
	if cfg.Repeat > 1 {
		prepareOnce(ctx, &cfg, work)
	}

	var errs []error
	if cfg.Floor != nil {
		fc := *cfg.Floor
		fc.Dir, fc.Log = work, cfg.Log
		if !slices.Contains(fc.Members, cfg.Servers) {
			fc.Members = append(slices.Clone(fc.Members), cfg.Servers)
		}
		var err error
		if rep.Floor, err = floor.Run(ctx, fc); err != nil {
			errs = append(errs, fmt.Errorf("floor: %w", err))
		}
	}
	for run := 1; run <= cfg.Repeat && ctx.Err() == nil; run++ {
		for _, t := range cfg.Targets {
			if ctx.Err() != nil {
				break
			}
			for _, group := range cfg.Phases {
				if ctx.Err() != nil {
					break
				}
				info, results, err := compareTarget(ctx, cfg, work, t, runNumber(run, cfg.Repeat), group)
				rep.Servers = append(rep.Servers, info)
				rep.Results = append(rep.Results, results...)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", info.Label(), err))
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// compareTarget starts target, runs the phases of one group against it
// and stops it.
func compareTarget(ctx context.Context, cfg Config, work, target string, runNo int, phases []string) (bench.ServerInfo, []load.PhaseResult, error) {
	info := bench.ServerInfo{Target: target, Run: runNo}
	if len(cfg.Phases) > 1 {
		info.Phases = phases
	}
	fail := func(err error) (bench.ServerInfo, []load.PhaseResult, error) {
		info.Err = err.Error()
		return info, nil, err
	}
	lc := launch.LaunchConfig{
		Dir: filepath.Join(work, info.FileBase()), GlobalOutstandingLimit: cfg.GlobalOutstandingLimit, Timing: cfg.Timing,
		CorralBin: cfg.CorralBin, Java: cfg.Java, JavaHeap: cfg.JavaHeap, ZKLib: cfg.ZKLib, Log: cfg.Log,
	}
	lc.Durability, _ = bench.DurabilityOf(cfg.Durability, target) // checked by Compare
	if target == launch.TargetZooKeeper {
		info.JavaHeap = cfg.JavaHeap
	}
	if err := bench.PrepareLaunch(ctx, target, &lc, work); err != nil {
		return fail(err)
	}
	start := bench.StartStandalone
	if cfg.Servers > 1 {
		start = bench.StartEnsemble
	}
	ut, err := start(ctx, bench.StartSpec{Servers: cfg.Servers, OutDir: cfg.OutDir, Keep: cfg.Keep}, lc, &info)
	if err != nil {
		return fail(err)
	}

	base := load.PhaseConfig{
		Target: target, Addrs: ut.Addrs, Conns: cfg.Conns, Inflight: cfg.Inflight,
		ValueSize: cfg.ValueSize, Warmup: cfg.Warmup, Duration: cfg.Duration,
		ServerPID: ut.Pid, ServerProcs: ut.Procs, FsyncAddrs: ut.Addrs, Log: cfg.Log,
		Run: runNo, Rate: cfg.Rate, Progress: cfg.Progress,
	}
	var results []load.PhaseResult
	var errs []error
	run := func(pc load.PhaseConfig) load.PhaseResult {
		runPhase := load.RunPhase
		if cfg.Client == ClientGozk {
			runPhase = runGozkPhase
		}
		r, err := runPhase(ctx, pc)
		if r.Phase == "" { // refused before it started
			r = load.PhaseResult{Target: target, Run: runNo, Phase: pc.Phase, Workload: pc.Workload, Err: err.Error()}
		}
		results = append(results, r)
		if err != nil {
			errs = append(errs, err)
		}
		return r
	}

	var keys *load.KeySpace
	for _, ph := range phases {
		if ctx.Err() != nil {
			break
		}
		pc := base
		switch ph {
		case "create":
			pc.Workload, pc.Phase, pc.Prefix = load.WorkloadCreate, "create", "c"
			keys = run(pc).Keys
		case "set", "get":
			if keys == nil {
				var err error
				if keys, err = bench.Preload(ctx, target, ut.Addrs, cfg.Keys, cfg.Conns, cfg.Inflight, cfg.ValueSize, 0, cfg.Log); err != nil {
					results = append(results, load.PhaseResult{Target: target, Run: runNo, Phase: ph, Workload: load.Workload(ph), Err: err.Error()})
					errs = append(errs, err)
					continue
				}
			}
			pc.Workload, pc.Phase, pc.Keys = load.Workload(ph), ph, keys
			run(pc)
		case "seqcreate":
			pc.Workload, pc.Phase, pc.Prefix = load.WorkloadSeqCreate, "seqcreate", "s"
			pc.Conns, pc.Inflight, pc.Rate = 1, 1, 0
			pc.Warmup, pc.Duration = cfg.SeqWarmup, cfg.SeqDuration
			run(pc)
		}
	}
	ut.Finish(&info)
	return info, results, errors.Join(errs...)
}
