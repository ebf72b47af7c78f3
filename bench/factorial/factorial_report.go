package factorial

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteFactorialMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteFactorialJSONLines(w, r) }

// responseDesc names the response with its unit.
func responseDesc(response string, workloads []string) string {
	what := strings.Join(workloads, "/")
	switch response {
	case ResponseP50:
		return what + " median latency (ms)"
	case ResponseP99:
		return what + " p99 latency (ms)"
	}
	return what + " throughput (ops/s)"
}

// WriteFactorialMarkdown writes the report: the design, the responses in
// standard order, and the effects with their shares of the variation.
func WriteFactorialMarkdown(w io.Writer, rep *Report) {
	s, e := rep.Settings, rep.Env
	k := len(s.Factors)
	fmt.Fprintf(w, "## corral bench factorial\n\n")
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	if rep.Command != "" {
		fmt.Fprintf(w, "- command: `%s`\n", rep.Command)
	}
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- design: 2^%d·%d, %d runs; each run a fresh launch on 127.0.0.1 (1 server standalone, more an ensemble), "+
		"%d nodes created unmeasured for set and get, then %v warm-up and %v measured with %d requests in flight per connection; "+
		"the runs in a random order (seed %d) so that drift spreads over every effect\n",
		k, s.Reps, (1<<k)*s.Reps, s.Keys, s.Warmup, s.Duration, s.Inflight, s.Seed)
	fmt.Fprintf(w, "- response: %s\n", responseDesc(s.Response, levelValues(s, FactorWorkload)))
	fmt.Fprintf(w, "- zoo.cfg as compare's (%s) but for durability: sync is corral durability=sync / ZooKeeper forceSync=yes, "+
		"async corral durability=async / ZooKeeper forceSync=no", s.Timing.OrDefault())
	if s.JavaHeap != "" {
		fmt.Fprintf(w, "; ZooKeeper's JVM heap -Xmx%s per server", s.JavaHeap)
	}
	fmt.Fprintln(w)
	var fixed []string
	for _, f := range FactorNames {
		if !slices.Contains(s.Factors, f) && len(s.Levels[f]) > 0 {
			fixed = append(fixed, fmt.Sprintf("%s %s", f, s.Levels[f][0]))
		}
	}
	if len(fixed) > 0 {
		fmt.Fprintf(w, "- held fixed: %s\n", strings.Join(fixed, ", "))
	}
	fmt.Fprintf(w, "\n| | factor | low (−1) | high (+1) |\n|---|---|---|---|\n")
	for j, f := range s.Factors {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", stats.EffectLetters(1<<j), f, s.Levels[f][0], s.Levels[f][1])
	}
	fmt.Fprintln(w)

	writeFactorialResponses(w, rep)
	if a := rep.Analysis; a != nil {
		writeFactorialEffects(w, a)
	} else if rep.Err != "" {
		fmt.Fprintf(w, "%s.\n\n", rep.Err)
	}
	var failed []string
	for _, r := range rep.Runs {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("- run %d (experiment %d, rep %d) FAILED: %s", r.Order, r.Experiment+1, r.Rep, r.Err))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(failed, "\n"))
	}
}

// levelValues are the levels factor f runs at in the design.
func levelValues(s FactorialSettings, f string) []string {
	if slices.Contains(s.Factors, f) {
		return s.Levels[f]
	}
	if len(s.Levels[f]) > 0 {
		return s.Levels[f][:1]
	}
	return nil
}

// writeFactorialResponses is the sign table's factor columns with every
// replication's response and their mean, in standard order.
func writeFactorialResponses(w io.Writer, rep *Report) {
	s := rep.Settings
	n := 1 << len(s.Factors)
	cells := make([][]string, n)
	for i := range cells {
		cells[i] = make([]string, s.Reps)
		for r := range cells[i] {
			cells[i][r] = "—"
		}
	}
	for _, run := range rep.Runs {
		if run.Experiment < n && run.Rep >= 1 && run.Rep <= s.Reps && run.OK {
			cells[run.Experiment][run.Rep-1] = fmt.Sprintf("%.2f", run.Response)
		}
	}
	fmt.Fprintf(w, "### Responses\n\n| experiment |")
	for j, f := range s.Factors {
		fmt.Fprintf(w, " %s %s |", stats.EffectLetters(1<<j), f)
	}
	for r := range s.Reps {
		fmt.Fprintf(w, " y%d |", r+1)
	}
	fmt.Fprintf(w, " mean |\n|---:|%s%s---:|\n", strings.Repeat("---|", len(s.Factors)), strings.Repeat("---:|", s.Reps))
	for i := range n {
		fmt.Fprintf(w, "| %d |", i+1)
		for j, f := range s.Factors {
			lv := s.Levels[f][0]
			sign := "−1"
			if stats.FactorHigh(i, j) {
				lv, sign = s.Levels[f][1], "+1"
			}
			fmt.Fprintf(w, " %s (%s) |", sign, lv)
		}
		for _, c := range cells[i] {
			fmt.Fprintf(w, " %s |", c)
		}
		mean := "—"
		if rep.Analysis != nil {
			mean = fmt.Sprintf("%.2f", rep.Analysis.Means[i])
		}
		fmt.Fprintf(w, " %s |\n", mean)
	}
	fmt.Fprintln(w)
}

