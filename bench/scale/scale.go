package scale

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// The study's scaling experiment (../shared/papers/004_*, §2.2): servers
// and clients scaled together, N servers with k·N clients for N = 1, 2,
// 3, 4, 6, 8, the saturated throughput X(N) measured at each N and the
// Universal Scalability Law fitted to it (see FitUSL).

// Config configures Scale. Start from DefaultConfig.
type Config struct {
	// Targets are measured in this order, each N afresh.
	Targets []string
	// Servers are the N to measure; those above MaxServers are skipped
	// (the machine decides how far it is worth going).
	Servers    []int
	MaxServers int
	// ClientsPerServer is k: N servers get k·N connections, spread
	// round-robin over them (followers first, the leader last), each with
	// Inflight requests outstanding.
	ClientsPerServer int
	Inflight         int
	Workload         load.Workload
	ValueSize        int
	// Keys are created (unmeasured) before a set or get workload.
	Keys int64
	// Durability is levelSync, levelAsync or levelDiskless (corral only).
	Durability string
	Warmup     time.Duration
	Duration   time.Duration
	// Reps is how many measured phases each N gets on its one launch;
	// each is a point of the fit.
	Reps int

	launch.Settings
	// OutDir, if set, receives the servers' zoo.cfg and output (the
	// report and plot are written by the command).
	OutDir string
	// Command is the command line, for the report.
	Command string
	Log     *slog.Logger

	// Run measures one trial; nil launches real servers.
	Run TrialRunner
}

// Run defaults: 6 sizes, a few minutes for both targets on 2 cores.
const (
	DefaultScaleClientsPerServer = 2
	DefaultScaleKeys             = 1000
	DefaultScaleWarmup           = 3 * time.Second
	DefaultScaleDuration         = 5 * time.Second
	maxScaleReps                 = 20
)

// DefaultConfig is what `corral bench scale` runs without flags.
//
// The workload is getData. The study measured 95% reads and 5% updates of
// 1 KB records, the mix it judged typical of ZooKeeper; of the workloads
// a phase can run (create, set, get) reads are the closest, and they are
// what the scaling experiment is about: every server answers the reads of
// its own clients, so read throughput is what adding servers is meant to
// raise, while every write still goes through the one leader and a
// quorum. 1 KiB values match the study's records. k = 2 is the study's
// second stage (1 server : 2 clients), and 32 requests in flight per
// connection keep even N = 1 saturated.
func DefaultConfig() Config {
	return Config{
		Targets: []string{launch.TargetCorral, launch.TargetZooKeeper}, Servers: []int{1, 2, 3, 4, 6, 8}, MaxServers: 8,
		ClientsPerServer: DefaultScaleClientsPerServer, Inflight: compare.DefaultInflight,
		Workload: load.WorkloadGet, ValueSize: compare.DefaultValueSize, Keys: DefaultScaleKeys, Durability: LevelSync,
		Warmup: DefaultScaleWarmup, Duration: DefaultScaleDuration, Reps: 1,
		Settings: launch.DefaultSettings(),
	}
}

// Validate checks the configuration without starting anything.
func (c *Config) Validate() error {
	if len(c.Targets) == 0 {
		return errors.New("bench: no target")
	}
	for _, t := range c.Targets {
		if _, err := DurabilityFor(t, c.Durability); err != nil {
			return err
		}
	}
	if c.MaxServers < 1 || c.MaxServers > launch.MaxServers {
		return fmt.Errorf("bench: max servers %d (want 1 to %d)", c.MaxServers, launch.MaxServers)
	}
	ns := c.sizes()
	if len(ns) < 3 {
		return fmt.Errorf("bench: %d server counts of at most %d (want 3 distinct at least: the fit has three coefficients)",
			len(ns), c.MaxServers)
	}
	for _, n := range c.Servers {
		if n < 1 {
			return fmt.Errorf("bench: %d servers", n)
		}
	}
	if _, err := load.ParseWorkload(string(c.Workload)); err != nil || c.Workload == load.WorkloadSeqCreate {
		return fmt.Errorf("bench: workload %q (want create, set or get)", c.Workload)
	}
	switch {
	case c.ClientsPerServer < 1 || c.ClientsPerServer*c.MaxServers > launch.MaxConns:
		return fmt.Errorf("bench: clients per server must be in [1, %d]", launch.MaxConns/c.MaxServers)
	case c.Inflight < 1 || c.Inflight > launch.MaxInflight:
		return fmt.Errorf("bench: in-flight requests must be in [1, %d]", launch.MaxInflight)
	case c.ValueSize < 0 || c.ValueSize > 1<<20-1024:
		return errors.New("bench: value size must be in [0, 1047552] (jute.maxbuffer)")
	case c.Keys < 1 || c.Keys > 10_000_000:
		return errors.New("bench: keys must be in [1, 10000000]")
	case c.Duration <= 0 || c.Duration > launch.MaxPhase || c.Warmup < 0 || c.Warmup > launch.MaxPhase:
		return fmt.Errorf("bench: duration must be in (0, %v] and warm-up in [0, %v]", launch.MaxPhase, launch.MaxPhase)
	case c.Reps < 1 || c.Reps > maxScaleReps:
		return fmt.Errorf("bench: reps must be in [1, %d]", maxScaleReps)
	}
	return nil
}

