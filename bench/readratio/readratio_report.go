package readratio

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
)

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteReadRatioMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteReadRatioJSONLines(w, r) }

// Sizes are the ensemble sizes of the report, in the order measured.
func (r *Report) Sizes() []int {
	var out []int
	for _, e := range r.Ensembles {
		if !slices.Contains(out, e.Servers) {
			out = append(out, e.Servers)
		}
	}
	return out
}

// Targets are the report's targets, in the order measured.
func (r *Report) Targets() []string {
	var out []string
	for _, e := range r.Ensembles {
		if !slices.Contains(out, e.Target) {
			out = append(out, e.Target)
		}
	}
	return out
}

// WriteReadRatioMarkdown writes the report: the conditions, the throughput
// table (a row per read ratio, a column per server and ensemble size, and
// corral ÷ ZooKeeper per size when both ran), the paper's Table 1 extremes,
// a row of details per cell, and any failures.
func WriteReadRatioMarkdown(w io.Writer, rep *Report) {
	e := rep.Env
	fig := "Fig. 5 and Table 1"
	if rep.LeaderOnly {
		fig = "Fig. 6"
	}
	fmt.Fprintf(w, "## corral bench readratio\n\n")
	fmt.Fprintf(w, "Saturated throughput against the share of reads, after the ZooKeeper paper's §5.1 (%s).\n\n", fig)
	if rep.Command != "" {
		fmt.Fprintf(w, "- command: `%s`\n", rep.Command)
	}
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	where := "spread round-robin over all members, followers first in id order and the leader last"
	if rep.LeaderOnly {
		where = "all on the leader (the paper's Fig. 6)"
	}
	fmt.Fprintf(w, "- load: %d connections × %d requests in flight, %s; each request a getData (no watch) or an unconditional setData "+
		"of a node picked uniformly at random from %d preloaded %d-byte nodes, the read share exact over every 100 requests of a connection; "+
		"%v warm-up (not measured) then %v measured per ratio; session timeout %v\n",
		e.Conns, e.Inflight, where, rep.Keys, e.ValueSize, e.Warmup, e.Duration, rep.SessionTimeout)
	if e.WorkDir != "" {
		fmt.Fprintf(w, "- zoo.cfg (the same for every target, but for ports and dataDir): ensemble on 127.0.0.1, %s, forceSync=yes, "+
			"snapCount default (100000), globalOutstandingLimit=%d, maxClientCnxns=0; dataDir under %s\n",
			e.Timing.OrDefault(), e.GlobalOutstandingLimit, e.WorkDir)
	}
	for _, en := range rep.Ensembles {
		fmt.Fprintf(w, "- %s:", SystemLabel(en.Target, en.Servers))
		if len(en.Argv) > 0 {
			fmt.Fprintf(w, " `%s`", bench.ShownArgv(en.Argv))
		} else if len(en.Addrs) > 0 {
			fmt.Fprintf(w, " %s", strings.Join(en.Addrs, ","))
		}
		if en.JavaHeap != "" {
			fmt.Fprintf(w, " (JVM heap -Xmx%s)", en.JavaHeap)
		}
		if en.Version != "" {
			fmt.Fprintf(w, "; srvr: %s", en.Version)
		}
		if en.Leader != 0 {
			fmt.Fprintf(w, "; leader server.%d", en.Leader)
		}
		if en.LeaderAfter != 0 {
			fmt.Fprintf(w, "; WARNING: leader changed during the run, to server.%d", en.LeaderAfter)
		}
		if en.Err != "" {
			fmt.Fprintf(w, "; FAILED: %s", en.Err)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "### Throughput (ops/s)\n\n")
	WriteReadRatioTable(w, rep)
	fmt.Fprintln(w)
	if targets := rep.Targets(); slices.Contains(targets, launch.TargetCorral) && slices.Contains(targets, launch.TargetZooKeeper) {
		fmt.Fprintf(w, "Ratios are corral ÷ zookeeper at the same ensemble size: above 1, corral served more.\n\n")
	}
	writeReadRatioExtremes(w, rep)
	writeReadRatioDetails(w, rep)
	for _, p := range rep.Plots {
		fmt.Fprintf(w, "\n![%s](%s)\n", p, p)
	}
	var notes []string
	for _, c := range rep.Cells {
		if c.Err != "" {
			notes = append(notes, fmt.Sprintf("%s at %d%% reads FAILED: %s", SystemLabel(c.Target, c.Servers), c.ReadPct, c.Err))
		}
		if c.Errors > 0 {
			notes = append(notes, fmt.Sprintf("%s at %d%% reads: %d error replies, first %s", SystemLabel(c.Target, c.Servers), c.ReadPct, c.Errors, c.FirstError))
		}
	}
	if rep.Err != "" && len(notes) == 0 {
		notes = append(notes, "FAILED: "+rep.Err)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "\n- %s", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
}

// WriteReadRatioTable writes the throughput table: a row per read ratio,
// per ensemble size a column per target and, when corral and ZooKeeper
// both ran, their ratio.
func WriteReadRatioTable(w io.Writer, rep *Report) {
	type column struct {
		head  string
		value func(pct int) string
	}
	ops := func(target string, n int) func(int) (float64, bool) {
		return func(pct int) (float64, bool) {
			c := rep.Cell(target, n, pct)
			if c == nil || c.Seconds == 0 {
				return 0, false
			}
			return c.OpsPerSec, true
		}
	}
	targets := rep.Targets()
	both := slices.Contains(targets, launch.TargetCorral) && slices.Contains(targets, launch.TargetZooKeeper)
	var cols []column
	for _, n := range rep.Sizes() {
		for _, t := range targets {
			f := ops(t, n)
			cols = append(cols, column{SystemLabel(t, n), func(pct int) string {
				if v, ok := f(pct); ok {
					return fmt.Sprintf("%.0f", v)
				}
				return "—"
			}})
		}
		if both {
			c, z := ops(launch.TargetCorral, n), ops(launch.TargetZooKeeper, n)
			cols = append(cols, column{fmt.Sprintf("corral/zookeeper n=%d", n), func(pct int) string {
				cv, okc := c(pct)
				zv, okz := z(pct)
				if okc && okz && zv > 0 {
					return fmt.Sprintf("%.2fx", cv/zv)
				}
				return "—"
			}})
		}
	}
	head := []string{"reads %"}
	align := []string{"---:"}
	for _, c := range cols {
		head = append(head, c.head)
		align = append(align, "---:")
	}
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for _, pct := range rep.Ratios {
		cells := []string{fmt.Sprint(pct)}
		for _, c := range cols {
			cells = append(cells, c.value(pct))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// writeReadRatioExtremes writes the paper's Table 1: per ensemble the
// throughput at 100% and at 0% reads, when both were measured.
func writeReadRatioExtremes(w io.Writer, rep *Report) {
	if !slices.Contains(rep.Ratios, 0) || !slices.Contains(rep.Ratios, 100) {
		return
	}
	fmt.Fprintf(w, "### Extremes (Table 1)\n\n| servers | 100%% reads ops/s | 0%% reads ops/s |\n|---|---:|---:|\n")
	for _, e := range rep.systems() {
		get := func(pct int) string {
			if c := rep.Cell(e.Target, e.Servers, pct); c != nil && c.Seconds > 0 {
				return fmt.Sprintf("%.0f", c.OpsPerSec)
			}
			return "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", SystemLabel(e.Target, e.Servers), get(100), get(0))
	}
	fmt.Fprintln(w)
}

// writeReadRatioDetails writes a row per cell: latencies, errors, the mix
// actually issued, and the CPU of servers and load generator.
func writeReadRatioDetails(w io.Writer, rep *Report) {
	if len(rep.Cells) == 0 {
		return
	}
	fmt.Fprintf(w, "### Details\n\n")
	fmt.Fprintf(w, "| servers | reads %% | ops/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | reads issued %% | server CPU µs/op | loadgen CPU %% | other CPU %% |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	dash := "—"
	for i := range rep.Cells {
		c := &rep.Cells[i]
		lat := func(us int64) string {
			if c.Latency.Count == 0 {
				return dash
			}
			return fmt.Sprintf("%.2f", load.Ms(us))
		}
		issued := dash
		if n := c.Reads + c.Writes; n > 0 {
			issued = fmt.Sprintf("%.1f", 100*float64(c.Reads)/float64(n))
		}
		cpuOp := dash
		if c.ServerCPU != nil && c.Ops > 0 {
			cpuOp = fmt.Sprintf("%.1f", *c.ServerCPU/float64(c.Ops)*1e6)
		}
		share := func(s float64, ok bool) string {
			if !ok || c.Seconds == 0 || rep.Env.CPUs == 0 {
				return dash
			}
			return fmt.Sprintf("%.0f", 100*s/(c.Seconds*float64(rep.Env.CPUs)))
		}
		other, okOther := bench.OtherCPU(&c.PhaseResult)
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
			SystemLabel(c.Target, c.Servers), c.ReadPct, c.OpsPerSec, lat(c.P50), lat(c.P99), lat(c.P999), lat(c.Max),
			c.Errors, issued, cpuOp, share(c.LoadgenCPU, c.Seconds > 0), share(other, okOther))
	}
	fmt.Fprintf(w, "\nLatencies are of successful requests, from the write that sent the request to the read of its reply. "+
		"CPU shares are of the whole machine over the measured interval; \"other\" is what neither the servers nor the load "+
		"generator used (other processes, kernel threads).\n")
}

// readRatioJSON is what every readratio JSON line carries.
type readRatioJSON struct {
	Kind       string `json:"kind"`
	Start      string `json:"start"`
	CPUs       int    `json:"cpus"`
	LeaderOnly bool   `json:"leader_only"`
	Keys       int64  `json:"keys"`
}

// WriteReadRatioJSONLines writes a line per ensemble ("kind": "ensemble")
// and per cell ("kind": "cell").
func WriteReadRatioJSONLines(w io.Writer, rep *Report) error {
	common := readRatioJSON{Start: rep.Start.UTC().Format(time.RFC3339), CPUs: rep.Env.CPUs, LeaderOnly: rep.LeaderOnly, Keys: rep.Keys}
	enc := json.NewEncoder(w)
	for _, e := range rep.Ensembles {
		c := common
		c.Kind = "ensemble"
		if err := enc.Encode(struct {
			readRatioJSON
			RatioEnsemble
		}{c, e}); err != nil {
			return err
		}
	}
	for _, cell := range rep.Cells {
		c := common
		c.Kind = "cell"
		if err := enc.Encode(struct {
			readRatioJSON
			RatioCell
		}{c, cell}); err != nil {
			return err
		}
	}
	return nil
}
