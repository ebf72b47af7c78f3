package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteScaleMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteScaleJSONLines(w, r) }

// WriteScaleMarkdown writes the report: the conditions, a table and the
// USL coefficients per target, and the failures.
func WriteScaleMarkdown(w io.Writer, rep *Report) {
	c, e := rep.Config, rep.Env
	fmt.Fprintf(w, "## corral bench scale\n\n")
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	if rep.Command != "" {
		fmt.Fprintf(w, "- command: `%s`\n", rep.Command)
	}
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by every server and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- design (the study's scaling experiment): N servers and %d·N client connections scaled together, N = %s; "+
		"N = 1 is a standalone server, larger N an ensemble on 127.0.0.1, started afresh for each N; connections spread round-robin "+
		"over the members, followers first and the leader last\n", c.ClientsPerServer, launch.JoinInts(c.Servers))
	fmt.Fprintf(w, "- load: %s of %d nodes with %d-byte values (created unmeasured first), %d requests in flight per connection; "+
		"%v warm-up (not measured) then %v measured, %d time(s) per N\n",
		workloadDesc(c.Workload), c.Keys, c.ValueSize, c.Inflight, c.Warmup, c.Duration, c.Reps)
	if c.Workload == load.WorkloadCreate {
		fmt.Fprintf(w, "- (create makes new nodes: the key count does not apply)\n")
	}
	fmt.Fprintf(w, "- zoo.cfg as compare's (%s, globalOutstandingLimit=%d, ...) with durability %s (%s)",
		c.Timing.OrDefault(), launch.DefaultGlobalOutstandingLimit, c.Durability, durabilityDesc(c.Durability))
	if c.JavaHeap != "" {
		fmt.Fprintf(w, "; ZooKeeper's JVM heap -Xmx%s per server", c.JavaHeap)
	}
	fmt.Fprintln(w)
	for _, run := range rep.Runs {
		s := run.Server
		var parts []string
		if s.Version != "" {
			parts = append(parts, s.Version)
		}
		if s.Leader != "" {
			parts = append(parts, "leader "+s.Leader)
		}
		if s.LeaderAfter != "" {
			parts = append(parts, "WARNING: leader changed during the run, to "+s.LeaderAfter)
		}
		var pids []string
		for _, m := range s.Members {
			pids = append(pids, fmt.Sprintf("%d", m.PID))
		}
		if len(pids) > 0 {
			parts = append(parts, "pids "+strings.Join(pids, ", "))
		}
		if run.Err != "" {
			parts = append(parts, "FAILED: "+run.Err)
		}
		fmt.Fprintf(w, "- %s N=%d: %s\n", run.Target, run.N, strings.Join(parts, "; "))
	}
	fmt.Fprintln(w)
	for _, f := range rep.Fits {
		writeScaleTarget(w, rep, f)
	}
	if len(rep.Fits) > 1 {
		writeScaleComparison(w, rep.Fits)
	}
	for _, p := range rep.Plots {
		fmt.Fprintf(w, "![throughput against N with the fitted USL curve](%s)\n\n", p)
	}
	fmt.Fprintf(w, "X(N) is the mean throughput of the measured phases at N (± their sample standard deviation when repeated); "+
		"fitted is the USL X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted by least squares to every measurement with σ, κ ≥ 0; "+
		"speedup is X(N)/X(1) and efficiency speedup/N. λ is the coefficient of performance (the model's X(1)), σ the "+
		"serialization (contention) coefficient, κ the crosstalk (coherency) penalty, N* = sqrt((1−σ)/κ) the N of peak throughput. ")
	fmt.Fprintf(w, "Unlike the study's Docker Swarm, every server here shares the same %d CPUs with the others and with the load "+
		"generator: adding a server adds work and no hardware, so σ and κ measure what replication costs on fixed hardware, "+
		"not how the system would scale out over machines.\n", e.CPUs)
}

