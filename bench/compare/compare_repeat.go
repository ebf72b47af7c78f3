package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Repeats (compare --repeat N): the whole target sequence runs N times,
// interleaved, each target started afresh every time, so that whatever
// drifts on the machine (other load, page cache, thermal state) falls on
// every target alike. The report then gives, per phase and metric, each
// target's median over the runs with its spread (least and greatest value
// and relative standard deviation), and the corral/zookeeper ratio of the
// medians with the least and greatest ratio of the paired runs (corral's
// Run i over zookeeper's run i): a ratio whose range crosses 1 says the
// difference is within the noise.

// runNumber is the Run a phase of repetition run carries: 0 when there is
// only one, so an unrepeated compare reports as it always did.
func runNumber(run, repeat int) int {
	if repeat > 1 {
		return run
	}
	return 0
}

// prepareOnce builds corral and finds ZooKeeper's jars once for all the
// repetitions, rather than once per start. A failure is left for
// compareTarget to meet and report per run.
func prepareOnce(ctx context.Context, cfg *Config, work string) {
	for _, t := range cfg.Targets {
		lc := launch.LaunchConfig{CorralBin: cfg.CorralBin, ZKLib: cfg.ZKLib, Log: cfg.Log}
		if err := bench.PrepareLaunch(ctx, t, &lc, work); err == nil {
			cfg.CorralBin, cfg.ZKLib = lc.CorralBin, lc.ZKLib
		}
	}
}

// spread summarises one metric's values over a target's runs.
type spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// RSD is the relative standard deviation in percent: the sample
	// standard deviation (n-1 denominator) over the mean; 0 for a single
	// Value or a zero mean.
	RSD float64 `json:"rsd_pct"`
}

// spreadOf summarises v (not empty). The median of an even count is the
// mean of the middle two.
func spreadOf(v []float64) spread {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	sp := spread{N: n, Min: s[0], Max: s[n-1]}
	if n%2 == 1 {
		sp.Median = s[n/2]
	} else {
		sp.Median = (s[n/2-1] + s[n/2]) / 2
	}
	if mean, sd := bench.MeanSD(s); mean != 0 {
		sp.RSD = sd / math.Abs(mean) * 100
	}
	return sp
}

// ratioSpread is one target over another (corral over zookeeper, or
// corral+ops over corral) for one phase and metric.
type ratioSpread struct {
	// OfMedians is the numerator's median over the denominator's.
	OfMedians float64 `json:"of_medians"`
	// Min and Max are the least and greatest ratio of the paired runs
	// (the same run number, both measured); Pairs how many there were.
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Pairs int     `json:"pairs"`
}

// repeatRow is one phase and metric over the runs.
type repeatRow struct {
	Phase, Metric string
	format        string
	// Targets has each target's spread; a target without any value is
	// missing.
	Targets map[string]spread
	// Ratio is corral over zookeeper; OpsRatio corral+ops over corral
	// (the cost of the admin server, console and metrics endpoint).
	Ratio    *ratioSpread
	OpsRatio *ratioSpread
}

// repeatRows summarises results over their runs: a row per phase and
// metric, in the order the phases ran, with the targets in the order they
// ran.
func repeatRows(results []load.PhaseResult) (targets []string, rows []repeatRow) {
	var phases []string
	for _, r := range results {
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
	}
	for _, p := range phases {
		for _, m := range metricsFor(results) {
			row := repeatRow{Phase: p, Metric: m.name, format: m.format, Targets: map[string]spread{}}
			byRun := map[string]map[int]float64{}
			for _, t := range targets {
				var vals []float64
				byRun[t] = map[int]float64{}
				for i := range results {
					r := &results[i]
					if r.Target != t || r.Phase != p || r.Err != "" && r.Seconds == 0 {
						continue
					}
					if v, ok := m.value(r); ok {
						vals = append(vals, v)
						byRun[t][r.Run] = v
					}
				}
				if len(vals) > 0 {
					row.Targets[t] = spreadOf(vals)
				}
			}
			row.Ratio = pairedRatio(row.Targets, byRun, launch.TargetCorral, launch.TargetZooKeeper)
			row.OpsRatio = pairedRatio(row.Targets, byRun, launch.TargetCorralOps, launch.TargetCorral)
			rows = append(rows, row)
		}
	}
	return targets, rows
}

// pairedRatio is num over den, nil unless both have values, a non-zero
// median and at least one pair with a non-zero denominator.
func pairedRatio(sp map[string]spread, byRun map[string]map[int]float64, num, den string) *ratioSpread {
	c, okc := sp[num]
	z, okz := sp[den]
	if !okc || !okz || z.Median == 0 {
		return nil
	}
	rs := &ratioSpread{OfMedians: c.Median / z.Median}
	var runs []int
	for run := range byRun[num] {
		runs = append(runs, run)
	}
	slices.Sort(runs)
	for _, run := range runs {
		zv, ok := byRun[den][run]
		if !ok || zv == 0 {
			continue
		}
		q := byRun[num][run] / zv
		if rs.Pairs == 0 || q < rs.Min {
			rs.Min = q
		}
		if rs.Pairs == 0 || q > rs.Max {
			rs.Max = q
		}
		rs.Pairs++
	}
	if rs.Pairs == 0 {
		return nil
	}
	return rs
}

