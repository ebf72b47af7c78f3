package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/bench/ycsb"
)

// Run launches each system in turn (corral once per leader policy, then
// etcd, as cfg.Systems orders them), loads the records, runs every
// workload and stops the system. The report holds what completed even
// when an error ends the run early.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Fill(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rep := &Report{Config: cfg.summary(), Started: time.Now().UTC()}
	dir, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-kv-", cfg.Keep, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	if slices.Contains(cfg.Systems, SystemCorral) && cfg.CorralBin == "" {
		bin, err := launch.BuildCorral(ctx, dir)
		if err != nil {
			return rep, err
		}
		cfg.CorralBin = bin
	}
	bgt := newBudgeter(cfg.CPUBudget, cfg.CPUQuota, cfg.Taskset, fmt.Sprintf("corral-bench-kv-%d", os.Getpid()))
	defer bgt.cleanup()
	rep.BudgetMode = bgt.mode
	if !cfg.CPUBudget {
		rep.BudgetMode = "off"
	}
	if (len(cfg.ServerOpts) > 0 || cfg.LeaderPolicies[0] != "" || len(cfg.LeaderPolicies) > 1) && slices.ContainsFunc(cfg.Groups, func(g int) bool { return g > 1 }) {
		rep.Warnings = append(rep.Warnings, "-leader-policy and -server-opt do not reach the members of a `corral kv cluster` (groups > 1)")
	}
	type launcher struct {
		name string
		run  func(dir string) (*System, error)
	}
	var order []launcher
	for _, sys := range cfg.Systems {
		switch sys {
		case SystemCorral:
			for _, dur := range cfg.Durabilities {
				dcfg := cfg
				dcfg.Durability = dur
				tag := ""
				if len(cfg.Durabilities) > 1 {
					tag = dur
				}
				for _, p := range cfg.LeaderPolicies {
					for _, g := range cfg.Groups {
						if g == 1 {
							name := corralRunName(p, tag, g, RoutingRouted)
							order = append(order, launcher{name, func(d string) (*System, error) { return launchCorral(ctx, &dcfg, name, p, d, bgt) }})
							continue
						}
						for _, rt := range cfg.Routing {
							name := corralRunName(p, tag, g, rt)
							order = append(order, launcher{name, func(d string) (*System, error) {
								s, err := launchCorralCluster(ctx, &dcfg, name, g, rt == RoutingForwarded, d, bgt)
								if s != nil {
									s.Routing = rt
								}
								return s, err
							}})
						}
					}
				}
			}
		case SystemEtcd:
			order = append(order, launcher{SystemEtcd, func(d string) (*System, error) { return launchEtcd(ctx, &cfg, d, bgt) }})
		}
	}
	for i, l := range order {
		sdir := filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, sanitize(l.name)))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return rep, err
		}
		cfg.Log.Info("starting", "system", l.name, "dir", sdir)
		s, err := l.run(sdir)
		if err != nil {
			return rep, fmt.Errorf("bench: %s: %w", l.name, err)
		}
		rep.Systems = append(rep.Systems, s.Info())
		for _, k := range s.ignoredKeys() {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: the server says %s", s.Name, k))
		}
		err = runSystem(ctx, &cfg, s, rep)
		s.Stop()
		if err != nil {
			return rep, fmt.Errorf("bench: %s: %w", l.name, err)
		}
	}
	rep.Scaling = fitScaling(rep.Results)
	if cfg.OutDir != "" {
		if err := rep.WriteSeries(filepath.Join(cfg.OutDir, "series.csv")); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

func (s *System) Info() SystemInfo {
	si := SystemInfo{Name: s.Name, Kind: s.Kind, Version: s.Version, Config: s.Config}
	for _, m := range s.Members {
		si.Members = append(si.Members, MemberInfo{Name: m.Name, PID: m.PID(), Addr: m.Addr, Budget: m.Budget, Argv: fmt.Sprint(m.Argv)})
	}
	return si
}

// runSystem loads the records into s and runs every workload, with
// threads and records scaled by s's replica groups.
func runSystem(ctx context.Context, base *Config, s *System, rep *Report) error {
	scaled := *base
	g := max(s.Groups, 1)
	scaled.Threads *= g
	scaled.Records *= int64(g)
	cfg := &scaled
	t0 := time.Now()
	if err := LoadRecords(ctx, cfg, s.Client); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	cfg.Log.Info("loaded", "system", s.Name, "records", cfg.Records, "took", time.Since(t0).Round(time.Millisecond))
	inserts := ycsb.NewInserts(cfg.Records)
	for wi, w := range cfg.Workloads {
		if err := s.exited(); err != nil {
			return err
		}
		res, err := runPhase(ctx, cfg, s, w, inserts, cfg.Seed+uint64(wi)*uint64(MaxThreads))
		if err != nil {
			return fmt.Errorf("workload %s: %w", w.Name, err)
		}
		res.Groups, res.Threads, res.Records = g, cfg.Threads, cfg.Records
		res.Policy, res.Durability, res.Routing = s.Policy, s.Durability, s.Routing
		cfg.Log.Info("workload done", "system", s.Name, "workload", w.Name, "ops/s", int64(res.Throughput), "errors", res.Errors)
		rep.Results = append(rep.Results, res)
	}
	return nil
}

// LoadRecords writes records 0..Records-1, thread t writing t, t+T, ...
func LoadRecords(ctx context.Context, cfg *Config, st store) error {
	var wg sync.WaitGroup
	errs := make([]error, cfg.Threads)
	for t := range cfg.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(cfg.Seed, uint64(t)))
			for k := int64(t); k < cfg.Records; k += int64(cfg.Threads) {
				if ctx.Err() != nil {
					errs[t] = ctx.Err()
					return
				}
				octx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
				err := st.Write(octx, ycsb.KeyName(k), NewRecord(r))
				cancel()
				if err != nil {
					errs[t] = fmt.Errorf("record %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// threadResult is one thread's measurements; merged after the phase.
type threadResult struct {
	hist     [opKinds]*stats.Hist
	series   []int64
	errs     int64
	firstErr error
}

// runPhase runs w on s: Threads closed-loop threads for Warmup (not
// measured) and Duration (measured). An operation counts when it starts
// and completes within the measured interval; the series counts
// completions per SeriesBucket from its start. Server CPU is the members'
// utime+stime over the measured interval.
func runPhase(ctx context.Context, cfg *Config, s *System, w Workload, inserts *ycsb.Inserts, seed uint64) (Result, error) {
	keys := newKeys(w, cfg.Records, inserts)
	buckets := int((cfg.Duration + SeriesBucket - 1) / SeriesBucket)
	start := time.Now()
	mStart := start.Add(cfg.Warmup)
	mEnd := mStart.Add(cfg.Duration)
	pctx, cancel := context.WithDeadline(ctx, mEnd.Add(cfg.OpTimeout))
	defer cancel()
	results := make([]*threadResult, cfg.Threads)
	fine := newCompletions(cfg.Duration)
	var wg sync.WaitGroup
	for t := range cfg.Threads {
		tr := &threadResult{series: make([]int64, buckets)}
		for k := range tr.hist {
			tr.hist[k] = stats.NewHist()
		}
		results[t] = tr
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed+uint64(t), 0x6b76))
			for pctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(mEnd) {
					return
				}
				kind := w.Choose(r.Float64())
				var k int64
				if kind == OpInsert {
					k = inserts.Take()
				} else {
					k = keys.next(r)
				}
				err := DoOp(pctx, cfg.OpTimeout, s.Client, kind, ycsb.KeyName(k), r)
				if kind == OpInsert {
					inserts.Ack(k)
				}
				t1 := time.Now()
				if t0.Before(mStart) || t1.After(mEnd) {
					continue
				}
				if err != nil {
					tr.errs++
					if tr.firstErr == nil {
						tr.firstErr = err
					}
					continue
				}
				tr.hist[kind].Record(t1.Sub(t0))
				fine.add(t1.Sub(mStart))
				if b := int(t1.Sub(mStart) / SeriesBucket); b >= 0 && b < buckets {
					tr.series[b]++
				}
			}
		}()
	}
	var cpu0, cpu1, ccpu0, ccpu1 time.Duration
	var cpuErr, ccpuErr error
	sleepUntil(pctx, mStart)
	cpu0, cpuErr = serverCPU(s.pids())
	ccpu0, ccpuErr = load.ReadProcCPU(os.Getpid())
	var share *CompactionShare
	if len(s.metrics) > 0 && cfg.CompactionSample > 0 {
		// This goroutine samples the members until the interval ends.
		sctx, scancel := context.WithDeadline(pctx, mEnd)
		cs := newCompactionSampler(s.metrics, cfg.CompactionSample, int(cfg.Duration/cfg.CompactionSample)+1)
		samples, failed := cs.run(sctx)
		scancel()
		sh := ShareOf(samples, len(s.metrics), failed, cfg.CompactionSample)
		share = &sh
	}
	sleepUntil(pctx, mEnd)
	if c, err := serverCPU(s.pids()); err == nil {
		cpu1 = c
	} else if cpuErr == nil {
		cpuErr = err
	}
	if c, err := load.ReadProcCPU(os.Getpid()); err == nil {
		ccpu1 = c
	} else if ccpuErr == nil {
		ccpuErr = err
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := merge(s, w, cfg.Duration, results)
	counts := fine.counts()
	z := LongestZero(counts, fine.width)
	res.LongestZeroMs, res.LongestZeroAtMs = msFloat(z.Len), msFloat(z.From)
	if s.Kind == SystemCorral && s.Groups == 0 {
		res.Handovers = s.handovers(mStart, mEnd, counts, fine.width)
	}
	res.Compaction = share
	if cpuErr == nil {
		res.ServerCPUSeconds = (cpu1 - cpu0).Seconds()
		if res.Ops > 0 {
			res.ServerCPUPerOpUs = float64((cpu1 - cpu0).Microseconds()) / float64(res.Ops)
		}
	} else {
		res.CPUError = cpuErr.Error()
	}
	if ccpuErr == nil && res.Ops > 0 {
		res.ClientCPUPerOpUs = float64((ccpu1 - ccpu0).Microseconds()) / float64(res.Ops)
	}
	return res, nil
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}

// DoOp does one operation of kind on key with a fresh record from r for
// writes.
func DoOp(ctx context.Context, timeout time.Duration, st store, kind OpKind, key string, r *rand.Rand) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch kind {
	case OpRead:
		return st.Read(ctx, key)
	case OpUpdate:
		return st.Write(ctx, key, NewRecord(r))
	case OpRMW:
		if err := st.Read(ctx, key); err != nil {
			return err
		}
		return st.Write(ctx, key, NewRecord(r))
	case OpInsert:
		return st.Write(ctx, key, NewRecord(r))
	case OpScan:
		return st.Scan(ctx, key, 1+r.IntN(MaxScanLength))
	}
	return fmt.Errorf("unknown operation %v", kind)
}