func workloadDesc(w load.Workload) string {
	switch w {
	case load.WorkloadGet:
		return "getData"
	case load.WorkloadSet:
		return "setData"
	case load.WorkloadCreate:
		return "create of new nodes instead"
	}
	return string(w)
}

func durabilityDesc(level string) string {
	switch level {
	case LevelSync:
		return "corral durability=sync; ZooKeeper forceSync=yes"
	case LevelAsync:
		return "corral durability=async; ZooKeeper forceSync=no"
	case LevelDiskless:
		return "corral durability=diskless"
	}
	return level
}

func writeScaleTarget(w io.Writer, rep *Report, f ScaleFit) {
	fmt.Fprintf(w, "### %s\n\n", f.Target)
	fmt.Fprintf(w, "| N | clients | X(N) ops/s | fitted X(N) | speedup | efficiency | p99 ms | server CPU µs/op | loadgen CPU %% |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range f.Rows {
		x, fitted, speed, eff := "—", "—", "—", "—"
		if row.Reps > 0 {
			x = fmt.Sprintf("%.0f", row.X)
			if row.Reps > 1 {
				x += fmt.Sprintf(" ± %.0f", row.SD)
			}
		}
		if f.Fit != nil {
			fitted = fmt.Sprintf("%.0f", row.Fitted)
		}
		if row.Speedup > 0 {
			speed, eff = fmt.Sprintf("%.2f", row.Speedup), fmt.Sprintf("%.2f", row.Efficiency)
		}
		p99, cpu, gen := scaleRunExtras(rep, f.Target, row.N)
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", row.N, row.Clients, x, fitted, speed, eff, p99, cpu, gen)
	}
	fmt.Fprintln(w)
	if f.Fit == nil {
		fmt.Fprintf(w, "No fit: %s.\n\n", f.Err)
		return
	}
	fit := f.Fit
	fmt.Fprintf(w, "USL: λ = %.1f ops/s (coefficient of performance), σ = %.4f (serialization), κ = %.5f (crosstalk), R² = %.4f; %s.",
		fit.Lambda, fit.Sigma, fit.Kappa, fit.R2, peakDesc(fit))
	if !f.BaseMeasured {
		fmt.Fprintf(w, " N = 1 was not measured: speedups are relative to λ.")
	}
	measured := 0
	for _, row := range f.Rows {
		if row.Reps > 0 {
			measured++
		}
	}
	if measured == 3 {
		fmt.Fprintf(w, " Only three N for three coefficients: the curve can pass through every mean, so R² says nothing "+
			"about whether the model fits; measure more N.")
	}
	if u := fit.Unconstrained; u != nil && (u.Sigma < 0 || u.Kappa < 0) {
		fmt.Fprintf(w, " Unconstrained least squares gives σ = %.4f, κ = %.5f; a negative coefficient (as in the study's second "+
			"stage) is outside the model, so the fit above holds it at 0.", u.Sigma, u.Kappa)
	}
	fmt.Fprintf(w, "\n\n")
}

func peakDesc(fit *stats.USLFit) string {
	switch {
	case fit.PeakN > 0:
		return fmt.Sprintf("peak N* = %.1f (%.0f ops/s)", fit.PeakN, fit.PeakX)
	case fit.Sigma >= 1:
		return "no gain past N = 1 (σ ≥ 1): throughput is highest at one"
	case fit.Sigma > 0:
		return fmt.Sprintf("no peak (κ = 0): throughput approaches λ/σ = %.0f ops/s", fit.Lambda/fit.Sigma)
	}
	return "no peak (σ = κ = 0: linear scaling)"
}

