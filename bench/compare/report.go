package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/floor"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// metric is one row of a phase in the table.
type metric struct {
	name   string
	value  func(r *load.PhaseResult) (float64, bool)
	format string
}

func metrics() []metric {
	lat := func(f func(*load.PhaseResult) int64) func(*load.PhaseResult) (float64, bool) {
		return func(r *load.PhaseResult) (float64, bool) { return load.Ms(f(r)), r.Latency.Count > 0 }
	}
	return []metric{
		{"ops/s", func(r *load.PhaseResult) (float64, bool) { return r.OpsPerSec, r.Seconds > 0 }, "%.0f"},
		{"p50 ms", lat(func(r *load.PhaseResult) int64 { return r.P50 }), "%.3f"},
		{"p99 ms", lat(func(r *load.PhaseResult) int64 { return r.P99 }), "%.3f"},
		{"p99.9 ms", lat(func(r *load.PhaseResult) int64 { return r.P999 }), "%.3f"},
		{"max ms", lat(func(r *load.PhaseResult) int64 { return r.Max }), "%.3f"},
		{"errors", func(r *load.PhaseResult) (float64, bool) { return float64(r.Errors), r.Seconds > 0 }, "%.0f"},
		{"server CPU s", func(r *load.PhaseResult) (float64, bool) {
			if r.ServerCPU == nil {
				return 0, false
			}
			return *r.ServerCPU, true
		}, "%.2f"},
		{"server CPU µs/op", serverCPUPerOp, "%.1f"},
		{"fsyncs per 1M ops", load.FsyncsPerMillion, "%.0f"},
		{"loadgen CPU s", func(r *load.PhaseResult) (float64, bool) { return r.LoadgenCPU, r.Seconds > 0 }, "%.2f"},
		{"loadgen CPU µs/op", loadgenCPUPerOp, "%.1f"},
		{"other CPU s", bench.OtherCPU, "%.2f"},
	}
}