// keys draws the record numbers a workload's reads, updates and scans
// use: YCSB's latest for D, else its scrambled zipfian over the loaded
// records and the inserts expected (twice the insert share, as YCSB
// sizes it), redrawn past the newest acknowledged insert.
type keys struct {
	zipf    *ycsb.KeyChooser
	latest  *ycsb.Latest
	inserts *ycsb.Inserts
}

func newKeys(w Workload, records int64, inserts *ycsb.Inserts) *keys {
	k := &keys{inserts: inserts}
	if w.Latest {
		k.latest = ycsb.NewLatest(inserts)
		return k
	}
	expected := int64(2 * w.Mix[OpInsert] * float64(records))
	k.zipf = ycsb.NewKeyChooser(records + expected)
	return k
}

// maxRedraws bounds redrawing keys past the newest insert; then a key is
// drawn uniformly from those that exist.
const maxRedraws = 1000

func (k *keys) next(r *rand.Rand) int64 {
	if k.latest != nil {
		return k.latest.Next(r)
	}
	last := k.inserts.Last()
	for range maxRedraws {
		if n := k.zipf.Next(r); n <= last {
			return n
		}
	}
	return r.Int64N(max(last+1, 1))
}

// serverCPU is the summed utime+stime of pids.
func serverCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, p := range pids {
		c, err := load.ReadProcCPU(p)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// merge sums the threads' measurements into the phase's result.
func merge(s *System, w Workload, d time.Duration, trs []*threadResult) Result {
	all := stats.NewHist()
	var per [opKinds]*stats.Hist
	for k := range per {
		per[k] = stats.NewHist()
	}
	res := Result{System: s.Name, Kind: s.Kind, Workload: w.Name, Mix: w.Describe(), Seconds: d.Seconds(), PerOp: map[string]stats.Latency{}}
	for _, tr := range trs {
		for k := range per {
			per[k].Merge(tr.hist[k])
			all.Merge(tr.hist[k])
		}
		if res.Series == nil {
			res.Series = make([]int64, len(tr.series))
		}
		for i, v := range tr.series {
			res.Series[i] += v
		}
		res.Errors += tr.errs
		if res.FirstError == "" && tr.firstErr != nil {
			res.FirstError = tr.firstErr.Error()
		}
	}
	res.Latency = all.Summary()
	res.Ops = res.Latency.Count
	res.Throughput = float64(res.Ops) / d.Seconds()
	for k := range per {
		if per[k].Count() > 0 {
			res.PerOp[OpKind(k).String()] = per[k].Summary()
		}
	}
	return res
}

// summary is the configuration as the report states it.
func (c *Config) summary() ConfigSummary {
	var wl []string
	for _, w := range c.Workloads {
		wl = append(wl, w.Name+" ("+w.Describe()+")")
	}
	return ConfigSummary{
		Workloads: wl, Records: c.Records, Threads: c.Threads,
		Warmup: c.Warmup.String(), Duration: c.Duration.String(), Seed: c.Seed,
		Members: c.Members, Durability: strings.Join(c.Durabilities, ","), TickTimeMs: c.TickTimeMs,
		CompactionSample: c.CompactionSample.String(),
		LeaderPolicies:   c.LeaderPolicies, ServerOpts: c.ServerOpts, Groups: c.Groups, Routing: c.Routing,
		CPUBudget: c.CPUBudget, CPUQuota: c.CPUQuota, CommandLine: c.CommandLine,
		CPUs: runtime.NumCPU(),
	}
}
