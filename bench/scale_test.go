package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/plot/plotutil"
)

// fakeTrials is a trialRunner that starts nothing: each measured phase
// reports the throughput of a known USL curve per target, times 1 ± 1%
// alternating over the repetitions.
type fakeTrials struct {
	mu     sync.Mutex
	curves map[string]USLParams
	specs  []trialSpec
	// fail, if set, makes the trial fail with the error it returns.
	fail func(spec trialSpec) error
}

func (f *fakeTrials) run(ctx context.Context, spec trialSpec) (ServerInfo, []PhaseResult, error) {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	info := ServerInfo{Target: spec.Target, Version: "fake"}
	if f.fail != nil {
		if err := f.fail(spec); err != nil {
			info.Err = err.Error()
			return info, nil, err
		}
	}
	var out []PhaseResult
	for rep := range spec.Reps {
		x := f.curves[spec.Target].Predict(float64(spec.Servers))
		if spec.Reps > 1 {
			x *= 1 + 0.01*float64(1-2*(rep%2))
		}
		cpu := 4.0
		out = append(out, PhaseResult{
			Target: spec.Target, Phase: string(spec.Load.Workload), Workload: spec.Load.Workload,
			Conns: spec.Load.Conns, Inflight: spec.Load.Inflight, ValueSize: spec.Load.ValueSize,
			Seconds: 5, Ops: int64(x * 5), OpsPerSec: x, ServerCPU: &cpu, LoadgenCPU: 1,
			Latency: Latency{Count: int64(x * 5), P50: 900, P99: 2500, P999: 4000, Max: 9000},
		})
	}
	return info, out, nil
}

var (
	fakeCorralCurve = USLParams{Lambda: 20000, Sigma: 0.08, Kappa: 0.01}
	fakeZKCurve     = USLParams{Lambda: 12000, Sigma: 0.2, Kappa: 0.02}
)

func fakeScaleConfig(f *fakeTrials) ScaleConfig {
	cfg := DefaultScaleConfig()
	cfg.Reps = 2
	cfg.run = f.run
	return cfg
}

func TestScaleFitsEachTarget(t *testing.T) {
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve, TargetZooKeeper: fakeZKCurve}}
	rep, err := Scale(context.Background(), fakeScaleConfig(f))
	if err != nil {
		t.Fatal(err)
	}
	// Every target at every N, in order, with k·N connections.
	var got []string
	for _, s := range f.specs {
		got = append(got, s.Name)
		if s.Load.Conns != 2*s.Servers || s.Load.Workload != WorkloadGet || s.Load.Inflight != DefaultInflight ||
			s.Durability != levelSync || s.Reps != 2 || s.Load.ValueSize != DefaultValueSize || s.Load.Keys != DefaultScaleKeys {
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
	for i, truth := range []USLParams{fakeCorralCurve, fakeZKCurve} {
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
		if obj["kind"] == "scale_fit" && obj["target"] == TargetCorral {
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

// colorPixels counts the pixels of img that are exactly c's colour.
func colorPixels(img image.Image, r0, g0, b0 uint32) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == r0 && g>>8 == g0 && bl>>8 == b0 {
				n++
			}
		}
	}
	return n
}

func TestScalePlot(t *testing.T) {
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve, TargetZooKeeper: fakeZKCurve}}
	rep, err := Scale(context.Background(), fakeScaleConfig(f))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteScalePlot(dir, rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Plots, []string{ScalePlotFile}) {
		t.Errorf("plots %v", rep.Plots)
	}
	b, err := os.ReadFile(filepath.Join(dir, ScalePlotFile))
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b)
	// Each target's points and curve are drawn in its own colour.
	for i, target := range []string{TargetCorral, TargetZooKeeper} {
		r, g, bl, _ := plotutil.Color(i).RGBA()
		if n := colorPixels(img, r>>8, g>>8, bl>>8); n < 200 {
			t.Errorf("%s: %d pixels of its colour", target, n)
		}
	}
	var md bytes.Buffer
	WriteScaleMarkdown(&md, rep)
	if !strings.Contains(md.String(), "](usl.png)") {
		t.Error("report does not show the plot")
	}
	// Nothing measured: no picture.
	empty := &ScaleReport{Fits: []ScaleFit{{Target: TargetCorral}}}
	if err := WriteScalePlot(t.TempDir(), empty); err == nil {
		t.Error("plotted a report without measurements")
	}
}

