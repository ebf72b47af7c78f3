package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/internal/fakezk"
)

// fakeTrials is a trialRunner that starts nothing: each measured phase
// reports the throughput of a known USL curve per target, times 1 ± 1%
// alternating over the repetitions.
type fakeTrials struct {
	mu     sync.Mutex
	curves map[string]stats.USLParams
	specs  []TrialSpec
	// fail, if set, makes the trial fail with the error it returns.
	fail func(spec TrialSpec) error
}

func (f *fakeTrials) run(ctx context.Context, spec TrialSpec) (bench.ServerInfo, []load.PhaseResult, error) {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	info := bench.ServerInfo{Target: spec.Target, Version: "fake"}
	if f.fail != nil {
		if err := f.fail(spec); err != nil {
			info.Err = err.Error()
			return info, nil, err
		}
	}
	var out []load.PhaseResult
	for rep := range spec.Reps {
		x := f.curves[spec.Target].Predict(float64(spec.Servers))
		if spec.Reps > 1 {
			x *= 1 + 0.01*float64(1-2*(rep%2))
		}
		cpu := 4.0
		out = append(out, load.PhaseResult{
			Target: spec.Target, Phase: string(spec.Load.Workload), Workload: spec.Load.Workload,
			Conns: spec.Load.Conns, Inflight: spec.Load.Inflight, ValueSize: spec.Load.ValueSize,
			Seconds: 5, Ops: int64(x * 5), OpsPerSec: x, CPUUse: load.CPUUse{ServerCPU: &cpu, LoadgenCPU: 1},
			Latency: stats.Latency{Count: int64(x * 5), P50: 900, P99: 2500, P999: 4000, Max: 9000},
		})
	}
	return info, out, nil
}

var (
	fakeCorralCurve = stats.USLParams{Lambda: 20000, Sigma: 0.08, Kappa: 0.01}
	fakeZKCurve     = stats.USLParams{Lambda: 12000, Sigma: 0.2, Kappa: 0.02}
)

func fakeScaleConfig(f *fakeTrials) Config {
	cfg := DefaultConfig()
	cfg.Reps = 2
	cfg.Run = f.run
	return cfg
}

func TestScaleFitsEachTarget(t *testing.T) {
	f := &fakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: fakeCorralCurve, launch.TargetZooKeeper: fakeZKCurve}}
	rep, err := Run(context.Background(), fakeScaleConfig(f))
	if err != nil {
		t.Fatal(err)
	}
	// Every target at every N, in order, with k·N connections.
	var got []string
	for _, s := range f.specs {
		got = append(got, s.Name)
		if s.Load.Conns != 2*s.Servers || s.Load.Workload != load.WorkloadGet || s.Load.Inflight != compare.DefaultInflight ||
			s.Durability != LevelSync || s.Reps != 2 || s.Load.ValueSize != compare.DefaultValueSize || s.Load.Keys != DefaultScaleKeys {
			t.Errorf("trial %+v", s)
		}
	}
	want := []string{"corral n=1", "corral n=2", "corral n=3", "corral n=4", "corral n=6", "corral n=8",
		"zookeeper n=1", "zookeeper n=2", "zookeeper n=3", "zookeeper n=4", "zookeeper n=6", "zookeeper n=8"}
	if !slices.Equal(got, want) {
		t.Fatalf("trials %v, want %v", got, want)
	}
	if len(rep.Fits) != 2 {
		t.Fatalf("%d fits", len(rep.Fits))
	}
	for i, truth := range []stats.USLParams{fakeCorralCurve, fakeZKCurve} {
		fit := rep.Fits[i].Fit
		if fit == nil {
			t.Fatalf("%s: no fit: %s", rep.Fits[i].Target, rep.Fits[i].Err)
		}
		// ±1% alternating noise averages out at each N.
		if math.Abs(fit.Lambda-truth.Lambda) > 1e-6*truth.Lambda || math.Abs(fit.Sigma-truth.Sigma) > 1e-6 ||
			math.Abs(fit.Kappa-truth.Kappa) > 1e-7 {
			t.Errorf("%s fit %+v, want %+v", rep.Fits[i].Target, fit.USLParams, truth)
		}
		if fit.Points != 12 {
			t.Errorf("%d points", fit.Points)
		}
		rows := rep.Fits[i].Rows
		if len(rows) != 6 || !rep.Fits[i].BaseMeasured {
			t.Fatalf("rows %+v", rows)
		}
		for _, row := range rows {
			x := truth.Predict(float64(row.N))
			if math.Abs(row.X-x) > 1e-9*x || math.Abs(row.SD-0.01*x*math.Sqrt2) > 1e-6*x || row.Reps != 2 {
				t.Errorf("row %+v, want X %v", row, x)
			}
			if sp := x / truth.Lambda; math.Abs(row.Speedup-sp) > 1e-9 || math.Abs(row.Efficiency-sp/float64(row.N)) > 1e-9 {
				t.Errorf("row %+v: speedup want %v", row, sp)
			}
			if math.Abs(row.Fitted-x) > 1e-5*x {
				t.Errorf("row %+v: fitted want %v", row, x)
			}
		}
	}

	var md bytes.Buffer
	WriteScaleMarkdown(&md, rep)
	for _, s := range []string{"## corral bench scale", "### corral", "### zookeeper", "| N | clients | X(N) ops/s |",
		"| 3 | 6 |", "λ = 20000.0 ops/s", "σ = 0.0800", "κ = 0.01000", "peak N* = 9.6", "USL coefficients side by side"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, md.String())
		}
	}

	var jl bytes.Buffer
	if err := WriteScaleJSONLines(&jl, rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&jl)
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("bad line %s: %v", sc.Text(), err)
		}
		kinds[obj["kind"].(string)]++
		if obj["kind"] == "scale_fit" && obj["target"] == launch.TargetCorral {
			fit := obj["fit"].(map[string]any)
			if math.Abs(fit["lambda"].(float64)-20000) > 0.1 || len(obj["rows"].([]any)) != 6 {
				t.Errorf("fit line %s", sc.Text())
			}
		}
	}
	if kinds["scale_point"] != 24 || kinds["scale_fit"] != 2 || kinds["scale_error"] != 0 {
		t.Errorf("JSON line kinds %v", kinds)
	}
}

