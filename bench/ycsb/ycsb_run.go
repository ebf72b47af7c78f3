package ycsb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// Config configures RunYCSB. Start from DefaultConfig.
type Config struct {
	// Workloads run in this order against each system, after one load.
	Workloads []YCSBWorkload
	// RecordCount records are loaded (YCSB's recordcount).
	RecordCount int64
	// Threads is the number of client threads, each with its own session
	// (YCSB's threadcount); the load uses as many sessions.
	Threads int
	// LoadInflight is the creates outstanding per load session.
	LoadInflight int
	// Warmup precedes each workload's measured Duration.
	Warmup, Duration time.Duration
	// TargetOps, if positive, paces the threads to this many operations a
	// second together (YCSB's -target): latencies are then also reported
	// from each operation's intended start, so a stall that delays the
	// schedule is counted (no coordinated omission). 0 is a closed loop.
	TargetOps float64
	// SkipLoad assumes Table already holds RecordCount records.
	SkipLoad bool
	// Table is the table node's name under /ycsb; empty picks "usertable"
	// for a launched system and a name unique to the run for --connect.
	Table string
	// Seed seeds every thread's random stream.
	Seed uint64

	// Connect, if not empty, are the client addresses of running servers
	// (measured as one system named Name), and PIDs local processes of
	// theirs whose CPU to measure.
	Connect []string
	Name    string
	PIDs    []int
	// Launch are the systems to start and measure in turn (TargetCorral,
	// TargetZooKeeper), each with Servers servers on 127.0.0.1.
	Launch  []string
	Servers int
	// Durability is "" (forceSync=yes, no durability line: compare's
	// zoo.cfg) or sync, async or diskless (see durabilityOf).
	Durability string

	SessionTimeout time.Duration
	DrainTimeout   time.Duration
	// Timing, WorkDir, Keep, OutDir, CorralBin, ZKLib, Java, JavaHeap and
	// GlobalOutstandingLimit are as in CompareConfig.
	Timing                 launch.Timing
	WorkDir                string
	Keep                   bool
	OutDir                 string
	CorralBin              string
	ZKLib                  string
	Java                   string
	JavaHeap               string
	GlobalOutstandingLimit int
	// CommandLine is how the run was invoked, for the report.
	CommandLine string
	Log         *slog.Logger
}

// YCSB defaults: seven workloads on two systems in about five minutes on
// a 2-core machine, ensemble start-up included.
const (
	DefaultYCSBRecordCount  = 10000
	DefaultYCSBThreads      = 16
	DefaultYCSBLoadInflight = 16
	DefaultYCSBWarmup       = 2 * time.Second
	DefaultYCSBDuration     = 10 * time.Second
	DefaultYCSBServers      = 3
	DefaultYCSBSeed         = 1
	DefaultYCSBWorkloads    = "A,B,C,D,E,F,S"
	MaxYCSBRecordCount      = 10_000_000
	MaxYCSBThreads          = 1024
)

// The node everything lives under, and the load's name in results.
const (
	ycsbRoot      = "/ycsb"
	ycsbLoadPhase = "load"
)

// DefaultConfig is what `corral bench ycsb` runs without flags:
// every workload against a launched corral and ZooKeeper.
func DefaultConfig() Config {
	w, _ := ParseYCSBWorkloads(DefaultYCSBWorkloads, "", 0)
	return Config{
		Workloads: w, RecordCount: DefaultYCSBRecordCount, Threads: DefaultYCSBThreads,
		LoadInflight: DefaultYCSBLoadInflight, Warmup: DefaultYCSBWarmup, Duration: DefaultYCSBDuration,
		Seed: DefaultYCSBSeed, Launch: []string{launch.TargetCorral, launch.TargetZooKeeper}, Servers: DefaultYCSBServers,
		Name: "server", SessionTimeout: bench.DefaultDurSessionTimeout, DrainTimeout: load.DefaultDrainTimeout,
		Timing: launch.DefaultTiming(), Java: "java", JavaHeap: launch.DefaultJavaHeap,
		GlobalOutstandingLimit: launch.DefaultGlobalOutstandingLimit,
	}
}

