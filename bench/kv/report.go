package kv

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// Report is a run's outcome: the conditions, the systems launched and one
// Result per system and workload.
type Report struct {
	Config  ConfigSummary
	Started time.Time
	// BudgetMode is how members' CPU was capped: cgroup, taskset, none
	// (GOMAXPROCS=1 only) or off.
	BudgetMode string
	Systems    []SystemInfo
	Results    []Result
	// Warnings are zoo.cfg lines the corral servers ignored.
	Warnings []string
	// Scaling are the Universal Scalability Law fits of corral's
	// throughput over its replica-group counts.
	Scaling []Scaling
}

// Scaling is one USL fit: throughput of a corral configuration (leader
// policy) and workload at each replica-group count, N = groups.
type Scaling struct {
	Policy   string           `json:"policy"`
	Workload string           `json:"workload"`
	Points   []stats.USLPoint `json:"points"`
	Fit      *stats.USLFit    `json:"fit,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// policyOf is the leader policy in a corral system's name.
func policyOf(name string) string {
	inner, ok := strings.CutPrefix(name, SystemCorral+"[")
	if !ok {
		return ""
	}
	var keep []string
	for _, t := range strings.Split(strings.TrimSuffix(inner, "]"), ",") {
		if !strings.HasPrefix(t, "g=") {
			keep = append(keep, t)
		}
	}
	return strings.Join(keep, ",")
}

// fitScaling fits the USL per corral policy and workload measured at
// three or more group counts.
func fitScaling(results []Result) []Scaling {
	var out []Scaling
	index := map[[2]string]int{}
	for _, r := range results {
		if r.Kind != SystemCorral || r.Groups < 1 {
			continue
		}
		k := [2]string{policyOf(r.System), r.Workload}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Scaling{Policy: k[0], Workload: k[1]})
		}
		out[i].Points = append(out[i].Points, stats.USLPoint{N: float64(r.Groups), X: r.Throughput})
	}
	var fitted []Scaling
	for _, sc := range out {
		if len(sc.Points) < 3 {
			continue
		}
		f, err := stats.FitUSL(sc.Points)
		if err != nil {
			sc.Error = err.Error()
		} else {
			sc.Fit = &f
		}
		fitted = append(fitted, sc)
	}
	return fitted
}

// ConfigSummary is the configuration as reported.
type ConfigSummary struct {
	Workloads  []string `json:"workloads"`
	Records    int64    `json:"records"`
	Threads    int      `json:"threads"`
	Warmup     string   `json:"warmup"`
	Duration   string   `json:"duration"`
	Seed       uint64   `json:"seed"`
	Members    int      `json:"members"`
	Durability string   `json:"durability"`
	// CompactionSample is how often the members' compaction state was
	// read ("0s": never).
	CompactionSample string   `json:"compaction_sample,omitempty"`
	TickTimeMs       int      `json:"tick_time_ms"`
	LeaderPolicies   []string `json:"leader_policies"`
	Groups           []int    `json:"groups"`
	Routing          []string `json:"routing,omitempty"`
	ServerOpts       []string `json:"server_opts,omitempty"`
	CPUBudget        bool     `json:"cpu_budget"`
	CPUQuota         float64  `json:"cpu_quota"`
	CommandLine      string   `json:"command_line"`
	CPUs             int      `json:"cpus"`
}

// SystemInfo describes one launched system.
type SystemInfo struct {
	Name, Kind, Version string
	// Config is member 1's zoo.cfg (corral) or command line (etcd).
	Config  string
	Members []MemberInfo
}

// MemberInfo is one launched process.
type MemberInfo struct {
	Name   string
	PID    int
	Addr   string
	Budget string
	Argv   string
}

// Result is one system's measurements of one workload.
type Result struct {
	System     string                   `json:"system"`
	Kind       string                   `json:"kind"`
	Workload   string                   `json:"workload"`
	Groups     int                      `json:"groups"`
	Threads    int                      `json:"threads"`
	Records    int64                    `json:"records"`
	Mix        string                   `json:"mix"`
	Seconds    float64                  `json:"seconds"`
	Ops        int64                    `json:"ops"`
	Throughput float64                  `json:"ops_per_sec"`
	Latency    stats.Latency            `json:"latency"`
	PerOp      map[string]stats.Latency `json:"per_op"`
	Errors     int64                    `json:"errors"`
	FirstError string                   `json:"first_error,omitempty"`
	// ServerCPUSeconds is the members' utime+stime over the measured
	// interval; ServerCPUPerOpUs that ÷ Ops in microseconds.
	ServerCPUSeconds float64 `json:"server_cpu_s"`
	ServerCPUPerOpUs float64 `json:"server_cpu_us_per_op"`
	CPUError         string  `json:"cpu_error,omitempty"`
	// ClientCPUPerOpUs is the benchmark process's own utime+stime over
	// the measured interval ÷ Ops: the client library's cost per op
	// (with a CPU-bound machine it competes with the members).
	ClientCPUPerOpUs float64 `json:"client_cpu_us_per_op,omitempty"`
	// Series is completed operations per SeriesBucket (100 ms) from the
	// start of the measured interval.
	Series []int64 `json:"series_ops_per_100ms"`
	// Policy, Durability and Routing are the corral run's settings.
	Policy     string `json:"leader_policy,omitempty"`
	Durability string `json:"durability,omitempty"`
	Routing    string `json:"routing,omitempty"`
	// LongestZeroMs is the longest window of the measured interval
	// without a completed operation (1 ms resolution), from
	// LongestZeroAtMs.
	LongestZeroMs   float64 `json:"longest_zero_ms"`
	LongestZeroAtMs float64 `json:"longest_zero_at_ms"`
	// Handovers are the leads taken during the measured interval (one-RG
	// corral runs), each with its zero-throughput window.
	Handovers []Handover `json:"handovers,omitempty"`
	// Compaction is the share of time members compacted (one-RG corral
	// runs with -compaction-sample).
	Compaction *CompactionShare `json:"compaction,omitempty"`
}

// MaxHandoverZeroMs is the longest zero-throughput window at any of r's
// handovers (0 without one).
func (r Result) MaxHandoverZeroMs() float64 {
	var m float64
	for _, h := range r.Handovers {
		m = max(m, h.ZeroMs)
	}
	return m
}

// Ratio is a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// find returns system's result of workload.
func (r *Report) find(system, workload string) (Result, bool) {
	for _, res := range r.Results {
		if res.System == system && res.Workload == workload {
			return res, true
		}
	}
	return Result{}, false
}

// systemNames are the systems with results, in run order.
func (r *Report) systemNames() []string {
	return r.distinct(func(res Result) string { return res.System })
}

// workloadNames are the workloads with results, in run order.
func (r *Report) workloadNames() []string {
	return r.distinct(func(res Result) string { return res.Workload })
}

// distinct is key of every result, each value once, in run order.
func (r *Report) distinct(key func(Result) string) []string {
	var out []string
	for _, res := range r.Results {
		if k := key(res); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// metric is one row of a workload's table.
type metric struct {
	name   string
	get    func(Result) float64
	format func(float64) string
	// na, if set, says the result has no such figure (shown "–").
	na func(Result) bool
	// noRatio leaves the row out of the ratio columns.
	noRatio bool
}

func (m metric) cell(res Result, ok bool) string {
	if !ok || (m.na != nil && m.na(res)) {
		return "–"
	}
	return m.format(m.get(res))
}

func whole(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func pct(v float64) string   { return strconv.FormatFloat(100*v, 'f', 1, 64) }

func noCompaction(r Result) bool { return r.Compaction == nil || r.Compaction.Samples == 0 }

// noHandovers: the run does not read its members' logs (etcd, a sharded
// cluster).
func noHandovers(r Result) bool { return r.Kind != SystemCorral || r.Groups > 1 }

func ms(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) }

var metrics = []metric{
	{name: "threads", get: func(r Result) float64 { return float64(r.Threads) }, format: whole},
	{name: "throughput (ops/s)", get: func(r Result) float64 { return r.Throughput }, format: whole},
	{name: "mean latency (ms)", get: func(r Result) float64 { return r.Latency.Mean }, format: ms},
	{name: "p50 latency (ms)", get: func(r Result) float64 { return float64(r.Latency.P50) }, format: ms},
	{name: "p99 latency (ms)", get: func(r Result) float64 { return float64(r.Latency.P99) }, format: ms},
	{name: "errors", get: func(r Result) float64 { return float64(r.Errors) }, format: whole},
	{name: "server CPU µs/op", get: func(r Result) float64 { return r.ServerCPUPerOpUs }, format: func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
	{name: "client CPU µs/op", get: func(r Result) float64 { return r.ClientCPUPerOpUs }, format: func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		na: func(r Result) bool { return r.ClientCPUPerOpUs == 0 }}, // runs stored before it was measured
	{name: "longest zero-throughput window (ms)", get: func(r Result) float64 { return r.LongestZeroMs }, format: whole, noRatio: true},
	{name: "leader handovers", get: func(r Result) float64 { return float64(len(r.Handovers)) }, format: whole, na: noHandovers, noRatio: true},
	{name: "zero window at a handover, max (ms)", get: Result.MaxHandoverZeroMs, format: whole,
		na: func(r Result) bool { return len(r.Handovers) == 0 }, noRatio: true},
	{name: "time a minority compacts (%)", get: func(r Result) float64 { return r.Compaction.Minority }, format: pct, na: noCompaction, noRatio: true},
	{name: "time a quorum compacts (%)", get: func(r Result) float64 { return r.Compaction.Quorum }, format: pct, na: noCompaction, noRatio: true},
}

// Markdown writes the report.
func (r *Report) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "# corral KV vs etcd: YCSB over the ACaZoo records\n\n")
	fmt.Fprintf(w, "- started: %s\n- command: `%s`\n\n", r.Started.Format(time.RFC3339), c.CommandLine)
	fmt.Fprintf(w, "Started %s on %d CPUs. Records: %d of %d columns × %d B (corral: one row, family %q; etcd: one key, the %d B value). "+
		"Threads: %d, closed loop, zipfian keys (YCSB's scrambled zipfian); warm-up %s, measured %s per workload. "+
		"Replica groups of %d on 127.0.0.1, data on the same disk; corral durability %s, tickTime %d ms; etcd syncs its WAL.\n\n",
		r.Started.Format(time.RFC3339), c.CPUs, c.Records, Fields, FieldSize, Family, Fields*FieldSize,
		c.Threads, c.Warmup, c.Duration, c.Members, c.Durability, c.TickTimeMs)
	fmt.Fprintf(w, "Workloads: %s. Reads read the whole record; updates overwrite it whole; rmw reads then overwrites (one latency).\n\n", strings.Join(c.Workloads, "; "))
	fmt.Fprintf(w, "CPU budget per member: %s.\n\n", budgetWords(r.BudgetMode, c.CPUQuota))
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "**Warning:** %s\n\n", wn)
	}
	fmt.Fprintln(w, "## Systems")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| system | member | pid | address | CPU budget |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, s := range r.Systems {
		for _, m := range s.Members {
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s |\n", s.Name, m.Name, m.PID, m.Addr, m.Budget)
		}
	}
	fmt.Fprintln(w)
	for _, s := range r.Systems {
		if s.Version != "" {
			fmt.Fprintf(w, "- %s: %s\n", s.Name, s.Version)
		}
	}
	fmt.Fprintln(w)
	names := r.systemNames()
	etcd := slices.Contains(names, SystemEtcd)
	for _, wl := range r.workloadNames() {
		fmt.Fprintf(w, "## Workload %s\n\n", wl)
		head := "| metric |"
		sep := "|---|"
		for _, n := range names {
			head += " " + n + " |"
			sep += "---:|"
		}
		if etcd {
			for _, n := range names {
				if n != SystemEtcd {
					head += " " + n + "/etcd |"
					sep += "---:|"
				}
			}
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, sep)
		for _, m := range metrics {
			row := "| " + m.name + " |"
			for _, n := range names {
				res, ok := r.find(n, wl)
				row += " " + m.cell(res, ok) + " |"
			}
			if etcd {
				e, eok := r.find(SystemEtcd, wl)
				for _, n := range names {
					if n == SystemEtcd {
						continue
					}
					res, ok := r.find(n, wl)
					if ok && eok && !m.noRatio && m.get(e) != 0 {
						row += " " + strconv.FormatFloat(Ratio(m.get(res), m.get(e)), 'f', 2, 64) + "× |"
					} else {
						row += " – |"
					}
				}
			}
			fmt.Fprintln(w, row)
		}
		fmt.Fprintln(w)
		for _, n := range names {
			if res, ok := r.find(n, wl); ok && res.FirstError != "" {
				fmt.Fprintf(w, "- %s first error: %s\n", n, res.FirstError)
			}
		}
	}
	r.etcdTable(w)
	r.policyTable(w)
	r.compactionTable(w)
	r.routingTable(w)
	if len(r.Scaling) > 0 {
		fmt.Fprintf(w, "%s\n\n", HeadingScaling)
		fmt.Fprintln(w, "| policy | workload | points (N: ops/s) | λ | σ | κ | R² | peak N |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
		for _, sc := range r.Scaling {
			var pts []string
			for _, p := range sc.Points {
				pts = append(pts, fmt.Sprintf("%g: %.0f", p.N, p.X))
			}
			pol := sc.Policy
			if pol == "" {
				pol = "default"
			}
			if sc.Fit == nil {
				fmt.Fprintf(w, "| %s | %s | %s | fit failed: %s |||||\n", pol, sc.Workload, strings.Join(pts, ", "), sc.Error)
				continue
			}
			f := sc.Fit
			fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.4f | %.5f | %.3f | %.1f |\n", pol, sc.Workload, strings.Join(pts, ", "), f.Lambda, f.Sigma, f.Kappa, f.R2, f.PeakN)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Throughput over time (ops per 100 ms) is in results.jsonl (series_ops_per_100ms), series.csv and, with -out, kv-throughput-WORKLOAD.png.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Configuration")
	for _, s := range r.Systems {
		fmt.Fprintf(w, "\n%s (member 1):\n\n```\n%s\n```\n", s.Name, strings.TrimSpace(s.Config))
	}
}

func budgetWords(mode string, quota float64) string {
	switch mode {
	case "cgroup":
		return fmt.Sprintf("GOMAXPROCS=1 and a cgroup v2 cpu.max of %g CPU each", quota)
	case "taskset":
		return "GOMAXPROCS=1 and pinned with taskset to one CPU, members spread over the CPUs in turn (no cgroup v2 cpu controller here)"
	case "none":
		return "GOMAXPROCS=1 only (no cgroup v2 cpu controller here, and taskset off or missing): the kernel shares the CPUs among the members"
	}
	return "none (--cpu-budget=false): members share the machine"
}

// JSONLines writes one object per result.
func (r *Report) JSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, res := range r.Results {
		line := struct {
			Result
			Budget string        `json:"cpu_budget"`
			Config ConfigSummary `json:"config"`
		}{res, r.BudgetMode, r.Config}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	for _, sc := range r.Scaling {
		if err := enc.Encode(struct {
			Scaling
			Kind string `json:"kind"`
		}{sc, "usl"}); err != nil {
			return err
		}
	}
	return nil
}

// WriteSeries writes the throughput-over-time series as CSV: system,
// workload, ms since the measured interval began, ops in that 100 ms.
func (r *Report) WriteSeries(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	r.SeriesCSV(f)
	return f.Close()
}

// SeriesCSV writes the series CSV to w.
func (r *Report) SeriesCSV(w io.Writer) {
	fmt.Fprintln(w, "system,workload,t_ms,ops")
	for _, res := range r.Results {
		for i, v := range res.Series {
			fmt.Fprintf(w, "%s,%s,%d,%d\n", res.System, res.Workload, int64(i)*SeriesBucket.Milliseconds(), v)
		}
	}
}