func TestScaleGoesOnAfterAFailedTrial(t *testing.T) {
	f := &fakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: fakeCorralCurve},
		fail: func(s TrialSpec) error {
			if s.Servers == 3 {
				return errors.New("ensemble not whole")
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{launch.TargetCorral}
	rep, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "corral n=3") {
		t.Fatalf("error %v", err)
	}
	if len(rep.Runs) != 6 || rep.Runs[2].Err == "" || rep.Runs[3].Err != "" {
		t.Fatalf("runs %+v", rep.Runs)
	}
	fit := rep.Fits[0]
	if fit.Fit == nil || fit.Fit.Points != 10 || fit.Rows[2].Reps != 0 || fit.Rows[2].Speedup != 0 {
		t.Errorf("fit %+v", fit)
	}
	var md, jl bytes.Buffer
	WriteScaleMarkdown(&md, rep)
	if !strings.Contains(md.String(), "corral N=3: fake; FAILED: ensemble not whole") || !strings.Contains(md.String(), "| 3 | 6 | — |") {
		t.Errorf("report:\n%s", md.String())
	}
	if err := WriteScaleJSONLines(&jl, rep); err != nil || !strings.Contains(jl.String(), `"kind":"scale_error","start"`) {
		t.Errorf("JSON lines %v:\n%s", err, jl.String())
	}
}

func TestScaleTooFewPointsToFit(t *testing.T) {
	f := &fakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: fakeCorralCurve},
		fail: func(s TrialSpec) error {
			if s.Servers > 2 {
				return errors.New("no")
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{launch.TargetCorral}
	rep, _ := Run(context.Background(), cfg)
	if rep.Fits[0].Fit != nil || !strings.Contains(rep.Fits[0].Err, "3 distinct N") {
		t.Errorf("fit %+v", rep.Fits[0])
	}
	var md bytes.Buffer
	WriteScaleMarkdown(&md, rep)
	if !strings.Contains(md.String(), "No fit:") {
		t.Errorf("report:\n%s", md.String())
	}
}

func TestScaleSizesAndBase(t *testing.T) {
	f := &fakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: fakeCorralCurve}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{launch.TargetCorral}
	cfg.Servers = []int{4, 2, 3, 2, 8}
	cfg.MaxServers = 4
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Config.Servers, []int{2, 3, 4}) {
		t.Errorf("sizes %v", rep.Config.Servers)
	}
	// Without N = 1 the speedups are relative to the fitted λ.
	fit := rep.Fits[0]
	if fit.BaseMeasured || math.Abs(fit.Rows[0].Speedup-fakeCorralCurve.Predict(2)/fakeCorralCurve.Lambda) > 1e-6 {
		t.Errorf("fit %+v", fit)
	}
	var md bytes.Buffer
	WriteScaleMarkdown(&md, rep)
	if !strings.Contains(md.String(), "Only three N for three coefficients") || !strings.Contains(md.String(), "speedups are relative to λ") {
		t.Errorf("report:\n%s", md.String())
	}
	cfg.MaxServers = 3
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Error("two sizes accepted")
	}
}

func TestScaleStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: fakeCorralCurve},
		fail: func(s TrialSpec) error {
			if s.Servers == 2 {
				cancel()
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{launch.TargetCorral}
	rep, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || len(rep.Runs) != 2 {
		t.Errorf("error %v after %d runs", err, len(rep.Runs))
	}
}

func TestMeasureLoadAgainstServer(t *testing.T) {
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	spec := TrialSpec{Name: "fake n=1", Target: "fake", Servers: 1, Reps: 2,
		Load: LoadSpec{Workload: load.WorkloadGet, Conns: 2, Inflight: 4, ValueSize: 16, Duration: 100 * time.Millisecond, Keys: 30}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := measureLoad(ctx, spec, []string{s.Addr()}, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if r.Workload != load.WorkloadGet || r.Ops == 0 || !Usable(&r) || r.Conns != 2 {
			t.Errorf("result %+v", r)
		}
	}
	if got := len(s.Attempted); got != 30+1 { // the keys and the root
		t.Errorf("server saw %d distinct creates, want 31", got)
	}
	s.Check()

	// A set or get load without keys is refused before anything is sent.
	spec.Load.Keys = 0
	if _, err := measureLoad(ctx, spec, []string{s.Addr()}, 0, nil, nil); err == nil {
		t.Error("get without keys accepted")
	}
}

func TestDurabilityFor(t *testing.T) {
	for _, tc := range []struct {
		target, level string
		want          []string
	}{
		{launch.TargetCorral, LevelSync, []string{"forceSync=yes", "durability=sync"}},
		{launch.TargetCorral, LevelAsync, []string{"forceSync=yes", "durability=async"}},
		{launch.TargetCorral, LevelDiskless, []string{"forceSync=yes", "durability=diskless"}},
		{launch.TargetZooKeeper, LevelSync, []string{"forceSync=yes"}},
		{launch.TargetZooKeeper, LevelAsync, []string{"forceSync=no"}},
	} {
		d, err := DurabilityFor(tc.target, tc.level)
		if err != nil || !slices.Equal(d.Lines(), tc.want) {
			t.Errorf("%s %s: %v %v, want %v", tc.target, tc.level, d.Lines(), err, tc.want)
		}
	}
	for _, bad := range [][2]string{{launch.TargetZooKeeper, LevelDiskless}, {launch.TargetCorral, "fast"}, {"etcd", LevelSync}} {
		if _, err := DurabilityFor(bad[0], bad[1]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestLogDirName(t *testing.T) {
	if got := logDirName("exp3 servers=1 value=1024 rep2"); got != "exp3-servers1-value1024-rep2" {
		t.Errorf("got %q", got)
	}
	if got := logDirName("../x/y"); got != "..-x-y" {
		t.Errorf("got %q", got)
	}
}

func TestPeakDesc(t *testing.T) {
	for _, tc := range []struct {
		fit  stats.USLFit
		want string
	}{
		{stats.USLFit{USLParams: stats.USLParams{Lambda: 100, Sigma: 0.1, Kappa: 0.01}, PeakN: 9.5, PeakX: 400}, "peak N* = 9.5 (400 ops/s)"},
		{stats.USLFit{USLParams: stats.USLParams{Lambda: 100, Sigma: 1.2}}, "no gain past N = 1"},
		{stats.USLFit{USLParams: stats.USLParams{Lambda: 100, Sigma: 0.5}}, "approaches λ/σ = 200 ops/s"},
		{stats.USLFit{USLParams: stats.USLParams{Lambda: 100}}, "linear scaling"},
	} {
		if got := peakDesc(&tc.fit); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.fit, got, tc.want)
		}
	}
}
