package plot

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

// uniformHist holds the latencies 1..n µs once each.
func uniformHist(n int64) *stats.Hist {
	h := stats.NewHist()
	for us := int64(1); us <= n; us++ {
		h.RecordMicros(us)
	}
	return h
}

// TestCDFPoints: the curve climbs the nines scale in steps up to 99.99%
// (or the largest value's rank), with the latency at each percentile.
func TestCDFPoints(t *testing.T) {
	if cdfPoints(stats.NewHist()) != nil {
		t.Fatal("points for an empty histogram")
	}
	xys := cdfPoints(uniformHist(1000))
	// 1000 values: percentiles beyond 99.9 (3 nines) are all the maximum.
	if last := xys[len(xys)-1].Y; math.Abs(last-3) > 1e-6 {
		t.Errorf("curve ends at %v nines, want 3", last)
	}
	at := func(y float64) float64 {
		for _, p := range xys {
			if math.Abs(p.Y-y) < 1e-6 {
				return p.X
			}
		}
		t.Fatalf("no point at %v nines", y)
		return 0
	}
	// 0 nines is the least value, 1 (90%) the 900th, 2 (99%) the 990th,
	// 3 (99.9%) the 999th; in ms, within the histogram's 0.1%.
	for _, c := range []struct{ y, wantMs float64 }{{0, 0.001}, {1, 0.9}, {2, 0.99}, {3, 0.999}} {
		if got := at(c.y); math.Abs(got-c.wantMs) > c.wantMs*0.002 {
			t.Errorf("at %v nines: %v ms, want %v", c.y, got, c.wantMs)
		}
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X < xys[i-1].X || xys[i].Y <= xys[i-1].Y {
			t.Fatalf("curve not monotone at %d: %v then %v", i, xys[i-1], xys[i])
		}
	}
	if top := cdfPoints(uniformHist(100000)); math.Abs(top[len(top)-1].Y-cdfMaxNines) > 1e-6 {
		t.Errorf("100000 values: curve ends at %v nines, want %d", top[len(top)-1].Y, cdfMaxNines)
	}
	if y := nines(99); math.Abs(y-2) > 1e-9 {
		t.Errorf("nines(99) = %v", y)
	}
}

func sampleCDFReport() *compare.Report {
	hist := func(scale int64) *stats.Hist {
		h := stats.NewHist()
		for i := int64(1); i <= 5000; i++ {
			h.RecordMicros(scale * (100 + i%97 + i*i%1000))
		}
		return h
	}
	return &compare.Report{Results: []load.PhaseResult{
		{Target: launch.TargetCorral, Run: 1, Phase: "create", Hist: hist(1)},
		{Target: launch.TargetZooKeeper, Run: 1, Phase: "create", Hist: hist(3),
			OpenLoop: &load.OpenLoopResult{Hist: hist(5)}},
		{Target: launch.TargetCorral, Run: 2, Phase: "create", Hist: hist(2)},
		{Target: launch.TargetZooKeeper, Run: 2, Phase: "create", Hist: hist(4)},
		// A phase that measured nothing has no figure.
		{Target: launch.TargetCorral, Run: 1, Phase: "set/get", Hist: stats.NewHist()},
		{Target: launch.TargetCorral, Run: 1, Phase: "seqcreate", Hist: hist(1)},
	}}
}

// TestLatencyPlots: a figure per phase with latencies; a target's runs
// merge into one curve; open-loop latencies add a dashed curve.
func TestLatencyPlots(t *testing.T) {
	lps := latencyPlots(sampleCDFReport())
	if len(lps) != 2 || lps[0].File != "latency-create.png" || lps[1].File != "latency-seqcreate.png" {
		t.Fatalf("plots %+v", lps)
	}
	c := lps[0].Curves
	if len(c) != 3 || c[0].Name != "corral (2 runs)" || c[1].Name != "zookeeper (2 runs)" ||
		c[2].Name != "zookeeper (2 runs), from intended send time" || !c[2].Dashed || c[0].Dashed {
		t.Fatalf("curves %+v", c)
	}
	if c[0].Hist.Count() != 10000 || c[2].Hist.Count() != 5000 {
		t.Errorf("curve counts %d, %d; want 10000 merged, 5000", c[0].Hist.Count(), c[2].Hist.Count())
	}
	if fileSafe("a/b c") != "a_b_c" {
		t.Error("fileSafe")
	}
}

// TestLatencyPlotsWritten: the files are PNG images and the report links
// them.
func TestLatencyPlotsWritten(t *testing.T) {
	dir := t.TempDir()
	rep := sampleCDFReport()
	if err := WriteLatencyPlots(dir, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Plots, ",") != "latency-create.png,latency-seqcreate.png" {
		t.Fatalf("plots %v", rep.Plots)
	}
	for _, p := range rep.Plots {
		f, err := os.Open(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
			t.Errorf("%s is %v", p, b)
		}
	}
	var md bytes.Buffer
	compare.WritePlotLinks(&md, rep.Plots)
	if !strings.Contains(md.String(), "![latency-create](latency-create.png)") {
		t.Errorf("links: %s", md.String())
	}
	var none bytes.Buffer
	compare.WritePlotLinks(&none, nil)
	if none.Len() != 0 {
		t.Error("links without plots")
	}
	if err := (latencyPlot{File: "x.png", Curves: []cdfCurve{{Name: "empty", Hist: stats.NewHist()}}}).render(&none); err == nil {
		t.Error("a figure without latencies rendered")
	}
}

func TestLatencyTicks(t *testing.T) {
	var labels []string
	for _, tk := range (latencyTicks{}).Ticks(0.1, 1000) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0.1 0.2 0.5 1 2 5 10 20 50 100 200 500 1000" {
		t.Errorf("latency ticks %q", got)
	}
	labels = nil
	for _, tk := range (latencyTicks{}).Ticks(0.25, 0.75) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0.3 0.4 0.5 0.6 0.7" {
		t.Errorf("latency ticks within a decade %q", got)
	}
	labels = nil
	for _, tk := range (ninesTicks{}).Ticks(0, 4.6) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0% 50% 90% 99% 99.9% 99.99%" {
		t.Errorf("percentile ticks %q", got)
	}
}