// Sizes are the distinct N to measure, ascending, capped by MaxServers.
func (c *Config) sizes() []int {
	var ns []int
	for _, n := range c.Servers {
		if n >= 1 && n <= c.MaxServers && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// Report is the outcome of Scale.
type Report struct {
	Start   time.Time
	Env     bench.Env
	Command string
	// Config is the configuration run (launch settings aside).
	Config ScaleSettings
	// Runs are the trials in the order run: one launch per target and N.
	Runs []ScaleRun
	// Fits are one per target, in the order of Config.Targets.
	Fits []ScaleFit
	// Plots are the PNG files written beside the report (base names).
	Plots []string
}

// ScaleSettings is what a scale run measured, as the report states it.
type ScaleSettings struct {
	Targets          []string      `json:"targets"`
	Servers          []int         `json:"servers"`
	ClientsPerServer int           `json:"clients_per_server"`
	Inflight         int           `json:"inflight"`
	Workload         load.Workload `json:"workload"`
	ValueSize        int           `json:"value_bytes"`
	Keys             int64         `json:"keys"`
	Durability       string        `json:"durability"`
	Warmup           time.Duration `json:"warmup_ns"`
	Duration         time.Duration `json:"duration_ns"`
	Reps             int           `json:"reps"`
	Timing           launch.Timing `json:"timing"`
	JavaHeap         string        `json:"java_heap,omitempty"`
}

// ScaleRun is one target at one N: its servers and measured phases.
type ScaleRun struct {
	Target  string
	N       int
	Clients int
	Server  bench.ServerInfo
	Results []load.PhaseResult
	Err     string
}

// ScaleFit is the USL fit of one target.
type ScaleFit struct {
	Target string `json:"target"`
	// Fit is nil when there were not enough measurements; Err says why.
	Fit  *stats.USLFit `json:"fit,omitempty"`
	Err  string        `json:"error,omitempty"`
	Rows []ScaleRow    `json:"rows"`
	// BaseMeasured says the speedups are relative to the measured X(1);
	// otherwise to the fitted λ (which is the model's X(1)).
	BaseMeasured bool `json:"base_measured"`
}

// ScaleRow is one N of a target's table.
type ScaleRow struct {
	N       int `json:"n"`
	Clients int `json:"clients"`
	// Reps is the number of measurements behind X; 0 if every one failed.
	Reps int `json:"reps"`
	// X is the mean throughput and SD the sample standard deviation of
	// the measurements (0 for one).
	X  float64 `json:"x"`
	SD float64 `json:"sd"`
	// Fitted is the USL's X(N), Speedup X/X(1), Efficiency Speedup/N.
	Fitted     float64 `json:"fitted"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
}

// Run runs the scaling experiment: for each target and each N, a fresh
// set of N servers (a standalone server for N = 1), k·N connections,
// Reps measured phases, then the USL fitted per target. A trial that fails
// is reported and the next N still runs; the returned error joins the
// failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Timing = cfg.Timing.OrDefault()
	rep := &Report{Start: time.Now(), Env: bench.NewEnv(), Command: cfg.Command}
	rep.Config = ScaleSettings{
		Targets: cfg.Targets, Servers: cfg.sizes(), ClientsPerServer: cfg.ClientsPerServer, Inflight: cfg.Inflight,
		Workload: cfg.Workload, ValueSize: cfg.ValueSize, Keys: cfg.Keys, Durability: cfg.Durability,
		Warmup: cfg.Warmup, Duration: cfg.Duration, Reps: cfg.Reps, Timing: cfg.Timing,
	}
	if slices.Contains(cfg.Targets, launch.TargetZooKeeper) {
		rep.Config.JavaHeap = cfg.JavaHeap
	}
	run := cfg.Run
	if run == nil {
		work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-scale-", cfg.Keep, cfg.Log)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		rep.Env.WorkDir = work
		l := &Launcher{CorralBin: cfg.CorralBin, ZKLib: cfg.ZKLib, Java: cfg.Java, JavaHeap: cfg.JavaHeap,
			Timing: cfg.Timing, Work: work, OutDir: cfg.OutDir, Keep: cfg.Keep, Log: cfg.Log}
		run = l.Run
	}
	var errs []error
	for _, target := range cfg.Targets {
		for _, n := range cfg.sizes() {
			if err := ctx.Err(); err != nil {
				return rep, errors.Join(append(errs, err)...)
			}
			spec := TrialSpec{
				Name: fmt.Sprintf("%s n=%d", target, n), Target: target, Servers: n, Durability: cfg.Durability, Reps: cfg.Reps,
				Load: LoadSpec{Workload: cfg.Workload, Conns: cfg.ClientsPerServer * n, Inflight: cfg.Inflight,
					ValueSize: cfg.ValueSize, Warmup: cfg.Warmup, Duration: cfg.Duration, Keys: cfg.Keys},
			}
			info, results, err := run(ctx, spec)
			r := ScaleRun{Target: target, N: n, Clients: spec.Load.Conns, Server: info, Results: results}
			if err != nil {
				r.Err = err.Error()
				errs = append(errs, fmt.Errorf("%s: %w", spec.Name, err))
				cfg.Log.Warn("trial failed; going on with the next", "trial", spec.Name, "err", err)
			}
			rep.Runs = append(rep.Runs, r)
		}
	}
	for _, target := range cfg.Targets {
		rep.Fits = append(rep.Fits, fitScale(rep.Runs, target))
	}
	return rep, errors.Join(errs...)
}

// Usable reports whether a phase measured a throughput that may enter
// the fit: it ran to its end without failing.
func Usable(r *load.PhaseResult) bool { return r.Err == "" && r.Seconds > 0 }

// fitScale fits the USL to target's usable measurements and makes its
// table.
func fitScale(runs []ScaleRun, target string) ScaleFit {
	sf := ScaleFit{Target: target}
	var pts []stats.USLPoint
	for _, run := range runs {
		if run.Target != target {
			continue
		}
		row := ScaleRow{N: run.N, Clients: run.Clients}
		var xs []float64
		for i := range run.Results {
			if r := &run.Results[i]; Usable(r) {
				xs = append(xs, r.OpsPerSec)
				pts = append(pts, stats.USLPoint{N: float64(run.N), X: r.OpsPerSec})
			}
		}
		row.Reps = len(xs)
		row.X, row.SD = bench.MeanSD(xs)
		sf.Rows = append(sf.Rows, row)
	}
	fit, err := stats.FitUSL(pts)
	if err != nil {
		sf.Err = err.Error()
	} else {
		sf.Fit = &fit
	}
	base := 0.0
	for _, row := range sf.Rows {
		if row.N == 1 && row.Reps > 0 {
			base, sf.BaseMeasured = row.X, true
		}
	}
	if !sf.BaseMeasured && sf.Fit != nil {
		base = sf.Fit.Lambda
	}
	for i := range sf.Rows {
		row := &sf.Rows[i]
		if sf.Fit != nil {
			row.Fitted = sf.Fit.Predict(float64(row.N))
		}
		if base > 0 && row.Reps > 0 {
			row.Speedup = row.X / base
			row.Efficiency = row.Speedup / float64(row.N)
		}
	}
	return sf
}