// WriteRepeatTable writes the summary over the runs as one Markdown table:
// a row per phase and metric; per target the median, the least and
// greatest value and the relative standard deviation; and, when both
// corral and zookeeper ran, the ratio of the medians and the range of the
// paired runs' ratios (likewise corral+ops over corral).
func WriteRepeatTable(w io.Writer, results []load.PhaseResult) {
	targets, rows := repeatRows(results)
	ratio := slices.Contains(targets, launch.TargetCorral) && slices.Contains(targets, launch.TargetZooKeeper)
	opsRatio := slices.Contains(targets, launch.TargetCorralOps) && slices.Contains(targets, launch.TargetCorral)
	head := []string{"phase", "metric"}
	align := []string{"---", "---"}
	for _, t := range targets {
		head = append(head, t+" median", t+" min–max", t+" RSD")
		align = append(align, "---:", "---:", "---:")
	}
	if ratio {
		head = append(head, launch.TargetCorral+"/"+launch.TargetZooKeeper+" (medians)", "paired runs' ratios")
		align = append(align, "---:", "---:")
	}
	if opsRatio {
		head = append(head, launch.TargetCorralOps+"/"+launch.TargetCorral+" (medians)", "paired runs' ratios")
		align = append(align, "---:", "---:")
	}
	line := func(cells []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	line(head)
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, r := range rows {
		cells := []string{r.Phase, r.Metric}
		for _, t := range targets {
			sp, ok := r.Targets[t]
			if !ok {
				cells = append(cells, "—", "—", "—")
				continue
			}
			cells = append(cells, fmt.Sprintf(r.format, sp.Median),
				fmt.Sprintf(r.format+"–"+r.format, sp.Min, sp.Max), fmt.Sprintf("%.1f%%", sp.RSD))
		}
		if ratio {
			cells = append(cells, ratioCells(r.Ratio)...)
		}
		if opsRatio {
			cells = append(cells, ratioCells(r.OpsRatio)...)
		}
		line(cells)
	}
}

// ratioCells are a ratio's two cells: of the medians, and the paired runs'
// range.
func ratioCells(r *ratioSpread) []string {
	if r == nil {
		return []string{"—", "—"}
	}
	return []string{fmt.Sprintf("%.2fx", r.OfMedians), fmt.Sprintf("%.2fx–%.2fx", r.Min, r.Max)}
}

// writeResultsTable is the report's table: one column per target, or with
// repeats the summary over the runs.
func writeResultsTable(w io.Writer, rep *Report) {
	if rep.Env.Repeat > 1 {
		fmt.Fprintf(w, "Each target ran %d times, interleaved (%s); every value is the median over the runs, "+
			"with the least and greatest value and the relative standard deviation (sample standard deviation over the mean). "+
			"The ratio is of the medians; beside it the least and greatest ratio of the paired runs (run i of one over run i of the other). "+
			"Every run's figures are in the JSON lines.\n\n", rep.Env.Repeat, runOrder(rep))
		WriteRepeatTable(w, rep.Results)
		return
	}
	WriteTable(w, rep.Results)
}

// runOrder says the order of the starts, e.g. "corral, zookeeper, corral, ...".
func runOrder(rep *Report) string {
	var names []string
	for _, s := range rep.Servers {
		if s.Run > 1 {
			break
		}
		names = append(names, s.Target)
	}
	return strings.Join(append(names, names...), ", ") + ", ..."
}

// repeatSummary is the JSON line of one phase and metric over the runs.
type repeatSummary struct {
	Summary bool              `json:"summary"`
	Start   string            `json:"start"`
	Phase   string            `json:"phase"`
	Metric  string            `json:"metric"`
	Runs    int               `json:"runs"`
	Targets map[string]spread `json:"targets"`
	Ratio   *ratioSpread      `json:"ratio,omitempty"`
	// OpsRatio is corral+ops over corral.
	OpsRatio *ratioSpread `json:"ops_ratio,omitempty"`
}

// writeRepeatJSON appends the summary lines to the per-run ones.
func writeRepeatJSON(enc *json.Encoder, rep *Report) error {
	if rep.Env.Repeat <= 1 {
		return nil
	}
	_, rows := repeatRows(rep.Results)
	for _, r := range rows {
		if len(r.Targets) == 0 {
			continue
		}
		if err := enc.Encode(repeatSummary{
			Summary: true, Start: rep.Start.UTC().Format(time.RFC3339), Phase: r.Phase, Metric: r.Metric,
			Runs: rep.Env.Repeat, Targets: r.Targets, Ratio: r.Ratio, OpsRatio: r.OpsRatio,
		}); err != nil {
			return err
		}
	}
	return nil
}

// MaxRepeat bounds --repeat: every phase's histogram (about 140 KB) is
// kept for the latency plots.
const MaxRepeat = 20