// WriteTable writes the results as one Markdown table: a row per phase and
// metric, a column per target, and, when both corral and zookeeper were
// Measured, a corral/zookeeper ratio column (and corral+ops/corral when
// both of those were).
func WriteTable(w io.Writer, results []load.PhaseResult) {
	var targets, phases []string
	byKey := map[[2]string]*load.PhaseResult{}
	for i := range results {
		r := &results[i]
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
		byKey[[2]string{r.Target, r.Phase}] = r
	}
	var pairs [][2]string
	for _, p := range [][2]string{{launch.TargetCorral, launch.TargetZooKeeper}, {launch.TargetCorralOps, launch.TargetCorral}} {
		if slices.Contains(targets, p[0]) && slices.Contains(targets, p[1]) {
			pairs = append(pairs, p)
		}
	}

	head := append([]string{"phase", "metric"}, targets...)
	align := []string{"---", "---"}
	for range targets {
		align = append(align, "---:")
	}
	for _, p := range pairs {
		head = append(head, p[0]+"/"+p[1])
		align = append(align, "---:")
	}
	row := func(cells []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	row(head)
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, p := range phases {
		for _, m := range metricsFor(results) {
			cells := []string{p, m.name}
			vals := map[string]float64{}
			for _, t := range targets {
				r := byKey[[2]string{t, p}]
				if r == nil || r.Err != "" && r.Seconds == 0 {
					cells = append(cells, "—")
					continue
				}
				v, ok := m.value(r)
				if !ok {
					cells = append(cells, "—")
					continue
				}
				vals[t] = v
				cells = append(cells, fmt.Sprintf(m.format, v))
			}
			for _, p := range pairs {
				c, okc := vals[p[0]]
				z, okz := vals[p[1]]
				if okc && okz && z != 0 {
					cells = append(cells, fmt.Sprintf("%.2fx", c/z))
				} else {
					cells = append(cells, "—")
				}
			}
			row(cells)
		}
	}
}

// WriteMarkdown writes the report: the conditions of the measurement, the
// table, and any failures.
func WriteMarkdown(w io.Writer, rep *Report) {
	e := rep.Env
	fmt.Fprintf(w, "## corral bench %s\n\n", rep.Mode)
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the server(s) and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- load: %d connections × %d requests in flight, %d-byte values, %v warm-up (not measured) then %v measured per phase",
		e.Conns, e.Inflight, e.ValueSize, e.Warmup, e.Duration)
	if e.SeqDuration > 0 {
		fmt.Fprintf(w, "; seqcreate: 1 connection, 1 request in flight, %v warm-up then %v measured", e.SeqWarmup, e.SeqDuration)
	}
	if e.Rate > 0 {
		fmt.Fprintf(w, "; open loop: %.0f requests/s in total on a fixed schedule, at most %d outstanding per connection (seqcreate stays closed loop)",
			e.Rate, e.Inflight)
	}
	fmt.Fprintln(w)
	if len(e.Phases) > 0 {
		fmt.Fprintf(w, "- phases, in order, each target started afresh for each group (groups separated by /): %s", joinPhases(e.Phases, ", ", " / "))
		if e.Keys > 0 {
			fmt.Fprintf(w, "; set and get address %d nodes created unmeasured before them", e.Keys)
		}
		fmt.Fprintln(w)
	}
	if rep.Mode == "compare" {
		shape := "standalone on 127.0.0.1"
		if e.Servers > 1 {
			shape = fmt.Sprintf("%d-server ensemble on 127.0.0.1 (server.N=127.0.0.1:quorum:election;127.0.0.1:client, "+
				"one dataDir with myid per server)", e.Servers)
		}
		durability := "forceSync=yes"
		if e.Durability != "" {
			durability = fmt.Sprintf("durability %s (corral: durability=%s; ZooKeeper: forceSync=%s)", e.Durability, e.Durability,
				map[bool]string{true: "no", false: "yes"}[e.Durability == "async"])
		}
		same := "the same for every target"
		if e.Durability != "" {
			same += " but its durability line"
		}
		if slices.ContainsFunc(rep.Servers, func(s bench.ServerInfo) bool { return s.Target == launch.TargetCorralOps }) {
			same += "; corral+ops adds admin.enableServer=true and metricsProvider.className=…PrometheusMetricsProvider on 127.0.0.1"
		}
		fmt.Fprintf(w, "- zoo.cfg (%s): %s, %s, %s, snapCount default (100000), "+
			"globalOutstandingLimit=%d, maxClientCnxns=0, admin.enableServer=false, 4lw.commands.whitelist=*, dataDir under %s\n",
			same, shape, e.Timing.OrDefault(), durability, e.GlobalOutstandingLimit, e.WorkDir)
		if e.Servers > 1 {
			fmt.Fprintf(w, "- connections: assigned round-robin over the servers, followers first in id order and the leader last "+
				"(so the leader has at most as many as a follower, whichever server leads); seqcreate's one connection is on a follower\n")
		}
	}
	for _, s := range rep.Servers {
		fmt.Fprintf(w, "- %s:", s.Label())
		s.WriteDetails(w)
	}
	if clientOf(rep) == ClientGozk {
		fmt.Fprintf(w, "- client: github.com/go-zookeeper/zk, synchronous: each connection shared by %d goroutines with one request "+
			"outstanding each; the unmeasured creation of the nodes set and get address (when no create phase precedes them) is the load generator's\n", e.Inflight)
	} else {
		fmt.Fprintf(w, "- client: the built-in load generator (pipelined, up to %d requests outstanding per connection)\n", e.Inflight)
	}
	fmt.Fprintln(w)
	writeResultsTable(w, rep)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Latencies are of successful requests, from the write that sent the request to the read of its reply. ")
	if e.Rate > 0 {
		fmt.Fprintf(w, "In open loop the rows \"from intended\" measure from the time the schedule meant the request to leave instead, "+
			"so a request that waited for a free slot is charged for the wait (no coordinated omission); "+
			"unsent counts the requests due in the measured interval that had not left by its end. ")
	}
	if slices.ContainsFunc(rep.Servers, func(s bench.ServerInfo) bool { return s.Target == launch.TargetCorral }) &&
		slices.ContainsFunc(rep.Servers, func(s bench.ServerInfo) bool { return s.Target == launch.TargetZooKeeper }) {
		fmt.Fprintf(w, "Ratios are corral ÷ zookeeper: above 1 is better for ops/s, below 1 is better for latencies and CPU. ")
	}
	if slices.ContainsFunc(rep.Servers, func(s bench.ServerInfo) bool { return s.Target == launch.TargetCorralOps }) {
		fmt.Fprintf(w, "corral+ops is corral with the AdminServer (and its web console) and the Prometheus endpoint enabled and nobody "+
			"polling them; corral+ops ÷ corral is what having them on costs. ")
	}
	if share, ok := maxLoadgenShare(rep); ok {
		who := "The load generator"
		if clientOf(rep) == ClientGozk {
			who = "The client (go-zookeeper, in the bench process)"
		}
		fmt.Fprintf(w, "%s used at most %.0f%% of the machine's CPU in any phase (loadgen CPU s ÷ (measured s × %d CPUs)).", who, share*100, e.CPUs)
	}
	if other, ok := maxOtherShare(rep); ok && other > 0.05 {
		fmt.Fprintf(w, " WARNING: up to %.0f%% of the machine's CPU in a phase was busy outside the server and the load generator "+
			"(other CPU s: other processes, or kernel threads such as the file system's journal); where that was other processes, "+
			"those numbers are disturbed.", other*100)
	}
	fmt.Fprintln(w)
	for _, r := range rep.Results {
		if len(r.ServerCPUEach) > 0 {
			var parts []string
			for _, p := range r.ServerCPUEach {
				parts = append(parts, fmt.Sprintf("%s %.2f", p.Server, p.CPU))
			}
			fmt.Fprintf(w, "\n- %s %s server CPU s by process: %s", r.Label(), r.Phase, strings.Join(parts, ", "))
		}
	}
	for _, r := range rep.Results {
		if len(r.FsyncsEach) > 0 && r.Ops > 0 {
			var parts []string
			for _, f := range r.FsyncsEach {
				parts = append(parts, fmt.Sprintf("%s %d (%.0f per 1M ops)", f.Server, f.Fsyncs, float64(f.Fsyncs)/float64(r.Ops)*1e6))
			}
			fmt.Fprintf(w, "\n- %s %s log fsyncs by server (mntr zk_cnt_fsynctime): %s", r.Label(), r.Phase, strings.Join(parts, ", "))
		}
	}
	for _, r := range rep.Results {
		if r.Err != "" {
			fmt.Fprintf(w, "\n- %s %s FAILED: %s", r.Label(), r.Phase, r.Err)
		}
	}
	for _, r := range rep.Results {
		if r.Errors > 0 {
			fmt.Fprintf(w, "\n- %s %s: %d error replies, first %s", r.Label(), r.Phase, r.Errors, r.FirstError)
		}
	}
	fmt.Fprintln(w)
	writeCPUBound(w, rep)
	writeFloor(w, rep)
	WritePlotLinks(w, rep.Plots)
}

