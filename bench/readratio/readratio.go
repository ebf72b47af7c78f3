package readratio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// Config configures ReadRatio: the ZooKeeper paper's saturated
// throughput against the share of reads (§5.1, Fig. 5 and Table 1; with
// LeaderOnly, Fig. 6). Start from DefaultConfig.
type Config struct {
	// Targets are launched in this order, an ensemble of each of Servers'
	// Sizes each; ignored when Connect is set.
	Targets []string
	Servers []int
	// Connect, if set, are the client addresses of a running ensemble to
	// measure instead.
	Connect []string
	// Ratios are the read percentages measured, in order.
	Ratios []int
	// LeaderOnly connects every client to the leader (Fig. 6); otherwise
	// the clients spread over all members, followers first.
	LeaderOnly bool
	Conns      int
	Inflight   int
	// ValueSize is the size of the preloaded nodes and of every setData.
	ValueSize int
	// Keys is the number of nodes preloaded (unmeasured) in each ensemble.
	Keys int64
	// Warmup (unmeasured) and Duration (measured) apply to each ratio.
	Warmup, Duration time.Duration
	SessionTimeout   time.Duration
	// Seed makes the requests' random choices reproducible.
	Seed uint64
	// Command is the command line the report quotes.
	Command string
	bench.LaunchSpec
}

// defaultReadRatios are the paper's x axis, with 90 where the curves bend.
var defaultReadRatios = []int{0, 20, 40, 60, 80, 90, 100}

// DefaultReadRatioDuration is the measured interval per ratio. With the
// 2 s warm-up, seven ratios and ensembles of 3 and 5, a run of both
// servers takes about five minutes on a 2-core machine.
const DefaultReadRatioDuration = 5 * time.Second

// DefaultConfig is what `corral bench readratio` runs without
// flags.
func DefaultConfig() Config {
	return Config{
		Targets: []string{launch.TargetCorral, launch.TargetZooKeeper}, Servers: []int{3, 5},
		Ratios: append([]int(nil), defaultReadRatios...),
		Conns:  bench.DefaultMixedConns, Inflight: bench.DefaultMixedInflight, ValueSize: bench.DefaultMixedValue, Keys: bench.DefaultMixedKeys,
		Warmup: bench.DefaultMixedWarmup, Duration: DefaultReadRatioDuration, SessionTimeout: bench.DefaultSessionTimeout,
		Seed:       1,
		LaunchSpec: bench.LaunchSpec{Timing: launch.DefaultTiming(), Java: "java", JavaHeap: launch.DefaultJavaHeap},
	}
}

// ParseReadRatios reads a comma-separated list of read percentages, each
// in [0, 100] and named once.
func ParseReadRatios(s string) ([]int, error) {
	v, err := launch.ParseInts(s)
	if err != nil {
		return nil, fmt.Errorf("bench: read ratios %q: %w", s, err)
	}
	if len(v) == 0 {
		return nil, errors.New("bench: no read ratio")
	}
	seen := map[int]bool{}
	for _, r := range v {
		if r < 0 || r > 100 {
			return nil, fmt.Errorf("bench: read ratio %d%% is not in [0, 100]", r)
		}
		if seen[r] {
			return nil, fmt.Errorf("bench: read ratio %d%% named twice", r)
		}
		seen[r] = true
	}
	return v, nil
}

