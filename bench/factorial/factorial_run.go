package factorial

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/scale"
	"github.com/corral-db/corral/bench/stats"
)

// The factorial experiment measures a 2^k r design (see AnalyzeFactorial)
// over factors of a server set and its load: each of the 2^k combinations
// of levels r times, each run a fresh launch, in random order.

// Factor names of `corral bench factorial`.
const (
	FactorServers    = "servers"
	FactorValue      = "value"
	FactorDurability = "durability"
	FactorTarget     = "target"
	FactorWorkload   = "workload"
	FactorClients    = "clients"
)

// FactorNames are every factor, in the order the report lists the fixed
// ones.
var FactorNames = []string{FactorServers, FactorValue, FactorDurability, FactorTarget, FactorWorkload, FactorClients}

// Responses the factorial experiment can analyse.
const (
	ResponseOps = "ops" // throughput, operations per second
	ResponseP50 = "p50" // median latency, ms
	ResponseP99 = "p99" // 99th percentile latency, ms
)

// Config configures Factorial. Start from DefaultConfig.
type Config struct {
	// Factors are the factors varied, in order: the first is A, the
	// second B, ...
	Factors []string
	// Levels are every factor's levels: [low, high] for a varied factor;
	// a factor not varied runs at its first level.
	Levels map[string][]string
	Reps   int
	// Seed orders the runs: the 2^k·r runs go in a random order drawn
	// from it, so that drift over the run (a warming disk, another
	// process) spreads over all the effects rather than biasing one.
	Seed     uint64
	Response string
	Inflight int
	Keys     int64
	Warmup   time.Duration
	Duration time.Duration

	CorralBin, ZKLib, Java, JavaHeap string
	Timing                           launch.Timing
	WorkDir                          string
	Keep                             bool
	OutDir                           string
	Command                          string
	Log                              *slog.Logger

	run scale.TrialRunner
}

// Run defaults.
const (
	DefaultFactorialReps     = 2
	DefaultFactorialInflight = 16
	maxFactorialReps         = 10
)

// DefaultConfig is what `corral bench factorial` runs without
// flags: corral, 2^3 over ensemble size (1 vs 3), value size (64 B vs 1
// KiB) and durability (sync vs async), two replications, setData
// throughput. The workload writes because two of the three factors act
// on writes only: a read touches neither the disk nor the quorum, so a
// GetData response would show durability's effect as zero by
// construction. 16 connections with 16 requests in flight saturate every
// combination. 16 runs of a launch, 1000 creates and 3 s + 5 s take
// about three minutes on 2 cores.
func DefaultConfig() Config {
	return Config{
		Factors: []string{FactorServers, FactorValue, FactorDurability},
		Levels: map[string][]string{
			FactorServers: {"1", "3"}, FactorValue: {"64", "1024"}, FactorDurability: {scale.LevelSync, scale.LevelAsync},
			FactorTarget: {launch.TargetCorral}, FactorWorkload: {string(load.WorkloadSet)}, FactorClients: {"16"},
		},
		Reps: DefaultFactorialReps, Seed: 1, Response: ResponseOps, Inflight: DefaultFactorialInflight,
		Keys: scale.DefaultScaleKeys, Warmup: scale.DefaultScaleWarmup, Duration: scale.DefaultScaleDuration,
		Java: "java", JavaHeap: launch.DefaultJavaHeap,
	}
}

// applyLevel sets factor to level in spec.
func applyLevel(spec *scale.TrialSpec, factor, level string) error {
	num := func(lo, hi int) (int, error) {
		n, err := strconv.Atoi(level)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("bench: %s level %q (want an integer in [%d, %d])", factor, level, lo, hi)
		}
		return n, nil
	}
	var err error
	switch factor {
	case FactorServers:
		spec.Servers, err = num(1, launch.MaxServers)
	case FactorValue:
		spec.Load.ValueSize, err = num(0, 1<<20-1024)
	case FactorClients:
		spec.Load.Conns, err = num(1, launch.MaxConns)
	case FactorDurability:
		if _, err = scale.DurabilityFor(launch.TargetCorral, level); err == nil {
			spec.Durability = level
		}
	case FactorTarget:
		if level != launch.TargetCorral && level != launch.TargetZooKeeper {
			return fmt.Errorf("bench: target level %q (want %s or %s)", level, launch.TargetCorral, launch.TargetZooKeeper)
		}
		spec.Target = level
	case FactorWorkload:
		w, perr := load.ParseWorkload(level)
		if perr != nil || w == load.WorkloadSeqCreate {
			return fmt.Errorf("bench: workload level %q (want create, set or get)", level)
		}
		spec.Load.Workload = w
	default:
		return fmt.Errorf("bench: unknown factor %q (want one of %s)", factor, strings.Join(FactorNames, ", "))
	}
	return err
}

