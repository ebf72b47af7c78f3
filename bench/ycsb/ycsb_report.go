package ycsb

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteYCSBMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteYCSBJSONLines(w, r) }

// ycsbCell formats v, or "—" when it does not apply.
func ycsbCell(format string, v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

// serverCPUPerOp is the servers' CPU microseconds per successful
// operation.
func (r *YCSBResult) serverCPUPerOp() (float64, bool) {
	if r.ServerCPU == nil || r.Ops == 0 {
		return 0, false
	}
	return *r.ServerCPU / float64(r.Ops) * 1e6, true
}

func latencyCells(l stats.Latency) []string {
	ok := l.Count > 0
	return []string{
		ycsbCell("%.3f", load.Ms(l.P50), ok), ycsbCell("%.3f", load.Ms(l.P99), ok),
		ycsbCell("%.3f", load.Ms(l.P999), ok), ycsbCell("%.3f", load.Ms(l.Max), ok),
	}
}

// WriteYCSBTable writes one system's results: per workload a row with the
// totals and CPU, and a row per operation with its throughput and
// latencies (and, in target mode, one with its latencies from the
// intended start).
func WriteYCSBTable(w io.Writer, results []YCSBResult) {
	row := func(cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	row("workload", "op", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "conflicts", "server CPU µs/op", "loadgen CPU s")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i := range results {
		r := &results[i]
		name := r.Workload
		if r.Distribution != "" {
			name += " (" + r.Distribution + ")"
		}
		measured := r.Seconds > 0
		cpu, cpuOK := r.serverCPUPerOp()
		row(name, "all", ycsbCell("%.0f", r.OpsPerSec, measured), "—", "—", "—", "—",
			ycsbCell("%.0f", float64(r.Errors+r.ConnErrors), measured), ycsbCell("%.0f", float64(r.Conflicts), measured),
			ycsbCell("%.1f", cpu, cpuOK), ycsbCell("%.2f", r.LoadgenCPU, measured))
		for _, op := range r.PerOp {
			cells := []string{name, op.Op, ycsbCell("%.0f", op.OpsPerSec, measured)}
			cells = append(cells, latencyCells(op.Latency)...)
			cells = append(cells, ycsbCell("%.0f", float64(op.Errors), measured), ycsbCell("%.0f", float64(op.Conflicts), measured && op.Op == opRMW.String()), "", "")
			row(cells...)
			if op.Intended != nil {
				cells := []string{name, op.Op + " from intended start", ""}
				cells = append(cells, latencyCells(*op.Intended)...)
				row(append(cells, "", "", "", "")...)
			}
		}
	}
}

// WriteYCSBRatios writes corral ÷ zookeeper for every workload and
// operation both measured.
func WriteYCSBRatios(w io.Writer, results []YCSBResult) {
	find := func(target, workload string) *YCSBResult {
		for i := range results {
			if results[i].Target == target && results[i].Workload == workload && results[i].Seconds > 0 {
				return &results[i]
			}
		}
		return nil
	}
	ratio := func(c, z float64, ok bool) string {
		if !ok || z == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2fx", c/z)
	}
	row := func(cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	row("workload", "op", "ops/s", "p50", "p99", "p99.9", "max", "server CPU µs/op")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for i := range results {
		c := &results[i]
		if c.Target != launch.TargetCorral {
			continue
		}
		z := find(launch.TargetZooKeeper, c.Workload)
		if z == nil || c.Seconds == 0 {
			continue
		}
		cc, cok := c.serverCPUPerOp()
		zc, zok := z.serverCPUPerOp()
		row(c.Workload, "all", ratio(c.OpsPerSec, z.OpsPerSec, true), "—", "—", "—", "—", ratio(cc, zc, cok && zok))
		for _, co := range c.PerOp {
			i := slices.IndexFunc(z.PerOp, func(o YCSBOpResult) bool { return o.Op == co.Op })
			if i < 0 {
				continue
			}
			zo := z.PerOp[i]
			ok := co.Latency.Count > 0 && zo.Latency.Count > 0
			row(c.Workload, co.Op, ratio(co.OpsPerSec, zo.OpsPerSec, true),
				ratio(float64(co.Latency.P50), float64(zo.Latency.P50), ok), ratio(float64(co.Latency.P99), float64(zo.Latency.P99), ok),
				ratio(float64(co.Latency.P999), float64(zo.Latency.P999), ok), ratio(float64(co.Latency.Max), float64(zo.Latency.Max), ok), "")
		}
	}
}

// WriteYCSBMarkdown writes the report: the conditions, a table per
// system, the ratios when corral and ZooKeeper both ran, and the notes.
func WriteYCSBMarkdown(w io.Writer, rep *Report) {
	e, cfg := rep.Env, rep.Config
	fmt.Fprintf(w, "## corral bench ycsb\n\n")
	fmt.Fprintf(w, "- started: %s", rep.Start.UTC().Format(time.RFC3339))
	if !rep.End.IsZero() {
		fmt.Fprintf(w, ", took %v", rep.End.Sub(rep.Start).Round(time.Second))
	}
	fmt.Fprintln(w)
	if rep.CommandLine != "" {
		fmt.Fprintf(w, "- command: `%s`\n", rep.CommandLine)
	}
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the server(s) and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	if rep.LoadAvgEnd != "" {
		fmt.Fprintf(w, ", at end %s", rep.LoadAvgEnd)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- records: %d of %d bytes (%d fields × %d B concatenated), one persistent znode each under %s/<table>, keys user<fnvhash64(n)>",
		cfg.RecordCount, ycsbRecordSize, ycsbFieldCount, ycsbFieldLength, ycsbRoot)
	if cfg.SkipLoad {
		fmt.Fprintf(w, "; not loaded (--skip-load)")
	} else {
		fmt.Fprintf(w, "; loaded by %d sessions with %d creates in flight each", cfg.Threads, cfg.LoadInflight)
	}
	fmt.Fprintln(w)
	mode := "closed loop (each thread sends its next operation when the last is answered)"
	if cfg.TargetOps > 0 {
		mode = fmt.Sprintf("paced to %.0f ops/s together (each thread on its own schedule)", cfg.TargetOps)
	}
	fmt.Fprintf(w, "- run: %d threads, one session each, %s; %v warm-up (not measured) then %v measured per workload; seed %d\n",
		cfg.Threads, mode, cfg.Warmup, cfg.Duration, cfg.Seed)
	var wls []string
	for _, wl := range cfg.Workloads {
		wls = append(wls, fmt.Sprintf("%s: %s, %s", wl.Name, wl.Mix(), wl.Distribution))
	}
	fmt.Fprintf(w, "- workloads: %s\n", strings.Join(wls, "; "))
	if len(cfg.Launch) > 0 {
		shape := "standalone on 127.0.0.1"
		if cfg.Servers > 1 {
			shape = fmt.Sprintf("%d-server ensemble on 127.0.0.1, threads spread round-robin over the servers followers first", cfg.Servers)
		}
		d := cfg.Durability
		if d == "" {
			d = "forceSync=yes"
		}
		fmt.Fprintf(w, "- zoo.cfg (the same for every system but durability lines): %s, %s, durability %s, globalOutstandingLimit=%d, dataDir under %s\n",
			shape, e.Timing.OrDefault(), d, e.GlobalOutstandingLimit, e.WorkDir)
	}
	for _, s := range rep.Servers {
		writeServerLine(w, s)
	}
	var systems []string
	for _, r := range rep.Results {
		if !slices.Contains(systems, r.Target) {
			systems = append(systems, r.Target)
		}
	}
	for _, s := range systems {
		fmt.Fprintf(w, "\n### %s\n\n", s)
		var rs []YCSBResult
		for _, r := range rep.Results {
			if r.Target == s {
				rs = append(rs, r)
			}
		}
		WriteYCSBTable(w, rs)
	}
	if slices.Contains(systems, launch.TargetCorral) && slices.Contains(systems, launch.TargetZooKeeper) {
		fmt.Fprintf(w, "\n### corral / zookeeper\n\n")
		WriteYCSBRatios(w, rep.Results)
		fmt.Fprintf(w, "\nRatios are corral ÷ zookeeper: above 1 is better for ops/s, below 1 is better for latencies and CPU.\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "ops/s counts successful operations that finished in the measured interval. Latencies are of those operations, "+
		"from writing the first request to reading the last reply (a scan's getData requests are pipelined; a read-modify-write is its getData and setData). "+
		"conflicts are read-modify-writes whose setData found the version changed (BadVersion). The load's row covers the whole load.")
	if cfg.TargetOps > 0 {
		fmt.Fprintf(w, " Rows \"from intended start\" measure from when the schedule meant each operation to start, so time an operation waited behind a slow one counts.")
	}
	if share, ok := ycsbMaxLoadgenShare(rep); ok {
		fmt.Fprintf(w, " The load generator used at most %.0f%% of the machine's CPU in any phase (loadgen CPU s ÷ (measured s × %d CPUs)).", share*100, e.CPUs)
	}
	if other, ok := ycsbMaxOtherShare(rep); ok && other > 0.05 {
		fmt.Fprintf(w, " WARNING: up to %.0f%% of the machine's CPU in a phase was busy outside the servers and the load generator "+
			"(other processes, or kernel threads such as the file system's journal); where that was other processes, those numbers are disturbed.", other*100)
	}
	fmt.Fprintln(w)
	for _, r := range rep.Results {
		if len(r.ServerCPUEach) > 0 {
			var parts []string
			for _, p := range r.ServerCPUEach {
				parts = append(parts, fmt.Sprintf("%s %.2f", p.Server, p.CPU))
			}
			fmt.Fprintf(w, "\n- %s %s server CPU s by process: %s", r.Target, r.Workload, strings.Join(parts, ", "))
		}
	}
	for _, r := range rep.Results {
		for _, op := range r.PerOp {
			if op.Errors > 0 {
				fmt.Fprintf(w, "\n- %s %s %s: %d error replies, first %s", r.Target, r.Workload, op.Op, op.Errors, op.FirstError)
			}
		}
		if r.ConnErrors > 0 || r.Reconnects > 0 {
			fmt.Fprintf(w, "\n- %s %s: %d operations lost to failed connections, %d sessions reopened; first: %s",
				r.Target, r.Workload, r.ConnErrors, r.Reconnects, r.FirstConnError)
		}
		if r.Err != "" {
			fmt.Fprintf(w, "\n- %s %s FAILED: %s", r.Target, r.Workload, r.Err)
		}
	}
	fmt.Fprintln(w)
}

// writeServerLine describes one system under test, as compare's report
// does.
func writeServerLine(w io.Writer, s bench.ServerInfo) {
	fmt.Fprintf(w, "- %s:", s.Target)
	s.WriteDetails(w)
}

func ycsbMaxLoadgenShare(rep *Report) (float64, bool) {
	var best float64
	ok := false
	for _, r := range rep.Results {
		if r.Seconds > 0 && rep.Env.CPUs > 0 {
			best = max(best, r.LoadgenCPU/(r.Seconds*float64(rep.Env.CPUs)))
			ok = true
		}
	}
	return best, ok
}

// ycsbMaxOtherShare is the largest share of the machine's CPU that was
// busy outside the servers and the generator in a phase (see otherCPU).
func ycsbMaxOtherShare(rep *Report) (float64, bool) {
	var worst float64
	ok := false
	for _, r := range rep.Results {
		if r.MachineCPU == nil || r.ServerCPU == nil || r.Seconds <= 0 || rep.Env.CPUs <= 0 {
			continue
		}
		other := max(0, *r.MachineCPU-*r.ServerCPU-r.LoadgenCPU)
		worst = max(worst, other/(r.Seconds*float64(rep.Env.CPUs)))
		ok = true
	}
	return worst, ok
}

// WriteYCSBJSONLines writes one JSON object per system and workload (the
// load included).
func WriteYCSBJSONLines(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	start := rep.Start.UTC().Format(time.RFC3339)
	for _, r := range rep.Results {
		if err := enc.Encode(struct {
			Bench string `json:"bench"`
			Start string `json:"start"`
			CPUs  int    `json:"cpus"`
			YCSBResult
		}{"ycsb", start, rep.Env.CPUs, r}); err != nil {
			return err
		}
	}
	return nil
}