func (c *Config) Validate() error {
	var errs []error
	if len(c.Connect) == 0 {
		if len(c.Targets) == 0 || len(c.Servers) == 0 {
			errs = append(errs, errors.New("bench: nothing to launch"))
		}
		for _, t := range c.Targets {
			if t != launch.TargetCorral && t != launch.TargetZooKeeper {
				errs = append(errs, fmt.Errorf("bench: unknown target %q", t))
			}
		}
		for _, n := range c.Servers {
			if n < 1 || n > launch.MaxServers {
				errs = append(errs, fmt.Errorf("bench: ensemble size %d not in [1, %d]", n, launch.MaxServers))
			}
		}
	}
	if _, err := ParseReadRatios(launch.JoinInts(c.Ratios)); err != nil {
		errs = append(errs, err)
	}
	switch {
	case c.Conns < 1 || c.Conns > launch.MaxConns || c.Inflight < 1 || c.Inflight > launch.MaxInflight:
		errs = append(errs, fmt.Errorf("bench: conns and inflight must be in [1, %d]", launch.MaxConns))
	case c.Keys < 1 || c.Keys > bench.MaxMixedKeys:
		errs = append(errs, fmt.Errorf("bench: keys must be in [1, %d]", bench.MaxMixedKeys))
	case c.ValueSize < 0 || c.ValueSize > 1<<20-1024:
		errs = append(errs, errors.New("bench: value size must be in [0, 1047552]"))
	case c.Duration <= 0 || c.Duration > launch.MaxPhase || c.Warmup < 0 || c.Warmup > launch.MaxPhase:
		errs = append(errs, fmt.Errorf("bench: duration must be in (0, %v] and warm-up in [0, %v]", launch.MaxPhase, launch.MaxPhase))
	}
	return errors.Join(errs...)
}

// Report is the outcome of ReadRatio.
type Report struct {
	Start   time.Time
	Env     bench.Env
	Command string
	// LeaderOnly says every client was on the leader.
	LeaderOnly     bool
	Ratios         []int
	Keys           int64
	SessionTimeout time.Duration
	Ensembles      []RatioEnsemble
	Cells          []RatioCell
	// Plots are the PNG files written beside the report.
	Plots []string
	Err   string
}

// RatioEnsemble is one ensemble the run measured.
type RatioEnsemble struct {
	Target  string `json:"target"`
	Servers int    `json:"servers"`
	// Addrs are the members' client addresses; Clients those the
	// connections were spread over, in order.
	Addrs    []string `json:"addrs"`
	Clients  []string `json:"clients"`
	Version  string   `json:"version,omitempty"`
	Argv     []string `json:"argv,omitempty"`
	JavaHeap string   `json:"java_heap,omitempty"`
	// Leader is the member that led when the measurement began (0 when
	// unknown), LeaderAfter the one at the end if that differs.
	Leader      int    `json:"leader,omitempty"`
	LeaderAfter int    `json:"leader_after,omitempty"`
	Err         string `json:"error,omitempty"`
}

// RatioCell is one ensemble at one read ratio. Its PhaseResult's Phase is
// "read<pct>".
type RatioCell struct {
	Servers int `json:"servers"`
	ReadPct int `json:"read_pct"`
	// Reads and Writes are the requests issued, warm-up included: their
	// share checks the mix.
	Reads  int64 `json:"reads_issued"`
	Writes int64 `json:"writes_issued"`
	load.PhaseResult
}