// experiments are the 2^k trial specifications in standard order, with
// the levels each runs at, or the first invalid level or combination.
func (c *Config) experiments() ([]scale.TrialSpec, []map[string]string, error) {
	k := len(c.Factors)
	if k < 1 || k > len(FactorNames) {
		return nil, nil, fmt.Errorf("bench: %d factors (want 1 to %d)", k, len(FactorNames))
	}
	for i, f := range c.Factors {
		if !slices.Contains(FactorNames, f) {
			return nil, nil, fmt.Errorf("bench: unknown factor %q (want some of %s)", f, strings.Join(FactorNames, ", "))
		}
		if slices.Contains(c.Factors[:i], f) {
			return nil, nil, fmt.Errorf("bench: factor %q named twice", f)
		}
		if l := c.Levels[f]; len(l) != 2 || l[0] == l[1] {
			return nil, nil, fmt.Errorf("bench: factor %s needs two different levels, low and high (got %q)", f, l)
		}
	}
	for _, f := range FactorNames {
		if len(c.Levels[f]) < 1 {
			return nil, nil, fmt.Errorf("bench: no level for %s", f)
		}
	}
	var specs []scale.TrialSpec
	var levels []map[string]string
	for i := range 1 << k {
		spec := scale.TrialSpec{Reps: 1, Load: scale.LoadSpec{Inflight: c.Inflight, Keys: c.Keys, Warmup: c.Warmup, Duration: c.Duration}}
		lv := map[string]string{}
		for _, f := range FactorNames {
			lv[f] = c.Levels[f][0]
		}
		for j, f := range c.Factors {
			if stats.FactorHigh(i, j) {
				lv[f] = c.Levels[f][1]
			}
		}
		var parts []string
		for _, f := range FactorNames {
			if err := applyLevel(&spec, f, lv[f]); err != nil {
				return nil, nil, err
			}
		}
		for _, f := range c.Factors {
			parts = append(parts, f+"="+lv[f])
		}
		if _, err := scale.DurabilityFor(spec.Target, spec.Durability); err != nil {
			return nil, nil, fmt.Errorf("experiment %d (%s): %w", i+1, strings.Join(parts, ", "), err)
		}
		spec.Name = fmt.Sprintf("exp%d %s", i+1, strings.Join(parts, " "))
		specs = append(specs, spec)
		levels = append(levels, lv)
	}
	return specs, levels, nil
}

func (c *Config) Validate() error {
	if _, _, err := c.experiments(); err != nil {
		return err
	}
	switch {
	case c.Reps < 1 || c.Reps > maxFactorialReps:
		return fmt.Errorf("bench: reps must be in [1, %d]", maxFactorialReps)
	case c.Response != ResponseOps && c.Response != ResponseP50 && c.Response != ResponseP99:
		return fmt.Errorf("bench: response %q (want %s, %s or %s)", c.Response, ResponseOps, ResponseP50, ResponseP99)
	case c.Inflight < 1 || c.Inflight > launch.MaxInflight:
		return fmt.Errorf("bench: in-flight requests must be in [1, %d]", launch.MaxInflight)
	case c.Keys < 1 || c.Keys > 10_000_000:
		return errors.New("bench: keys must be in [1, 10000000]")
	case c.Duration <= 0 || c.Duration > launch.MaxPhase || c.Warmup < 0 || c.Warmup > launch.MaxPhase:
		return fmt.Errorf("bench: duration must be in (0, %v] and warm-up in [0, %v]", launch.MaxPhase, launch.MaxPhase)
	}
	return nil
}

// responseOf is the response c analyses from a phase.
func (c *Config) responseOf(r *load.PhaseResult) (float64, bool) {
	if !scale.Usable(r) {
		return 0, false
	}
	switch c.Response {
	case ResponseP50:
		return load.Ms(r.P50), r.Latency.Count > 0
	case ResponseP99:
		return load.Ms(r.P99), r.Latency.Count > 0
	}
	return r.OpsPerSec, true
}

