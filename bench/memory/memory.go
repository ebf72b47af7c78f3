package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Shape is one tree the experiment builds: Count znodes of Size bytes.
type Shape struct {
	Count int64
	Size  int
	// JavaHeap, if set, is ZooKeeper's -Xmx for this tree (the smallest
	// at which it completes the load differs between trees); empty takes
	// Config.JavaHeap.
	JavaHeap string
}

func (s Shape) String() string { return fmt.Sprintf("%d×%dB", s.Count, s.Size) }

// Config configures Run. Start from DefaultConfig.
type Config struct {
	Targets []string
	// Servers is the ensemble's size (1: standalone).
	Servers int
	Shapes  []Shape
	// Conns and Inflight drive the creates.
	Conns, Inflight int
	// Durability is corral's durability key (ZooKeeper: sync is its
	// default, async is forceSync=no).
	Durability string
	// Settle is the wait between the last create and reading the
	// members' resident sizes (their collectors run meanwhile).
	Settle time.Duration
	// LoadLimit bounds each tree's creates in time: a target that has
	// not created them all by then is reported incomplete.
	LoadLimit time.Duration

	launch.Settings
	Log *slog.Logger
}

// DefaultConfig is issue 27's acceptance: 1,000,000 znodes of 100 B and
// 100,000 of 1 KiB on 3 members, corral and ZooKeeper.
func DefaultConfig() Config {
	return Config{
		Targets:    []string{launch.TargetCorral, launch.TargetZooKeeper},
		Servers:    3,
		Shapes:     []Shape{{Count: 1_000_000, Size: 100}, {Count: 100_000, Size: 1024}},
		Conns:      8,
		Inflight:   32,
		Durability: "sync",
		Settle:     5 * time.Second,
		LoadLimit:  bench.PopulateLimit,
		Settings:   launch.DefaultSettings(),
		Log:        slog.New(slog.DiscardHandler),
	}
}

// Validate reports a configuration Run cannot carry out.
func (c Config) Validate() error {
	switch {
	case len(c.Targets) == 0:
		return errors.New("no targets")
	case c.Servers < 1:
		return errors.New("servers must be at least 1")
	case len(c.Shapes) == 0:
		return errors.New("no shapes")
	case c.Conns < 1 || c.Inflight < 1:
		return errors.New("conns and inflight must be positive")
	case c.Settle < 0:
		return errors.New("settle must not be negative")
	case c.LoadLimit <= 0:
		return errors.New("load limit must be positive")
	}
	for _, s := range c.Shapes {
		if s.Count < 1 || s.Size < 0 {
			return fmt.Errorf("shape %v: want a positive count and a size >= 0", s)
		}
	}
	switch c.Durability {
	case "sync", "async", "diskless":
	default:
		return fmt.Errorf("durability %q (want sync, async or diskless)", c.Durability)
	}
	return nil
}

// MemberResult is one member's memory with one tree.
type MemberResult struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// RSS is VmRSS, HWM VmHWM (the peak), in bytes.
	RSS int64 `json:"rss_bytes"`
	HWM int64 `json:"hwm_bytes"`
	// Znodes and Raw are mntr's znode_count and approximate_data_size
	// (paths + data) on this member.
	Znodes int64 `json:"znodes"`
	Raw    int64 `json:"raw_bytes"`
	// HeapLive is corral's heap_live_bytes (0 for ZooKeeper).
	HeapLive int64 `json:"heap_live_bytes,omitempty"`
}

// Result is one target's ensemble with one tree.
type Result struct {
	Target   string         `json:"target"`
	Shape    string         `json:"shape"`
	Servers  int            `json:"servers"`
	JavaHeap string         `json:"java_heap,omitempty"`
	Created  int64          `json:"created"`
	Took     float64        `json:"took_s"`
	Members  []MemberResult `json:"members"`
	Err      string         `json:"error,omitempty"`
	// Count is the znodes the tree should hold; a result that created
	// fewer (the load failed or ran out of time) is Incomplete: its
	// members' sizes are reported, marked, and left out of the ratios.
	Count int64 `json:"count"`
}

// Incomplete reports whether the target did not complete its load.
func (r Result) Incomplete() bool { return r.Created < r.Count }

// maxRSS is the largest resident size of r's members (0 without one).
func (r Result) maxRSS() int64 {
	var m int64
	for _, x := range r.Members {
		m = max(m, x.RSS)
	}
	return m
}

// maxRaw is the largest raw size (paths + data) among r's members.
func (r Result) maxRaw() int64 {
	var m int64
	for _, x := range r.Members {
		m = max(m, x.Raw)
	}
	return m
}

// Report is the experiment's outcome.
type Report struct {
	Config  Config
	Start   time.Time
	Env     bench.Env
	Results []Result
}

