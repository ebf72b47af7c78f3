package factorial

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/scale"
	"github.com/corral-db/corral/bench/stats"
)

// additiveTrials is a trialRunner whose throughput follows a known model
// of the default factors, ±5 over the replications:
//
//	y = 1000 + 300·x_servers − 100·x_value + 50·x_durability + 20·x_servers·x_value ± 5
type additiveTrials struct {
	specs []scale.TrialSpec
	fail  func(spec scale.TrialSpec) bool
}

func (a *additiveTrials) run(_ context.Context, spec scale.TrialSpec) (bench.ServerInfo, []load.PhaseResult, error) {
	a.specs = append(a.specs, spec)
	if a.fail != nil && a.fail(spec) {
		return bench.ServerInfo{Target: spec.Target, Err: "boom"}, nil, errors.New("boom")
	}
	x := func(high bool) float64 {
		if high {
			return 1
		}
		return -1
	}
	xs, xv, xd := x(spec.Servers == 3), x(spec.Load.ValueSize == 1024), x(spec.Durability == scale.LevelAsync)
	y := 1000 + 300*xs - 100*xv + 50*xd + 20*xs*xv
	if strings.HasSuffix(spec.Name, "rep1") {
		y -= 5
	} else {
		y += 5
	}
	r := load.PhaseResult{Target: spec.Target, Phase: string(spec.Load.Workload), Workload: spec.Load.Workload, Seconds: 5,
		Ops: int64(y * 5), OpsPerSec: y, Latency: stats.Latency{Count: 10, P50: int64(y), P99: int64(2 * y)}}
	return bench.ServerInfo{Target: spec.Target}, []load.PhaseResult{r}, nil
}

func TestFactorialDefaultDesign(t *testing.T) {
	fake := &additiveTrials{}
	cfg := DefaultConfig()
	cfg.run = fake.run
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(fake.specs) != 16 || len(rep.Runs) != 16 {
		t.Fatalf("%d trials, %d runs", len(fake.specs), len(rep.Runs))
	}
	// Each experiment and replication once, in a shuffled order, each a
	// fresh launch at the experiment's levels.
	seen := map[[2]int]bool{}
	var order []int
	for i, run := range rep.Runs {
		seen[[2]int{run.Experiment, run.Rep}] = true
		order = append(order, run.Experiment*10+run.Rep)
		s := fake.specs[i]
		wantServers, wantValue, wantDur := 1, 64, scale.LevelSync
		if stats.FactorHigh(run.Experiment, 0) {
			wantServers = 3
		}
		if stats.FactorHigh(run.Experiment, 1) {
			wantValue = 1024
		}
		if stats.FactorHigh(run.Experiment, 2) {
			wantDur = scale.LevelAsync
		}
		if s.Servers != wantServers || s.Load.ValueSize != wantValue || s.Durability != wantDur || s.Target != launch.TargetCorral ||
			s.Load.Workload != load.WorkloadSet || s.Load.Conns != 16 || s.Load.Inflight != DefaultFactorialInflight || s.Reps != 1 {
			t.Errorf("run %d (experiment %d): spec %+v", i, run.Experiment, s)
		}
		if run.Levels[FactorServers] != map[int]string{1: "1", 3: "3"}[wantServers] || run.Levels[FactorTarget] != launch.TargetCorral {
			t.Errorf("run %d levels %v", i, run.Levels)
		}
	}
	if len(seen) != 16 {
		t.Errorf("%d distinct cells", len(seen))
	}
	if slices.IsSorted(order) {
		t.Error("runs in standard order, not shuffled")
	}

	a := rep.Analysis
	if a == nil {
		t.Fatalf("no analysis: %s", rep.Err)
	}
	want := map[string]float64{"A": 300, "B": -100, "AB": 20, "C": 50, "AC": 0, "BC": 0, "ABC": 0}
	for _, e := range a.Effects {
		if math.Abs(e.Q-want[e.Letters]) > 1e-9 {
			t.Errorf("%s (%s) = %v, want %v", e.Letters, e.Name, e.Q, want[e.Letters])
		}
	}
	if a.Effects[2].Name != "servers×value" || math.Abs(a.Q0-1000) > 1e-9 {
		t.Errorf("q0 %v, AB named %q", a.Q0, a.Effects[2].Name)
	}
	// SSE: 16 residuals of ±5; SST = 16·(300² + 100² + 20² + 50²) + SSE.
	if math.Abs(a.SSE-400) > 1e-6 || math.Abs(a.SST-(16*(90000+10000+400+2500)+400)) > 1e-6 {
		t.Errorf("SSE %v SST %v", a.SSE, a.SST)
	}

	var md bytes.Buffer
	WriteFactorialMarkdown(&md, rep)
	for _, s := range []string{"## corral bench factorial", "2^3·2, 16 runs", "| A | servers | 1 | 3 |",
		"| C | durability | sync | async |", "### Responses", "| 8 | +1 (3) | +1 (1024) | +1 (async) |",
		"### Effects and allocation of variation", "| A | servers | 300.00 |", "| error |",
		"held fixed: target corral, workload set, clients 16", "The largest effect is A (servers)", "setData"} {
		if !strings.Contains(md.String(), s) && !(s == "setData" && strings.Contains(md.String(), "set throughput")) {
			t.Errorf("report lacks %q:\n%s", s, md.String())
		}
	}

	var jl bytes.Buffer
	if err := WriteFactorialJSONLines(&jl, rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&jl)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("bad line %s: %v", sc.Text(), err)
		}
		kinds[obj["kind"].(string)]++
		if obj["kind"] == "factorial_analysis" && math.Abs(obj["q0"].(float64)-1000) > 1e-9 {
			t.Errorf("analysis line %s", sc.Text())
		}
	}
	if kinds["factorial_run"] != 16 || kinds["factorial_effect"] != 7 || kinds["factorial_analysis"] != 1 {
		t.Errorf("kinds %v", kinds)
	}
}