// Report is the outcome of Factorial.
type Report struct {
	Start    time.Time
	Env      bench.Env
	Command  string
	Settings FactorialSettings
	// Runs are in the order run.
	Runs []FactorialRun
	// Analysis is nil when some run gave no response; Err says why.
	Analysis *stats.FactorialAnalysis
	Err      string
}

// FactorialSettings is what a factorial run measured, as the report
// states it.
type FactorialSettings struct {
	Factors  []string            `json:"factors"`
	Levels   map[string][]string `json:"levels"`
	Reps     int                 `json:"reps"`
	Seed     uint64              `json:"seed"`
	Response string              `json:"response"`
	Inflight int                 `json:"inflight"`
	Keys     int64               `json:"keys"`
	Warmup   time.Duration       `json:"warmup_ns"`
	Duration time.Duration       `json:"duration_ns"`
	Timing   launch.Timing       `json:"timing"`
	JavaHeap string              `json:"java_heap,omitempty"`
}

// FactorialRun is one run: experiment Experiment (0-based, standard
// order), replication Rep (1-based).
type FactorialRun struct {
	Order      int               `json:"order"`
	Experiment int               `json:"experiment"`
	Rep        int               `json:"rep"`
	Levels     map[string]string `json:"levels"`
	Response   float64           `json:"response"`
	OK         bool              `json:"ok"`
	Result     *load.PhaseResult `json:"result,omitempty"`
	Server     bench.ServerInfo  `json:"-"`
	Err        string            `json:"error,omitempty"`
}

// Run runs the 2^k r design and analyses it. A run that fails is
// reported and the others still run (their measurements are in the
// report), but the analysis needs every cell; the returned error joins the
// failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	specs, levels, _ := cfg.experiments()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Timing = cfg.Timing.OrDefault()
	rep := &Report{Start: time.Now(), Env: bench.NewEnv(), Command: cfg.Command}
	rep.Settings = FactorialSettings{Factors: cfg.Factors, Levels: cfg.Levels, Reps: cfg.Reps, Seed: cfg.Seed,
		Response: cfg.Response, Inflight: cfg.Inflight, Keys: cfg.Keys, Warmup: cfg.Warmup, Duration: cfg.Duration, Timing: cfg.Timing}
	if slices.ContainsFunc(specs, func(s scale.TrialSpec) bool { return s.Target == launch.TargetZooKeeper }) {
		rep.Settings.JavaHeap = cfg.JavaHeap
	}
	run := cfg.run
	if run == nil {
		work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-factorial-", cfg.Keep, cfg.Log)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		rep.Env.WorkDir = work
		l := &scale.Launcher{CorralBin: cfg.CorralBin, ZKLib: cfg.ZKLib, Java: cfg.Java, JavaHeap: cfg.JavaHeap,
			Timing: cfg.Timing, Work: work, OutDir: cfg.OutDir, Keep: cfg.Keep, Log: cfg.Log}
		run = l.Run
	}

	type cell struct{ exp, rep int }
	var order []cell
	for i := range specs {
		for r := range cfg.Reps {
			order = append(order, cell{i, r})
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })

	y := make([][]float64, len(specs))
	for i := range y {
		y[i] = make([]float64, cfg.Reps)
	}
	var errs []error
	for n, c := range order {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		spec := specs[c.exp]
		spec.Name = fmt.Sprintf("%s rep%d", spec.Name, c.rep+1)
		cfg.Log.Info("factorial run", "run", n+1, "of", len(order), "trial", spec.Name)
		info, results, err := run(ctx, spec)
		fr := FactorialRun{Order: n + 1, Experiment: c.exp, Rep: c.rep + 1, Levels: levels[c.exp], Server: info}
		if len(results) > 0 {
			fr.Result = &results[0]
			fr.Response, fr.OK = cfg.responseOf(fr.Result)
		}
		switch {
		case err != nil:
			fr.Err = err.Error()
		case !fr.OK:
			fr.Err = "no response measured"
		}
		if fr.Err != "" {
			fr.OK = false
			errs = append(errs, fmt.Errorf("%s: %s", spec.Name, fr.Err))
		} else {
			y[c.exp][c.rep] = fr.Response
		}
		rep.Runs = append(rep.Runs, fr)
	}
	if len(errs) > 0 {
		rep.Err = "no analysis: not every run gave a response"
		return rep, errors.Join(errs...)
	}
	a, err := stats.AnalyzeFactorial(cfg.Factors, y)
	if err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	rep.Analysis = a
	return rep, nil
}