// Run builds each shape on a fresh ensemble of each target and reads each
// member's resident size.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bench: memory: %w", err)
	}
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-memory-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &Report{Config: cfg, Start: time.Now(), Env: bench.NewEnv()}
	var errs []error
	for _, shape := range cfg.Shapes {
		for _, target := range cfg.Targets {
			r, err := runOne(ctx, &cfg, work, target, shape, len(rep.Results))
			if err != nil {
				r.Err = err.Error()
				errs = append(errs, fmt.Errorf("%s %v: %w", target, shape, err))
			}
			rep.Results = append(rep.Results, r)
			if ctx.Err() != nil {
				return rep, errors.Join(errs...)
			}
		}
	}
	return rep, errors.Join(errs...)
}

func durability(target, level string) (launch.Durability, error) {
	if target != launch.TargetZooKeeper {
		return launch.Durability{Mode: level}, nil
	}
	switch level {
	case "sync":
		return launch.Durability{}, nil
	case "async":
		return launch.Durability{NoForceSync: true}, nil
	}
	return launch.Durability{}, fmt.Errorf("%s has no %s mode", target, level)
}

func runOne(ctx context.Context, cfg *Config, work, target string, shape Shape, n int) (Result, error) {
	r := Result{Target: target, Shape: shape.String(), Servers: cfg.Servers, Count: shape.Count}
	dur, err := durability(target, cfg.Durability)
	if err != nil {
		return r, err
	}
	heap := cfg.JavaHeap
	if shape.JavaHeap != "" {
		heap = shape.JavaHeap
	}
	lc := launch.LaunchConfig{
		Dir: filepath.Join(work, fmt.Sprintf("t%02d-%s", n, target)), GlobalOutstandingLimit: launch.DefaultGlobalOutstandingLimit,
		Timing: cfg.Timing, CorralBin: cfg.CorralBin, ZKLib: cfg.ZKLib, Java: cfg.Java, JavaHeap: heap,
		Durability: dur, Log: cfg.Log,
	}
	if target == launch.TargetZooKeeper {
		r.JavaHeap = heap
	}
	if err := bench.PrepareLaunch(ctx, target, &lc, work); err != nil {
		return r, err
	}
	cfg.CorralBin, cfg.ZKLib = lc.CorralBin, lc.ZKLib
	info := bench.ServerInfo{Target: target}
	start := bench.StartStandalone
	if cfg.Servers > 1 {
		start = bench.StartEnsemble
	}
	ut, err := start(ctx, bench.StartSpec{Servers: cfg.Servers, Keep: cfg.Keep}, lc, &info)
	if err != nil {
		return r, err
	}
	defer ut.Finish(&info)
	type member struct {
		name, addr string
		pid        int
	}
	members := []member{{name: "standalone", addr: info.Addr, pid: ut.Pid}}
	if len(info.Members) > 0 {
		members = members[:0]
		for _, m := range info.Members {
			members = append(members, member{name: fmt.Sprintf("server.%d %s", m.ID, m.Mode), addr: m.Addr, pid: m.PID})
		}
	}
	cfg.Log.Info("creating znodes", "target", target, "shape", shape.String())
	pc := load.PhaseConfig{
		Target: target, Phase: "populate", Addrs: ut.Addrs, Workload: load.WorkloadCreate,
		Conns: cfg.Conns, Inflight: cfg.Inflight, ValueSize: shape.Size,
		Duration: cfg.LoadLimit, MaxOps: shape.Count, Log: cfg.Log,
	}
	began := time.Now()
	pr, loadErr := load.RunPhase(ctx, pc)
	r.Took = time.Since(began).Seconds()
	r.Created = pr.Ops
	if loadErr != nil {
		// The members are still read if they answer: a ZooKeeper whose
		// heap ran out shows how far it got. The row is marked.
		cfg.Log.Warn("load did not complete", "target", target, "shape", shape.String(), "created", pr.Ops, "err", loadErr)
	} else {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(cfg.Settle):
		}
	}
	if ctx.Err() != nil {
		return r, errors.Join(loadErr, ctx.Err())
	}
	for _, p := range members {
		m := MemberResult{Name: p.name, PID: p.pid}
		m.RSS, m.HWM, err = residentSize(p.pid)
		if err != nil {
			return r, errors.Join(loadErr, err)
		}
		out, err := load.FourLetter(ctx, p.addr, "mntr")
		if err != nil {
			return r, errors.Join(loadErr, fmt.Errorf("mntr of %s: %w", p.name, err))
		}
		v := load.MntrValues(out)
		m.Znodes, _ = strconv.ParseInt(v["zk_znode_count"], 10, 64)
		m.Raw, _ = strconv.ParseInt(v["zk_approximate_data_size"], 10, 64)
		m.HeapLive, _ = strconv.ParseInt(v["zk_heap_live_bytes"], 10, 64)
		r.Members = append(r.Members, m)
	}
	return r, loadErr
}

// residentSize reads a process's VmRSS and VmHWM from /proc, in bytes.
func residentSize(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("resident size of pid %d: %w", pid, err)
	}
	return parseStatus(string(b))
}

// parseStatus takes VmRSS and VmHWM out of a /proc/PID/status text.
func parseStatus(s string) (rss, hwm int64, err error) {
	kb := func(key string) (int64, error) {
		for _, line := range strings.Split(s, "\n") {
			v, ok := strings.CutPrefix(line, key+":")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %q: %w", key, v, err)
			}
			return n << 10, nil
		}
		return 0, fmt.Errorf("no %s line", key)
	}
	if rss, err = kb("VmRSS"); err != nil {
		return 0, 0, err
	}
	if hwm, err = kb("VmHWM"); err != nil {
		return 0, 0, err
	}
	return rss, hwm, nil
}