// scaleRunExtras are the p99 latency, server CPU per operation and load
// generator share of the CPUs, averaged over target's usable phases at n.
func scaleRunExtras(rep *Report, target string, n int) (p99, cpu, gen string) {
	p99, cpu, gen = "—", "—", "—"
	for _, run := range rep.Runs {
		if run.Target != target || run.N != n {
			continue
		}
		var lat, us, share []float64
		for i := range run.Results {
			r := &run.Results[i]
			if !Usable(r) {
				continue
			}
			if r.Latency.Count > 0 {
				lat = append(lat, load.Ms(r.P99))
			}
			if r.ServerCPU != nil && r.Ops > 0 {
				us = append(us, *r.ServerCPU/float64(r.Ops)*1e6)
			}
			if rep.Env.CPUs > 0 {
				share = append(share, r.LoadgenCPU/(r.Seconds*float64(rep.Env.CPUs))*100)
			}
		}
		if m, _ := bench.MeanSD(lat); len(lat) > 0 {
			p99 = fmt.Sprintf("%.2f", m)
		}
		if m, _ := bench.MeanSD(us); len(us) > 0 {
			cpu = fmt.Sprintf("%.1f", m)
		}
		if m, _ := bench.MeanSD(share); len(share) > 0 {
			gen = fmt.Sprintf("%.0f", m)
		}
	}
	return p99, cpu, gen
}

func writeScaleComparison(w io.Writer, fits []ScaleFit) {
	fmt.Fprintf(w, "### USL coefficients side by side\n\n| | %s |\n|---|", strings.Join(fitTargets(fits), " | "))
	fmt.Fprintf(w, "%s\n", strings.Repeat("---:|", len(fits)))
	rows := []struct {
		name string
		cell func(f *stats.USLFit) string
	}{
		{"λ ops/s", func(f *stats.USLFit) string { return fmt.Sprintf("%.1f", f.Lambda) }},
		{"σ", func(f *stats.USLFit) string { return fmt.Sprintf("%.4f", f.Sigma) }},
		{"κ", func(f *stats.USLFit) string { return fmt.Sprintf("%.5f", f.Kappa) }},
		{"R²", func(f *stats.USLFit) string { return fmt.Sprintf("%.4f", f.R2) }},
		{"N*", func(f *stats.USLFit) string {
			if f.PeakN == 0 {
				return "none"
			}
			return fmt.Sprintf("%.1f", f.PeakN)
		}},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, f := range fits {
			if f.Fit == nil {
				fmt.Fprintf(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %s |", r.cell(f.Fit))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func fitTargets(fits []ScaleFit) []string {
	var out []string
	for _, f := range fits {
		out = append(out, f.Target)
	}
	return out
}

// WriteScaleJSONLines writes one object per measured phase (kind
// "scale_point", with its N and repetition), one per failed trial without
// phases (kind "scale_error"), and one per target's fit (kind "scale_fit").
func WriteScaleJSONLines(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	start := rep.Start.UTC().Format(time.RFC3339)
	type point struct {
		Kind  string `json:"kind"`
		Start string `json:"start"`
		CPUs  int    `json:"cpus"`
		N     int    `json:"n"`
		Rep   int    `json:"rep"`
		load.PhaseResult
	}
	type failure struct {
		Kind   string `json:"kind"`
		Start  string `json:"start"`
		Target string `json:"target"`
		N      int    `json:"n"`
		Err    string `json:"error"`
	}
	type fit struct {
		Kind  string `json:"kind"`
		Start string `json:"start"`
		ScaleFit
		Settings ScaleSettings `json:"settings"`
	}
	for _, run := range rep.Runs {
		for i, r := range run.Results {
			if err := enc.Encode(point{Kind: "scale_point", Start: start, CPUs: rep.Env.CPUs, N: run.N, Rep: i + 1, PhaseResult: r}); err != nil {
				return err
			}
		}
		if len(run.Results) == 0 && run.Err != "" {
			if err := enc.Encode(failure{Kind: "scale_error", Start: start, Target: run.Target, N: run.N, Err: run.Err}); err != nil {
				return err
			}
		}
	}
	for _, f := range rep.Fits {
		if err := enc.Encode(fit{Kind: "scale_fit", Start: start, ScaleFit: f, Settings: rep.Config}); err != nil {
			return err
		}
	}
	return nil
}