func (c *Config) Fill() error {
	d := DefaultConfig()
	if len(c.Workloads) == 0 {
		c.Workloads = d.Workloads
	}
	c.RecordCount = cmp.Or(c.RecordCount, d.RecordCount)
	c.Threads = cmp.Or(c.Threads, d.Threads)
	c.LoadInflight = cmp.Or(c.LoadInflight, d.LoadInflight)
	c.Duration = cmp.Or(c.Duration, d.Duration)
	c.Servers = cmp.Or(c.Servers, d.Servers)
	c.Name = cmp.Or(c.Name, d.Name)
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = d.SessionTimeout
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = d.DrainTimeout
	}
	c.Timing = c.Timing.OrDefault()
	c.Java = cmp.Or(c.Java, d.Java)
	c.JavaHeap = cmp.Or(c.JavaHeap, d.JavaHeap)
	c.GlobalOutstandingLimit = cmp.Or(c.GlobalOutstandingLimit, d.GlobalOutstandingLimit)
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.RecordCount < 1 || c.RecordCount > MaxYCSBRecordCount:
		return fmt.Errorf("bench: recordcount %d (want 1 to %d)", c.RecordCount, MaxYCSBRecordCount)
	case c.Threads < 1 || c.Threads > MaxYCSBThreads:
		return fmt.Errorf("bench: %d threads (want 1 to %d)", c.Threads, MaxYCSBThreads)
	case c.LoadInflight < 1 || c.LoadInflight > launch.MaxInflight:
		return fmt.Errorf("bench: %d creates in flight per load session (want 1 to %d)", c.LoadInflight, launch.MaxInflight)
	case c.Duration < 0 || c.Duration > launch.MaxPhase || c.Warmup < 0 || c.Warmup > launch.MaxPhase:
		return fmt.Errorf("bench: duration and warm-up must be in [0, %v]", launch.MaxPhase)
	case c.TargetOps < 0 || c.TargetOps > 0 && c.TargetOps < float64(c.Threads):
		// A thread idle for long would need pings to keep its session.
		return fmt.Errorf("bench: a target rate must be at least one operation a second per thread (%d)", c.Threads)
	case len(c.Connect) == 0 && len(c.Launch) == 0:
		return errors.New("bench: nothing to measure: no servers to connect to or launch")
	case len(c.Connect) > 0 && len(c.Launch) > 0:
		return errors.New("bench: either connect to running servers or launch them, not both")
	case len(c.Launch) > 0 && (c.Servers < 1 || c.Servers > launch.MaxServers):
		return fmt.Errorf("bench: %d servers (want 1 to %d)", c.Servers, launch.MaxServers)
	case c.Table != "" && strings.ContainsAny(c.Table, "/\x00"):
		return fmt.Errorf("bench: table name %q must be one path component", c.Table)
	}
	for _, t := range c.Launch {
		if t != launch.TargetCorral && t != launch.TargetZooKeeper {
			return fmt.Errorf("bench: unknown target %q (want %s or %s)", t, launch.TargetCorral, launch.TargetZooKeeper)
		}
		if _, err := bench.DurabilityOf(c.Durability, t); err != nil {
			return err
		}
	}
	for _, w := range c.Workloads {
		if w.Scan > 0 && (w.MaxScanLength < 1 || w.MaxScanLength > MaxYCSBScanLength) {
			return fmt.Errorf("bench: workload %s: scan length bound %d (want 1 to %d)", w.Name, w.MaxScanLength, MaxYCSBScanLength)
		}
	}
	return nil
}

// Report is the outcome of a YCSB run.
type Report struct {
	Start, End  time.Time
	CommandLine string
	Env         bench.Env
	LoadAvgEnd  string
	Config      Config
	Servers     []bench.ServerInfo
	Results     []YCSBResult
}

// YCSBResult is one workload (or the load) against one system.
// Throughput counts successful operations that finished in the measured
// interval, over its length; a read-modify-write that met BadVersion is a
// conflict, neither success nor error.
type YCSBResult struct {
	Target       string  `json:"target"`
	Workload     string  `json:"workload"`
	Distribution string  `json:"distribution,omitempty"`
	Mix          string  `json:"mix"`
	Threads      int     `json:"threads"`
	Inflight     int     `json:"inflight,omitempty"`
	RecordCount  int64   `json:"recordcount"`
	Seconds      float64 `json:"seconds"`
	Ops          int64   `json:"ops"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	Errors       int64   `json:"errors"`
	Conflicts    int64   `json:"conflicts"`
	// ConnErrors are operations lost to a failed connection, Reconnects
	// the sessions opened in their place.
	ConnErrors      int64          `json:"conn_errors"`
	Reconnects      int64          `json:"reconnects"`
	FirstConnError  string         `json:"first_conn_error,omitempty"`
	TargetOpsPerSec float64        `json:"target_ops_per_sec,omitempty"`
	PerOp           []YCSBOpResult `json:"per_op"`
	load.CPUUse
	LoadAvg string `json:"load_avg,omitempty"`
	Err     string `json:"error,omitempty"`
}

// YCSBOpResult is one operation kind of a workload.
type YCSBOpResult struct {
	Op         string  `json:"op"`
	Ops        int64   `json:"ops"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Conflicts  int64   `json:"conflicts,omitempty"`
	// Records are the records scans read.
	Records int64 `json:"records,omitempty"`
	// Latency is of successful operations; Intended, in target mode, of
	// the same operations from their intended start.
	Latency  stats.Latency  `json:"latency"`
	Intended *stats.Latency `json:"intended_latency,omitempty"`
}