// Markdown writes the report: a row per member.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# Resident memory per member\n\n")
	if !r.Start.IsZero() {
		e := r.Env
		fmt.Fprintf(w, "- started: %s\n", r.Start.UTC().Format(time.RFC3339))
		fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the client (GOMAXPROCS %d, %s)",
			e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
		if e.LoadAvg != "" {
			fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
		}
		fmt.Fprintf(w, "\n\n")
	}
	fmt.Fprintf(w, "%d server(s), durability %s, %d connections × %d creates in flight, at most %v per tree; RSS (VmRSS) read %v after the last create, "+
		"peak is VmHWM. A target that did not complete its load is marked in bold, its members read as far as it got, and gives no ratio.\n\n",
		r.Config.Servers, r.Config.Durability, r.Config.Conns, r.Config.Inflight, r.Config.LoadLimit, r.Config.Settle)
	fmt.Fprintln(w, "| target | tree | member | znodes | raw MB (paths+data) | RSS MB | peak MB | RSS / raw | RSS bytes/znode | Go live heap MB |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	mb := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/1e6) }
	for _, res := range r.Results {
		target := res.Target
		if res.JavaHeap != "" {
			target += " -Xmx" + res.JavaHeap
		}
		if res.Incomplete() {
			target = fmt.Sprintf("**%s: load incomplete, %d of %d created**", target, res.Created, res.Count)
		}
		if res.Err != "" {
			fmt.Fprintf(w, "| %s | %s | error: %s | | | | | | | |\n", target, res.Shape, res.Err)
		}
		for _, m := range res.Members {
			ratio, per := "-", "-"
			if m.Raw > 0 {
				ratio = fmt.Sprintf("%.2f", float64(m.RSS)/float64(m.Raw))
			}
			if m.Znodes > 0 {
				per = fmt.Sprintf("%.0f", float64(m.RSS)/float64(m.Znodes))
			}
			live := "-"
			if m.HeapLive > 0 {
				live = mb(m.HeapLive)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n",
				target, res.Shape, m.Name, m.Znodes, mb(m.Raw), mb(m.RSS), mb(m.HWM), ratio, per, live)
		}
	}
	fmt.Fprintln(w)
	r.ratioTable(w)
}

// HeadingRatios is the heading of the corral ÷ ZooKeeper table.
const HeadingRatios = "## corral ÷ ZooKeeper, largest member's RSS"

// ratioTable compares, per tree, the largest resident member of corral
// with ZooKeeper's. A ZooKeeper (or corral) that did not complete its load
// held fewer znodes: it is named but no ratio is drawn from it.
func (r *Report) ratioTable(w io.Writer) {
	type pair struct{ corral, zk *Result }
	var shapes []string
	pairs := map[string]*pair{}
	for i := range r.Results {
		res := &r.Results[i]
		p, ok := pairs[res.Shape]
		if !ok {
			p = &pair{}
			pairs[res.Shape] = p
			shapes = append(shapes, res.Shape)
		}
		switch res.Target {
		case launch.TargetCorral:
			p.corral = res
		case launch.TargetZooKeeper:
			p.zk = res
		}
	}
	var rows []string
	mb := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/1e6) }
	for _, sh := range shapes {
		p := pairs[sh]
		if p.corral == nil || p.zk == nil {
			continue
		}
		ratio := "–"
		switch {
		case p.zk.Incomplete():
			ratio = fmt.Sprintf("– (ZooKeeper -Xmx%s did not complete its load: %d of %d)", p.zk.JavaHeap, p.zk.Created, p.zk.Count)
		case p.corral.Incomplete():
			ratio = fmt.Sprintf("– (corral did not complete its load: %d of %d)", p.corral.Created, p.corral.Count)
		case p.zk.maxRSS() > 0:
			ratio = fmt.Sprintf("%.2f×", float64(p.corral.maxRSS())/float64(p.zk.maxRSS()))
		}
		raw, perRaw := p.corral.maxRaw(), "–"
		if raw > 0 && !p.corral.Incomplete() {
			perRaw = fmt.Sprintf("%.2f×", float64(p.corral.maxRSS())/float64(raw))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", sh, mb(raw), mb(p.corral.maxRSS()), perRaw,
			mb(p.zk.maxRSS()), p.zk.JavaHeap, ratio))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "%s\n\n| tree | raw MB | corral MB | corral ÷ raw (target ≤ 2×) | ZooKeeper MB | ZooKeeper -Xmx | corral ÷ ZooKeeper (target ≤ 0.33×) |\n"+
		"|---|---:|---:|---:|---:|---|---:|\n", HeadingRatios)
	for _, row := range rows {
		fmt.Fprintln(w, row)
	}
	fmt.Fprintln(w)
}

// JSONLines writes a line per result.
func (r *Report) JSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, res := range r.Results {
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}