// clientOf names the client that drove rep's phases.
func clientOf(rep *Report) string {
	if rep.Client == "" {
		return ClientLoad
	}
	return rep.Client
}

// writeFloor writes the floor probe's section and each sequential create
// p50 as a multiple of the floor for the run's number of servers.
func writeFloor(w io.Writer, rep *Report) {
	if rep.Floor == nil {
		return
	}
	fmt.Fprintf(w, "\n### The floor for one replicated write (measured before the targets)\n\n")
	rep.Floor.WriteSection(w)
	fmt.Fprintln(w)
	for i := range rep.Results {
		r := &rep.Results[i]
		f, ok := seqFloor(rep, r)
		if !ok {
			continue
		}
		m, ok := f.Multiple(float64(r.P50))
		if !ok {
			continue
		}
		fmt.Fprintf(w, "- %s %s p50 = %.3f ms = %.2f× floor (%d server(s): %.3f ms)",
			r.Label(), r.Phase, load.Ms(r.P50), m, max(rep.Env.Servers, 1), f.P50/1000)
		if mi, ok := f.IdleMultiple(float64(r.P50)); ok {
			fmt.Fprintf(w, " = %.2f× idle floor (%.3f ms)", mi, f.IdleP50/1000)
		}
		fmt.Fprintln(w)
	}
}