// Run loads the records and runs the workloads against running
// servers (cfg.Connect) or against each launched system in turn, which it
// starts on 127.0.0.1 from the same generated zoo.cfg and stops by PID. A
// system or workload that fails is reported and the rest still run; the
// returned error joins the failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Fill(); err != nil {
		return nil, err
	}
	rep := &Report{Start: time.Now(), CommandLine: cfg.CommandLine, Env: bench.NewEnv(), Config: cfg}
	rep.Env.Conns, rep.Env.Warmup, rep.Env.Duration = cfg.Threads, cfg.Warmup, cfg.Duration
	rep.Env.ValueSize, rep.Env.GlobalOutstandingLimit = ycsbRecordSize, cfg.GlobalOutstandingLimit
	defer func() {
		rep.End = time.Now()
		rep.LoadAvgEnd = bench.LoadAvg()
	}()
	if len(cfg.Connect) > 0 {
		info := bench.ServerInfo{Target: cfg.Name, Addr: strings.Join(cfg.Connect, ",")}
		if out, err := load.FourLetter(ctx, cfg.Connect[0], "srvr"); err == nil {
			info.Version = launch.FirstLine(out)
		}
		var procs []load.ServerProc
		for _, pid := range cfg.PIDs {
			procs = append(procs, load.ServerProc{Name: "pid " + strconv.Itoa(pid), PID: pid})
		}
		table := cfg.Table
		if table == "" {
			table = "usertable-" + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
		}
		results, err := ycsbSystem(ctx, &cfg, cfg.Name, cfg.Connect, procs, table)
		rep.Servers = append(rep.Servers, info)
		rep.Results = append(rep.Results, results...)
		return rep, err
	}

	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-ycsb-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep.Env.WorkDir, rep.Env.Servers, rep.Env.Timing = work, cfg.Servers, cfg.Timing
	var errs []error
	for _, t := range cfg.Launch {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		info, results, err := ycsbLaunched(ctx, &cfg, work, t)
		rep.Servers = append(rep.Servers, info)
		rep.Results = append(rep.Results, results...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
		}
	}
	return rep, errors.Join(errs...)
}

// ycsbLaunched starts target as compare does (standalone for one server,
// else an ensemble with the threads spread followers first), runs the
// load and the workloads, and stops it.
func ycsbLaunched(ctx context.Context, cfg *Config, work, target string) (bench.ServerInfo, []YCSBResult, error) {
	info := bench.ServerInfo{Target: target}
	fail := func(err error) (bench.ServerInfo, []YCSBResult, error) {
		info.Err = err.Error()
		return info, nil, err
	}
	dur, err := bench.DurabilityOf(cfg.Durability, target)
	if err != nil {
		return fail(err)
	}
	lc := launch.LaunchConfig{
		Dir: filepath.Join(work, target), GlobalOutstandingLimit: cfg.GlobalOutstandingLimit, Timing: cfg.Timing,
		CorralBin: cfg.CorralBin, Java: cfg.Java, JavaHeap: cfg.JavaHeap, ZKLib: cfg.ZKLib, Log: cfg.Log,
		Durability: dur,
	}
	if target == launch.TargetZooKeeper {
		info.JavaHeap = cfg.JavaHeap
	}
	if err := bench.PrepareLaunch(ctx, target, &lc, work); err != nil {
		return fail(err)
	}
	// The shared launchers (target.go).
	cc := bench.StartSpec{Servers: cfg.Servers, OutDir: cfg.OutDir, Keep: cfg.Keep}
	start := bench.StartStandalone
	if cfg.Servers > 1 {
		start = bench.StartEnsemble
	}
	cfg.Log.Info("starting", "target", target, "servers", cfg.Servers)
	ut, err := start(ctx, cc, lc, &info)
	if err != nil {
		return fail(err)
	}
	procs := ut.Procs
	if ut.Pid != 0 {
		procs = []load.ServerProc{{Name: "standalone", PID: ut.Pid}}
	}
	table := cfg.Table
	if table == "" {
		table = "usertable"
	}
	results, err := ycsbSystem(ctx, cfg, target, ut.Addrs, procs, table)
	ut.Finish(&info)
	return info, results, err
}

// ycsbSystem runs the load (unless skipped) and every workload against
// one system.
func ycsbSystem(ctx context.Context, cfg *Config, name string, addrs []string, procs []load.ServerProc, table string) ([]YCSBResult, error) {
	tg := &ycsbTarget{
		name: name, addrs: addrs, procs: procs, table: ycsbRoot + "/" + table,
		inserts: newAckCounter(cfg.RecordCount), cfg: cfg, log: cfg.Log,
	}
	var results []YCSBResult
	var errs []error
	add := func(r YCSBResult) {
		results = append(results, r)
		if r.Err != "" {
			errs = append(errs, errors.New(r.Err))
		}
	}
	if !cfg.SkipLoad {
		if err := tg.setup(ctx); err != nil {
			return nil, fmt.Errorf("bench: %s: creating %s: %w", name, tg.table, err)
		}
		add(tg.load(ctx))
	}
	for i, w := range cfg.Workloads {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		add(tg.run(ctx, w, i))
	}
	return results, errors.Join(errs...)
}
