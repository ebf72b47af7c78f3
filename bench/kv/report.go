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
	Workloads      []string `json:"workloads"`
	Records        int64    `json:"records"`
	Threads        int      `json:"threads"`
	Warmup         string   `json:"warmup"`
	Duration       string   `json:"duration"`
	Seed           uint64   `json:"seed"`
	Members        int      `json:"members"`
	Durability     string   `json:"durability"`
	TickTimeMs     int      `json:"tick_time_ms"`
	LeaderPolicies []string `json:"leader_policies"`
	Groups         []int    `json:"groups"`
	Routing        []string `json:"routing,omitempty"`
	ServerOpts     []string `json:"server_opts,omitempty"`
	CPUBudget      bool     `json:"cpu_budget"`
	CPUQuota       float64  `json:"cpu_quota"`
	CommandLine    string   `json:"command_line"`
	CPUs           int      `json:"cpus"`
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
	// Series is completed operations per SeriesBucket (100 ms) from the
	// start of the measured interval.
	Series []int64 `json:"series_ops_per_100ms"`
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
}

func ms(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) }

var metrics = []metric{
	{"threads", func(r Result) float64 { return float64(r.Threads) }, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }},
	{"throughput (ops/s)", func(r Result) float64 { return r.Throughput }, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }},
	{"mean latency (ms)", func(r Result) float64 { return r.Latency.Mean }, ms},
	{"p50 latency (ms)", func(r Result) float64 { return float64(r.Latency.P50) }, ms},
	{"p99 latency (ms)", func(r Result) float64 { return float64(r.Latency.P99) }, ms},
	{"errors", func(r Result) float64 { return float64(r.Errors) }, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }},
	{"server CPU µs/op", func(r Result) float64 { return r.ServerCPUPerOpUs }, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
}

// Markdown writes the report.
func (r *Report) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "# corral KV vs etcd: YCSB over the ACaZoo records\n\n")
	fmt.Fprintf(w, "Command: `%s`\n\n", c.CommandLine)
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
				if res, ok := r.find(n, wl); ok {
					row += " " + m.format(m.get(res)) + " |"
				} else {
					row += " – |"
				}
			}
			if etcd {
				e, eok := r.find(SystemEtcd, wl)
				for _, n := range names {
					if n == SystemEtcd {
						continue
					}
					res, ok := r.find(n, wl)
					if ok && eok && m.get(e) != 0 {
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
	if len(r.Scaling) > 0 {
		fmt.Fprintln(w, "## Scaling over replica groups (USL, N = groups, threads and records scaled with N)")
		fmt.Fprintln(w)
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
		return "GOMAXPROCS=1 only (neither a cgroup v2 cpu controller nor taskset here)"
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