func writeFactorialEffects(w io.Writer, a *stats.FactorialAnalysis) {
	replicated := a.R > 1
	conf := fmt.Sprintf("%.0f%% CI", a.Confidence*100)
	fmt.Fprintf(w, "### Effects and allocation of variation\n\n")
	if replicated {
		fmt.Fprintf(w, "| effect | factors | q | %s | significant | SS | share of variation |\n|---|---|---:|---:|---|---:|---:|\n", conf)
		fmt.Fprintf(w, "| I | mean | %.2f | (%.2f, %.2f) | | | |\n", a.Q0, a.Q0Low, a.Q0High)
	} else {
		fmt.Fprintf(w, "| effect | factors | q | SS | share of variation |\n|---|---|---:|---:|---:|\n")
		fmt.Fprintf(w, "| I | mean | %.2f | | |\n", a.Q0)
	}
	for _, e := range a.Effects {
		if replicated {
			sig := "no"
			if e.Significant {
				sig = "yes"
			}
			fmt.Fprintf(w, "| %s | %s | %.2f | (%.2f, %.2f) | %s | %.4g | %.2f%% |\n", e.Letters, e.Name, e.Q, e.Low, e.High, sig, e.SS, e.Share*100)
		} else {
			fmt.Fprintf(w, "| %s | %s | %.2f | %.4g | %.2f%% |\n", e.Letters, e.Name, e.Q, e.SS, e.Share*100)
		}
	}
	if replicated {
		fmt.Fprintf(w, "| error | | | | | %.4g | %.2f%% |\n", a.SSE, a.ErrorShare*100)
		fmt.Fprintf(w, "| total | | | | | %.4g | 100%% |\n\n", a.SST)
	} else {
		fmt.Fprintf(w, "| total | | | %.4g | 100%% |\n\n", a.SST)
	}
	fmt.Fprintf(w, "q is half the change of the mean response from a factor's low to its high level (for an interaction, "+
		"half the difference it makes to the other factors' effect); SS = 2^k·r·q² and the shares are SS/SST, "+
		"with SST = Σ(y − ȳ)² (Jain, The Art of Computer Systems Performance Analysis, ch. 17–18).")
	if replicated {
		fmt.Fprintf(w, " The error is the variation between replications of one experiment, SSE = Σ(y − ȳ_i)²; "+
			"the %s is q ± t[%.3f; %d]·s_q = q ± %.3f·%.4g, and an effect whose interval includes 0 is not significant.",
			conf, 1-(1-a.Confidence)/2, a.ErrorDOF, a.T, a.SQ)
	} else {
		fmt.Fprintf(w, " With one replication the design cannot tell effects from noise: use --reps 2 or more for the error share "+
			"and confidence intervals.")
	}
	if len(a.Effects) > 0 {
		top := slices.MaxFunc(a.Effects, func(x, y stats.FactorialEffect) int {
			switch {
			case x.Share < y.Share:
				return -1
			case x.Share > y.Share:
				return 1
			}
			return 0
		})
		fmt.Fprintf(w, " The largest effect is %s (%s): %.1f%% of the variation.", top.Letters, top.Name, top.Share*100)
	}
	fmt.Fprintf(w, "\n\n")
}

// WriteFactorialJSONLines writes one object per run (kind
// "factorial_run"), one per effect (kind "factorial_effect") and the
// whole analysis (kind "factorial_analysis"), when there is one.
func WriteFactorialJSONLines(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	start := rep.Start.UTC().Format(time.RFC3339)
	type run struct {
		Kind  string `json:"kind"`
		Start string `json:"start"`
		FactorialRun
	}
	type effect struct {
		Kind     string `json:"kind"`
		Start    string `json:"start"`
		Response string `json:"response"`
		stats.FactorialEffect
	}
	type analysis struct {
		Kind     string            `json:"kind"`
		Start    string            `json:"start"`
		Settings FactorialSettings `json:"settings"`
		*stats.FactorialAnalysis
		Err string `json:"error,omitempty"`
	}
	for _, r := range rep.Runs {
		if err := enc.Encode(run{Kind: "factorial_run", Start: start, FactorialRun: r}); err != nil {
			return err
		}
	}
	if rep.Analysis != nil {
		for _, e := range rep.Analysis.Effects {
			if err := enc.Encode(effect{Kind: "factorial_effect", Start: start, Response: rep.Settings.Response, FactorialEffect: e}); err != nil {
				return err
			}
		}
	}
	return enc.Encode(analysis{Kind: "factorial_analysis", Start: start, Settings: rep.Settings, FactorialAnalysis: rep.Analysis, Err: rep.Err})
}