func maxLoadgenShare(rep *Report) (float64, bool) {
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

func maxOtherShare(rep *Report) (float64, bool) {
	var worst float64
	ok := false
	for i := range rep.Results {
		r := &rep.Results[i]
		if o, has := bench.OtherCPU(r); has && r.Seconds > 0 && rep.Env.CPUs > 0 {
			worst = max(worst, o/(r.Seconds*float64(rep.Env.CPUs)))
			ok = true
		}
	}
	return worst, ok
}

// WriteJSONLines writes one JSON object per phase result.
func WriteJSONLines(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	if rep.Floor != nil {
		if err := rep.Floor.JSONLines(w); err != nil {
			return err
		}
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		j := jsonResult{PhaseResult: *r, Start: rep.Start.UTC().Format(time.RFC3339), CPUs: rep.Env.CPUs, Client: clientOf(rep)}
		j.ServerCPUPerOp = ptr(serverCPUPerOp(r))
		j.LoadgenCPUPerOp = ptr(loadgenCPUPerOp(r))
		if f, ok := seqFloor(rep, r); ok {
			if m, ok := f.Multiple(float64(r.P50)); ok {
				j.FloorP50, j.FloorMultiple = &f.P50, &m
			}
			if m, ok := f.IdleMultiple(float64(r.P50)); ok {
				j.IdleFloorP50, j.IdleFloorMultiple = &f.IdleP50, &m
			}
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return writeRepeatJSON(enc, rep)
}

type jsonResult struct {
	Start string `json:"start"`
	CPUs  int    `json:"cpus"`
	// Client drove the phase (ClientLoad or ClientGozk).
	Client string `json:"client"`
	// ServerCPUPerOp and LoadgenCPUPerOp are the CPU microseconds per
	// completed request of the server processes (summed over the
	// members) and of this process; nil when not measured.
	ServerCPUPerOp  *float64 `json:"server_cpu_us_per_op,omitempty"`
	LoadgenCPUPerOp *float64 `json:"loadgen_cpu_us_per_op,omitempty"`
	// FloorP50 and FloorMultiple are, for a seqcreate phase when the
	// floor probe ran, the floor's p50 in microseconds for the run's
	// number of servers and the phase's p50 as a multiple of it.
	FloorP50      *float64 `json:"floor_p50_us,omitempty"`
	FloorMultiple *float64 `json:"p50_floor_multiple,omitempty"`
	// IdleFloorP50 and IdleFloorMultiple are the same for the floor with
	// idle round trips (floor.Result.IdleP50).
	IdleFloorP50      *float64 `json:"idle_floor_p50_us,omitempty"`
	IdleFloorMultiple *float64 `json:"p50_idle_floor_multiple,omitempty"`
	load.PhaseResult
}

// serverCPUPerOp is the server's CPU microseconds per completed request.
func serverCPUPerOp(r *load.PhaseResult) (float64, bool) {
	if r.ServerCPU == nil || r.Ops == 0 {
		return 0, false
	}
	return *r.ServerCPU / float64(r.Ops) * 1e6, true
}

// loadgenCPUPerOp is the client process's CPU microseconds per completed
// request: what the client (load generator or go-zookeeper) costs beside
// the server.
func loadgenCPUPerOp(r *load.PhaseResult) (float64, bool) {
	if r.Seconds <= 0 || r.Ops == 0 {
		return 0, false
	}
	return r.LoadgenCPU / float64(r.Ops) * 1e6, true
}

func ptr(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// seqFloor is the floor for the run's number of servers, when r is a
// sequential create phase with samples and the floor was measured.
func seqFloor(rep *Report, r *load.PhaseResult) (floor.Result, bool) {
	if r.Workload != load.WorkloadSeqCreate && r.Phase != "seqcreate" || r.Latency.Count == 0 {
		return floor.Result{}, false
	}
	return rep.Floor.For(max(rep.Env.Servers, 1))
}

// WritePlotLinks ends the report with its figures.
func WritePlotLinks(w io.Writer, plots []string) {
	if len(plots) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Latency distributions\n\n")
	for _, p := range plots {
		fmt.Fprintf(w, "![%s](%s)\n\n", strings.TrimSuffix(p, ".png"), p)
	}
}

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteJSONLines(w, r) }

// metricsFor is the table's rows for results: metrics(), and after the
// latencies, when any phase ran open loop, its latencies from the
// intended send times and its unsent requests.
func metricsFor(results []load.PhaseResult) []metric {
	rows := metrics()
	if !slices.ContainsFunc(results, func(r load.PhaseResult) bool { return r.OpenLoop != nil }) {
		return rows
	}
	lat := func(name string, f func(*stats.Latency) int64) metric {
		return metric{name, func(r *load.PhaseResult) (float64, bool) {
			if r.OpenLoop == nil || r.OpenLoop.FromIntended.Count == 0 {
				return 0, false
			}
			return load.Ms(f(&r.OpenLoop.FromIntended)), true
		}, "%.3f"}
	}
	open := []metric{
		lat("p50 ms from intended", func(l *stats.Latency) int64 { return l.P50 }),
		lat("p99 ms from intended", func(l *stats.Latency) int64 { return l.P99 }),
		lat("p99.9 ms from intended", func(l *stats.Latency) int64 { return l.P999 }),
		lat("max ms from intended", func(l *stats.Latency) int64 { return l.Max }),
		{"unsent (open loop)", func(r *load.PhaseResult) (float64, bool) {
			if r.OpenLoop == nil {
				return 0, false
			}
			return float64(r.OpenLoop.Unsent), true
		}, "%.0f"},
	}
	at := slices.IndexFunc(rows, func(m metric) bool { return m.name == "max ms" }) + 1
	return slices.Insert(rows, at, open...)
}