func TestScaleGoesOnAfterAFailedTrial(t *testing.T) {
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve},
		fail: func(s trialSpec) error {
			if s.Servers == 3 {
				return errors.New("ensemble not whole")
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{TargetCorral}
	rep, err := Scale(context.Background(), cfg)
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
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve},
		fail: func(s trialSpec) error {
			if s.Servers > 2 {
				return errors.New("no")
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{TargetCorral}
	rep, _ := Scale(context.Background(), cfg)
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
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{TargetCorral}
	cfg.Servers = []int{4, 2, 3, 2, 8}
	cfg.MaxServers = 4
	rep, err := Scale(context.Background(), cfg)
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
	if _, err := Scale(context.Background(), cfg); err == nil {
		t.Error("two sizes accepted")
	}
}

func TestScaleStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeTrials{curves: map[string]USLParams{TargetCorral: fakeCorralCurve},
		fail: func(s trialSpec) error {
			if s.Servers == 2 {
				cancel()
			}
			return nil
		}}
	cfg := fakeScaleConfig(f)
	cfg.Targets = []string{TargetCorral}
	rep, err := Scale(ctx, cfg)
	if !errors.Is(err, context.Canceled) || len(rep.Runs) != 2 {
		t.Errorf("error %v after %d runs", err, len(rep.Runs))
	}
}

func TestMeasureLoadAgainstServer(t *testing.T) {
	s := newFakeServer(t, inOrder, 0)
	spec := trialSpec{Name: "fake n=1", Target: "fake", Servers: 1, Reps: 2,
		Load: loadSpec{Workload: WorkloadGet, Conns: 2, Inflight: 4, ValueSize: 16, Duration: 100 * time.Millisecond, Keys: 30}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := measureLoad(ctx, spec, []string{s.addr()}, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if r.Workload != WorkloadGet || r.Ops == 0 || !usable(&r) || r.Conns != 2 {
			t.Errorf("result %+v", r)
		}
	}
	if got := len(s.attempted); got != 30+1 { // the keys and the root
		t.Errorf("server saw %d distinct creates, want 31", got)
	}
	s.check()

	// A set or get load without keys is refused before anything is sent.
	spec.Load.Keys = 0
	if _, err := measureLoad(ctx, spec, []string{s.addr()}, 0, nil, nil); err == nil {
		t.Error("get without keys accepted")
	}
}

func TestDurabilityFor(t *testing.T) {
	for _, tc := range []struct {
		target, level string
		want          []string
	}{
		{TargetCorral, levelSync, []string{"forceSync=yes", "durability=sync"}},
		{TargetCorral, levelAsync, []string{"forceSync=yes", "durability=async"}},
		{TargetCorral, levelDiskless, []string{"forceSync=yes", "durability=diskless"}},
		{TargetZooKeeper, levelSync, []string{"forceSync=yes"}},
		{TargetZooKeeper, levelAsync, []string{"forceSync=no"}},
	} {
		d, err := durabilityFor(tc.target, tc.level)
		if err != nil || !slices.Equal(d.Lines(), tc.want) {
			t.Errorf("%s %s: %v %v, want %v", tc.target, tc.level, d.Lines(), err, tc.want)
		}
	}
	for _, bad := range [][2]string{{TargetZooKeeper, levelDiskless}, {TargetCorral, "fast"}, {"etcd", levelSync}} {
		if _, err := durabilityFor(bad[0], bad[1]); err == nil {
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

func TestScaleAndFactorialCLIRejectBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"scale", "--launch", "etcd"},
		{"scale", "--max-servers", "2"},
		{"scale", "--max-servers", "10"},
		{"scale", "--servers", "1,x,3"},
		{"scale", "--servers", "1,2"},
		{"scale", "--workload", "seqcreate"},
		{"scale", "--durability", "diskless"}, // ZooKeeper has none
		{"scale", "--durability", "fast", "--launch", "corral"},
		{"scale", "--reps", "0"},
		{"scale", "--clients-per-server", "0"},
		{"scale", "--duration", "0s"},
		{"scale", "--keys", "0"},
		{"scale", "extra"},
		{"factorial", "--factors", "bogus"},
		{"factorial", "--factors", "servers,servers"},
		{"factorial", "--factors", ""},
		{"factorial", "--servers", "1"},
		{"factorial", "--servers", "3,3"},
		{"factorial", "--servers", "1,3,5"},
		{"factorial", "--servers", "1,99"},
		{"factorial", "--factors", "target,durability", "--target", "corral,zookeeper", "--durability", "sync,diskless"},
		{"factorial", "--response", "p999"},
		{"factorial", "--reps", "0"},
		{"factorial", "--workload", "seqcreate"},
		{"factorial", "--inflight", "0"},
		{"factorial", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	code, out, _ := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "corral bench scale") || !strings.Contains(out, "corral bench factorial") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

func TestPeakDesc(t *testing.T) {
	for _, tc := range []struct {
		fit  USLFit
		want string
	}{
		{USLFit{USLParams: USLParams{Lambda: 100, Sigma: 0.1, Kappa: 0.01}, PeakN: 9.5, PeakX: 400}, "peak N* = 9.5 (400 ops/s)"},
		{USLFit{USLParams: USLParams{Lambda: 100, Sigma: 1.2}}, "no gain past N = 1"},
		{USLFit{USLParams: USLParams{Lambda: 100, Sigma: 0.5}}, "approaches λ/σ = 200 ops/s"},
		{USLFit{USLParams: USLParams{Lambda: 100}}, "linear scaling"},
	} {
		if got := peakDesc(&tc.fit); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.fit, got, tc.want)
		}
	}
}