func TestFactorialOrderFollowsSeed(t *testing.T) {
	order := func(seed uint64) []int {
		fake := &additiveTrials{}
		cfg := DefaultConfig()
		cfg.run, cfg.Seed = fake.run, seed
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var o []int
		for _, r := range rep.Runs {
			o = append(o, r.Experiment*10+r.Rep)
		}
		return o
	}
	if a, b := order(7), order(7); !slices.Equal(a, b) {
		t.Errorf("seed 7 gave %v then %v", a, b)
	}
	if a, b := order(7), order(8); slices.Equal(a, b) {
		t.Errorf("seeds 7 and 8 both gave %v", a)
	}
}

func TestFactorialChosenFactorsAndResponse(t *testing.T) {
	fake := &additiveTrials{}
	cfg := DefaultConfig()
	cfg.run = fake.run
	cfg.Factors = []string{FactorDurability, FactorServers}
	cfg.Levels[FactorValue] = []string{"1024"}
	cfg.Response = ResponseP99
	cfg.Reps = 1
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(fake.specs) != 4 {
		t.Fatalf("%d trials", len(fake.specs))
	}
	for _, s := range fake.specs {
		if s.Load.ValueSize != 1024 {
			t.Errorf("value %d, want the fixed 1024", s.Load.ValueSize)
		}
	}
	// p99 = 2y µs = y/500 ms: effects are those of y / 500, with
	// durability as A and servers as B; value is fixed high.
	a := rep.Analysis
	want := map[string]float64{"A": 50.0 / 500, "B": (300 + 20) / 500.0, "AB": 0}
	for _, e := range a.Effects {
		// y is rounded to whole µs; allow for it.
		if math.Abs(e.Q-want[e.Letters]) > 0.002 {
			t.Errorf("%s (%s) = %v, want %v", e.Letters, e.Name, e.Q, want[e.Letters])
		}
	}
	if a.Factors[0] != FactorDurability || a.R != 1 || a.ErrorDOF != 0 {
		t.Errorf("analysis %+v", a)
	}
	var md bytes.Buffer
	WriteFactorialMarkdown(&md, rep)
	if !strings.Contains(md.String(), "p99 latency (ms)") || !strings.Contains(md.String(), "cannot tell effects from noise") {
		t.Errorf("report:\n%s", md.String())
	}
}

func TestFactorialFailedRunLeavesNoAnalysis(t *testing.T) {
	fake := &additiveTrials{fail: func(s scale.TrialSpec) bool { return s.Servers == 3 && s.Durability == scale.LevelAsync }}
	cfg := DefaultConfig()
	cfg.run = fake.run
	rep, err := Run(context.Background(), cfg)
	if err == nil || rep.Analysis != nil || rep.Err == "" {
		t.Fatalf("error %v analysis %v", err, rep.Analysis)
	}
	// The other runs still ran and are reported.
	if len(rep.Runs) != 16 {
		t.Errorf("%d runs", len(rep.Runs))
	}
	failed := 0
	for _, r := range rep.Runs {
		if r.Err != "" {
			failed++
		}
	}
	if failed != 4 {
		t.Errorf("%d failed runs, want 4", failed)
	}
	var md, jl bytes.Buffer
	WriteFactorialMarkdown(&md, rep)
	if !strings.Contains(md.String(), "FAILED: boom") || !strings.Contains(md.String(), "no analysis") {
		t.Errorf("report:\n%s", md.String())
	}
	if err := WriteFactorialJSONLines(&jl, rep); err != nil || !strings.Contains(jl.String(), `"kind":"factorial_analysis"`) {
		t.Errorf("JSON lines %v:\n%s", err, jl.String())
	}
}

func TestFactorialRejectsInvalidCombination(t *testing.T) {
	cfg := DefaultConfig()
	cfg.run = (&additiveTrials{}).run
	cfg.Factors = []string{FactorTarget, FactorDurability}
	cfg.Levels[FactorTarget] = []string{launch.TargetCorral, launch.TargetZooKeeper}
	cfg.Levels[FactorDurability] = []string{scale.LevelSync, scale.LevelDiskless}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "no diskless mode") {
		t.Errorf("error %v", err)
	}
}