// Run measures, for each target and ensemble size (or the ensemble
// at cfg.Connect), the saturated throughput of a mix of getData and
// setData at each read ratio. A failed ensemble or cell is reported and
// the run goes on; the returned error joins the failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = bench.DefaultSessionTimeout
	}
	rep := &Report{
		Start: time.Now(), Env: bench.NewEnv(), Command: cfg.Command, LeaderOnly: cfg.LeaderOnly,
		Ratios: cfg.Ratios, Keys: cfg.Keys, SessionTimeout: cfg.SessionTimeout,
	}
	rep.Env.Conns, rep.Env.Inflight, rep.Env.ValueSize = cfg.Conns, cfg.Inflight, cfg.ValueSize
	rep.Env.Warmup, rep.Env.Duration = cfg.Warmup, cfg.Duration
	if len(cfg.Connect) > 0 {
		err := ratioConnected(ctx, cfg, rep)
		if err != nil {
			rep.Err = err.Error()
		}
		return rep, err
	}
	rep.Env.Timing = cfg.Timing.OrDefault()
	rep.Env.GlobalOutstandingLimit = launch.DefaultGlobalOutstandingLimit
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-readratio-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep.Env.WorkDir = work
	if err := cfg.Prepare(ctx, cfg.Targets, work); err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	var errs []error
	for _, t := range cfg.Targets {
		for _, n := range cfg.Servers {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				rep.Err = errors.Join(errs...).Error()
				return rep, errors.Join(errs...)
			}
			if err := ratioEnsemble(ctx, cfg, rep, work, t, n); err != nil {
				errs = append(errs, fmt.Errorf("%s, %d servers: %w", t, n, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	return rep, nil
}

// ratioEnsemble launches target's ensemble of n, preloads it and measures
// every ratio against it.
func ratioEnsemble(ctx context.Context, cfg Config, rep *Report, work, target string, n int) error {
	re := RatioEnsemble{Target: target, Servers: n}
	if target == launch.TargetZooKeeper {
		re.JavaHeap = cfg.JavaHeap
	}
	cfg.Log.Info("starting ensemble", "target", target, "servers", n)
	ens, leader, stop, err := cfg.Start(ctx, work, target, n, fmt.Sprintf("%s-%d", target, n))
	if err != nil {
		re.Err = err.Error()
		rep.Ensembles = append(rep.Ensembles, re)
		return err
	}
	defer stop()
	re.Addrs, re.Version, re.Argv, re.Leader = ens.Addrs(), ens.Version, ens.Members[0].Argv, leader
	re.Clients = ens.ClientOrder(leader)
	if cfg.LeaderOnly {
		re.Clients = []string{ens.Member(leader).Addr}
	}
	idx := len(rep.Ensembles)
	rep.Ensembles = append(rep.Ensembles, re)
	err = ratioCells(ctx, cfg, rep, target, n, ens.ClientOrder(leader), re.Clients, bench.MemberProcs(ens, leader))
	if after := ens.Leader(ctx); after != leader {
		rep.Ensembles[idx].LeaderAfter = after
	}
	return err
}

// ratioConnected measures the running ensemble at cfg.Connect.
func ratioConnected(ctx context.Context, cfg Config, rep *Report) error {
	const target = "server"
	re := RatioEnsemble{Target: target, Servers: len(cfg.Connect), Addrs: cfg.Connect, Clients: cfg.Connect}
	if out, err := load.FourLetter(ctx, cfg.Connect[0], "srvr"); err == nil {
		re.Version = launch.FirstLine(out)
	}
	if cfg.LeaderOnly {
		i := bench.ProbeLeader(ctx, cfg.Connect)
		if i < 0 {
			err := errors.New("bench: --leader-only: no server of --connect says it leads (srvr Mode)")
			re.Err = err.Error()
			rep.Ensembles = append(rep.Ensembles, re)
			return err
		}
		re.Clients = []string{cfg.Connect[i]}
	}
	rep.Ensembles = append(rep.Ensembles, re)
	return ratioCells(ctx, cfg, rep, target, len(cfg.Connect), cfg.Connect, re.Clients, nil)
}

// ratioCells preloads the nodes over all of spread and measures each ratio
// with the clients on clients.
func ratioCells(ctx context.Context, cfg Config, rep *Report, target string, n int,
	spread, clients []string, procs []load.ServerProc) error {
	ks, err := bench.Preload(ctx, target, spread, cfg.Keys, cfg.Conns, cfg.Inflight, cfg.ValueSize, cfg.SessionTimeout, cfg.Log)
	if err != nil {
		return err
	}
	var errs []error
	for _, pct := range cfg.Ratios {
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
		cfg.Log.Info("measuring", "target", target, "servers", n, "read_pct", pct, "leader_only", cfg.LeaderOnly)
		cell, err := runMixedPhase(ctx, mixedPhase{
			Target: target, ReadPct: pct, Addrs: clients, Keys: ks, Conns: cfg.Conns, Inflight: cfg.Inflight,
			ValueSize: cfg.ValueSize, Warmup: cfg.Warmup, Duration: cfg.Duration, SessionTimeout: cfg.SessionTimeout,
			Seed: cfg.Seed, Procs: procs,
		})
		cell.Servers = n
		rep.Cells = append(rep.Cells, cell)
		if err != nil {
			errs = append(errs, fmt.Errorf("%d%% reads: %w", pct, err))
		} else {
			cfg.Log.Info("measured", "target", target, "servers", n, "read_pct", pct,
				"ops_per_sec", int64(cell.OpsPerSec), "errors", cell.Errors)
		}
	}
	return errors.Join(errs...)
}

// mixedPhase is one measurement of the mixed load at one read ratio.
type mixedPhase struct {
	Target           string
	ReadPct          int
	Addrs            []string
	Keys             *load.KeySpace
	Conns, Inflight  int
	ValueSize        int
	Warmup, Duration time.Duration
	SessionTimeout   time.Duration
	Seed             uint64
	// Procs are the server processes whose CPU is measured.
	Procs []load.ServerProc
}

// runMixedPhase drives the connections with the pipelined writer and
// reader of RunPhase (conn.run), each with its own mixed source, and
// measures the interval after the warm-up: throughput, latencies, errors
// and the CPU of the servers, the load generator and the machine.
func runMixedPhase(ctx context.Context, p mixedPhase) (RatioCell, error) {
	cell := RatioCell{ReadPct: p.ReadPct, PhaseResult: load.PhaseResult{
		Target: p.Target, Phase: fmt.Sprintf("read%d", p.ReadPct), Workload: load.Workload(fmt.Sprintf("mixed-%d%%-read", p.ReadPct)),
		Conns: p.Conns, Inflight: p.Inflight, ValueSize: p.ValueSize,
	}}
	fail := func(err error) (RatioCell, error) {
		cell.Err = err.Error()
		return cell, err
	}
	picker, err := load.NewKeyPicker(p.Keys)
	if err != nil {
		return fail(err)
	}
	conns, err := load.DialAll(ctx, load.PhaseConfig{Addrs: p.Addrs, Conns: p.Conns, SessionTimeout: p.SessionTimeout})
	if err != nil {
		return fail(err)
	}
	data := load.Value(p.ValueSize)
	sources := make([]*load.MixedSource, len(conns))
	for i := range conns {
		sources[i] = load.NewMixedSource(picker, p.ReadPct, data, p.Seed+uint64(i))
	}
	t0 := time.Now()
	w := &load.Window{Start: t0.Add(p.Warmup), End: t0.Add(p.Warmup + p.Duration), Drain: load.DefaultDrainTimeout}
	perConn := make([]load.ConnStats, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perConn[i], errs[i] = c.Run(ctx, sources[i], p.Inflight, w)
		}()
	}
	allDone := make(chan struct{})
	var doneAt time.Time
	go func() {
		wg.Wait()
		doneAt = time.Now()
		close(allDone)
	}()
	meter := load.CpuMeter{}
	for _, pr := range p.Procs {
		meter.Pids = append(meter.Pids, pr.PID)
	}
	if !load.WaitUntil(ctx, w.Start, allDone) {
		meter.Begin()
		load.WaitUntil(ctx, w.End, allDone)
		meter.End()
	}
	<-allDone

	end := w.End
	if doneAt.Before(end) {
		end = doneAt
	}
	if end.After(w.Start) {
		cell.Seconds = end.Sub(w.Start).Seconds()
	}
	hist := stats.NewHist()
	for i := range perConn {
		if perConn[i].Hist != nil {
			hist.Merge(perConn[i].Hist)
		}
		cell.Ops += perConn[i].Ops
		if perConn[i].Errs > 0 && cell.Errors == 0 {
			cell.FirstError = load.ErrorName(perConn[i].FirstErr)
		}
		cell.Errors += perConn[i].Errs
		cell.Reads += sources[i].Reads
		cell.Writes += sources[i].Writes
	}
	cell.Latency = hist.Summary()
	if cell.Seconds > 0 {
		cell.OpsPerSec = float64(cell.Ops) / cell.Seconds
		cell.CPUUse = meter.Use(p.Procs)
	}
	if err := errors.Join(errs...); err != nil {
		return fail(fmt.Errorf("bench: %s %s: %w", p.Target, cell.Phase, err))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	return cell, nil
}

// systems are the report's (target, size) pairs in the order measured.
func (r *Report) systems() []RatioEnsemble {
	var out []RatioEnsemble
	seen := map[string]bool{}
	for _, e := range r.Ensembles {
		k := fmt.Sprintf("%s/%d", e.Target, e.Servers)
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// Cell returns the cell of target and size at pct, or nil.
func (r *Report) Cell(target string, servers, pct int) *RatioCell {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Target == target && c.Servers == servers && c.ReadPct == pct {
			return c
		}
	}
	return nil
}

// SystemLabel names a target and size in tables and legends.
func SystemLabel(target string, servers int) string {
	return fmt.Sprintf("%s n=%d", target, servers)
}
