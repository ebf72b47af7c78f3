package plot

import (
	"bytes"
	"context"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/scale"
	"github.com/corral-db/corral/bench/stats"
	"gonum.org/v1/plot/plotutil"
)

func TestScalePlot(t *testing.T) {
	f := &plotFakeTrials{curves: map[string]stats.USLParams{launch.TargetCorral: plotFakeCorralCurve, launch.TargetZooKeeper: plotFakeZKCurve}}
	rep, err := scale.Run(context.Background(), plotFakeScaleConfig(f))
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
	for i, target := range []string{launch.TargetCorral, launch.TargetZooKeeper} {
		r, g, bl, _ := plotutil.Color(i).RGBA()
		if n := colorPixels(img, r>>8, g>>8, bl>>8); n < 200 {
			t.Errorf("%s: %d pixels of its colour", target, n)
		}
	}
	var md bytes.Buffer
	scale.WriteScaleMarkdown(&md, rep)
	if !strings.Contains(md.String(), "](usl.png)") {
		t.Error("report does not show the plot")
	}
	// Nothing measured: no picture.
	empty := &scale.Report{Fits: []scale.ScaleFit{{Target: launch.TargetCorral}}}
	if err := WriteScalePlot(t.TempDir(), empty); err == nil {
		t.Error("plotted a report without measurements")
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

// plotFakeTrials is a trialRunner that starts nothing: each measured phase
// reports the throughput of a known USL curve per target, times 1 ± 1%
// alternating over the repetitions.
type plotFakeTrials struct {
	mu     sync.Mutex
	curves map[string]stats.USLParams
	specs  []scale.TrialSpec
	// fail, if set, makes the trial fail with the error it returns.
	fail func(spec scale.TrialSpec) error
}

func plotFakeScaleConfig(f *plotFakeTrials) scale.Config {
	cfg := scale.DefaultConfig()
	cfg.Reps = 2
	cfg.Run = f.run
	return cfg
}

func (f *plotFakeTrials) run(ctx context.Context, spec scale.TrialSpec) (bench.ServerInfo, []load.PhaseResult, error) {
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
	plotFakeCorralCurve = stats.USLParams{Lambda: 20000, Sigma: 0.08, Kappa: 0.01}
	plotFakeZKCurve     = stats.USLParams{Lambda: 12000, Sigma: 0.2, Kappa: 0.02}
)
