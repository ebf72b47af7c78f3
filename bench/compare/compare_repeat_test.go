package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want spread
	}{
		{[]float64{5}, spread{N: 1, Median: 5, Min: 5, Max: 5}},
		// Mean 4, deviations -2 0 2: sample variance 8/2 = 4, sd 2, 50%.
		{[]float64{6, 2, 4}, spread{N: 3, Median: 4, Min: 2, Max: 6, RSD: 50}},
		// Even count: the median is the mean of the middle two. Mean 25,
		// squared deviations 225+25+25+225 = 500, variance 500/3.
		{[]float64{40, 10, 30, 20}, spread{N: 4, Median: 25, Min: 10, Max: 40, RSD: math.Sqrt(500.0/3) / 25 * 100}},
		{[]float64{0, 0}, spread{N: 2}},
	} {
		got := spreadOf(c.in)
		if got.N != c.want.N || got.Median != c.want.Median || got.Min != c.want.Min || got.Max != c.want.Max ||
			math.Abs(got.RSD-c.want.RSD) > 1e-9 {
			t.Errorf("spreadOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	in := []float64{3, 1, 2}
	spreadOf(in)
	if in[0] != 3 || in[1] != 1 {
		t.Error("spreadOf reordered its input")
	}
}

// repeatedResults: three interleaved runs of create; zookeeper's run 2
// failed before measuring, and seqcreate ran for corral only.
func repeatedResults() []load.PhaseResult {
	r := func(target string, run int, ops float64, p99 int64) load.PhaseResult {
		return load.PhaseResult{Target: target, Run: run, Phase: "create", Seconds: 10, Ops: int64(ops * 10), OpsPerSec: ops,
			Latency: stats.Latency{Count: int64(ops * 10), P50: p99 / 2, P99: p99, P999: p99, Max: p99}}
	}
	zkFailed := load.PhaseResult{Target: launch.TargetZooKeeper, Run: 2, Phase: "create", Err: "connection refused"}
	return []load.PhaseResult{
		r(launch.TargetCorral, 1, 40000, 2000), r(launch.TargetZooKeeper, 1, 20000, 4000),
		r(launch.TargetCorral, 2, 44000, 2200), zkFailed,
		r(launch.TargetCorral, 3, 30000, 3000), r(launch.TargetZooKeeper, 3, 10000, 5000),
		{Target: launch.TargetCorral, Run: 1, Phase: "seqcreate", Seconds: 1, Ops: 900, OpsPerSec: 900},
	}
}

func findRow(t *testing.T, rows []repeatRow, phase, metric string) repeatRow {
	t.Helper()
	for _, r := range rows {
		if r.Phase == phase && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s %s", phase, metric)
	return repeatRow{}
}

// TestRepeatRows: per target the spread over the runs that measured;
// the ratio of the medians, and the paired runs' ratio range over the runs
// both measured.
func TestRepeatRows(t *testing.T) {
	targets, rows := repeatRows(repeatedResults())
	if strings.Join(targets, ",") != "corral,zookeeper" {
		t.Fatalf("targets %v", targets)
	}
	ops := findRow(t, rows, "create", "ops/s")
	c, z := ops.Targets[launch.TargetCorral], ops.Targets[launch.TargetZooKeeper]
	if c.N != 3 || c.Median != 40000 || c.Min != 30000 || c.Max != 44000 {
		t.Errorf("corral ops/s %+v", c)
	}
	if z.N != 2 || z.Median != 15000 || z.Min != 10000 || z.Max != 20000 {
		t.Errorf("zookeeper ops/s %+v", z)
	}
	// Runs 1 and 3 pair: 40000/20000 = 2 and 30000/10000 = 3.
	if r := ops.Ratio; r == nil || math.Abs(r.OfMedians-40000.0/15000) > 1e-12 || r.Min != 2 || r.Max != 3 || r.Pairs != 2 {
		t.Errorf("ratio %+v", ops.Ratio)
	}
	p99 := findRow(t, rows, "create", "p99 ms")
	if r := p99.Ratio; r == nil || r.Min != 0.5 || r.Max != 0.6 {
		t.Errorf("p99 ratio %+v, want 0.5 (2/4) to 0.6 (3/5)", p99.Ratio)
	}
	seq := findRow(t, rows, "seqcreate", "ops/s")
	if _, ok := seq.Targets[launch.TargetZooKeeper]; ok || seq.Ratio != nil || seq.Targets[launch.TargetCorral].N != 1 {
		t.Errorf("seqcreate row %+v", seq)
	}
}

func TestRepeatRowsOpsRatio(t *testing.T) {
	var rs []load.PhaseResult
	for run, v := range map[int][2]float64{1: {40000, 38000}, 2: {42000, 42000}, 3: {30000, 31500}} {
		rs = append(rs,
			load.PhaseResult{Target: launch.TargetCorral, Run: run, Phase: "create", Seconds: 10, OpsPerSec: v[0]},
			load.PhaseResult{Target: launch.TargetCorralOps, Run: run, Phase: "create", Seconds: 10, OpsPerSec: v[1]})
	}
	_, rows := repeatRows(rs)
	ops := findRow(t, rows, "create", "ops/s")
	// Medians 40000 and 38000; paired 0.95, 1 and 1.05.
	if r := ops.OpsRatio; r == nil || math.Abs(r.OfMedians-0.95) > 1e-12 || math.Abs(r.Min-0.95) > 1e-12 || math.Abs(r.Max-1.05) > 1e-12 || r.Pairs != 3 {
		t.Errorf("ops ratio %+v", ops.OpsRatio)
	}
	if ops.Ratio != nil {
		t.Errorf("corral/zookeeper ratio %+v without zookeeper", ops.Ratio)
	}
	var b bytes.Buffer
	WriteRepeatTable(&b, rs)
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasSuffix(first, "| corral+ops/corral (medians) | paired runs' ratios |") {
		t.Errorf("header %q", first)
	}
}

func TestRepeatTableAndJSON(t *testing.T) {
	rep := &Report{Mode: "compare", Start: time.Unix(0, 0), Env: bench.Env{Repeat: 3, CPUs: 2}, Results: repeatedResults(),
		Servers: []bench.ServerInfo{{Target: launch.TargetCorral, Run: 1}, {Target: launch.TargetZooKeeper, Run: 1}, {Target: launch.TargetCorral, Run: 2}}}
	var b bytes.Buffer
	WriteRepeatTable(&b, rep.Results)
	table := b.String()
	for _, want := range []string{
		"| phase | metric | corral median | corral min–max | corral RSD | zookeeper median | zookeeper min–max | zookeeper RSD | corral/zookeeper (medians) | paired runs' ratios |",
		"| create | ops/s | 40000 | 30000–44000 | 19.0% | 15000 | 10000–20000 | 47.1% | 2.67x | 2.00x–3.00x |",
		"| seqcreate | ops/s | 900 | 900–900 | 0.0% | — | — | — | — | — |",
	} {
		if !strings.Contains(table, want+"\n") {
			t.Errorf("table lacks\n%s\n%s", want, table)
		}
	}

	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	for _, want := range []string{"Each target ran 3 times, interleaved (corral, zookeeper, corral, zookeeper, ...)",
		"- corral run 2:", "- zookeeper run 2 create FAILED: connection refused"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}

	var jl bytes.Buffer
	if err := WriteJSONLines(&jl, rep); err != nil {
		t.Fatal(err)
	}
	var runs, summaries int
	sc := bufio.NewScanner(&jl)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["summary"] != true {
			runs++
			continue
		}
		summaries++
		if m["phase"] == "create" && m["metric"] == "ops/s" {
			tg := m["targets"].(map[string]any)
			if tg["corral"].(map[string]any)["median"] != 40000.0 || m["runs"] != 3.0 {
				t.Errorf("summary %s", sc.Text())
			}
			if r := m["ratio"].(map[string]any); r["min"] != 2.0 || r["max"] != 3.0 || r["pairs"] != 2.0 {
				t.Errorf("summary ratio %s", sc.Text())
			}
		}
	}
	if runs != len(rep.Results) || summaries == 0 {
		t.Errorf("%d run lines and %d summary lines", runs, summaries)
	}

	// Unrepeated: no summary lines and no run numbers.
	rep.Env.Repeat = 1
	jl.Reset()
	WriteJSONLines(&jl, &Report{Env: bench.Env{Repeat: 1}, Results: []load.PhaseResult{{Target: "corral", Phase: "create"}}})
	if strings.Contains(jl.String(), "summary") || strings.Contains(jl.String(), `"run"`) {
		t.Errorf("unrepeated JSON %s", jl.String())
	}
}

// TestCompareRepeats: each repetition starts the target afresh and keeps
// its files apart; every phase result carries its run.
func TestCompareRepeats(t *testing.T) {
	rep, out, work := fakeCompare(t, 2, 2, 200*time.Millisecond, func(c *Config) { c.Repeat = 2 })
	if rep.Env.Repeat != 2 || len(rep.Servers) != 2 || rep.Servers[0].Run != 1 || rep.Servers[1].Run != 2 {
		t.Fatalf("env %+v servers %+v", rep.Env, rep.Servers)
	}
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.Phase+"@"+string(rune('0'+r.Run)))
		if r.Err != "" || r.Ops == 0 || r.Hist == nil || r.Hist.Count() != r.Latency.Count {
			t.Errorf("%s run %d: %+v", r.Phase, r.Run, r)
		}
	}
	if s := strings.Join(got, ","); s != "create@1,set@1,get@1,seqcreate@1,create@2,set@2,get@2,seqcreate@2" {
		t.Errorf("phases %s", s)
	}
	for _, f := range []string{"corral.r1.log", "corral.r2.log", "corral.r1.zoo.cfg", "corral.r2.zoo.cfg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("work dir left behind: %v", ents)
	}
}
