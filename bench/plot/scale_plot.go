package plot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/scale"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ScalePlotFile is the base name of the scale report's figure.
const ScalePlotFile = "usl.png"

// renderScalePlot draws throughput against N: every measurement as a
// point and each target's fitted USL curve, in one colour per target, as
// PNG into w. A report without any usable measurement is an error.
func renderScalePlot(w io.Writer, rep *scale.Report) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("throughput against N servers with %d·N clients (%s), USL fits", rep.Config.ClientsPerServer, rep.Config.Workload)
	p.X.Label.Text = "N (servers; clients scale with them)"
	p.Y.Label.Text = "throughput (ops/s)"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	maxN, maxX, points := 0.0, 0.0, 0
	for _, run := range rep.Runs {
		maxN = max(maxN, float64(run.N))
	}
	for i, f := range rep.Fits {
		var xys plotter.XYs
		for _, run := range rep.Runs {
			if run.Target != f.Target {
				continue
			}
			for k := range run.Results {
				if r := &run.Results[k]; scale.Usable(r) {
					xys = append(xys, plotter.XY{X: float64(run.N), Y: r.OpsPerSec})
					maxX = max(maxX, r.OpsPerSec)
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		points += len(xys)
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("bench: plot %s: %w", f.Target, err)
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(f.Target+" measured", sc)
		if f.Fit == nil {
			continue
		}
		fit := *f.Fit
		curve := plotter.NewFunction(func(n float64) float64 { return fit.Predict(n) })
		curve.Color = plotutil.Color(i)
		curve.Dashes = plotutil.Dashes(i)
		curve.Width = vg.Points(1.5)
		curve.Samples = 200
		// The model's domain starts at one unit: below it the denominator
		// can reach zero (σ > 1).
		curve.XMin, curve.XMax = 1, maxN+1
		p.Add(curve)
		p.Legend.Add(fmt.Sprintf("%s USL: λ=%.0f σ=%.3f κ=%.4f R²=%.3f", f.Target, fit.Lambda, fit.Sigma, fit.Kappa, fit.R2), curve)
		maxX = max(maxX, fit.Predict(maxN+1))
		if fit.PeakN > 0 && fit.PeakN < maxN+1 {
			maxX = max(maxX, fit.PeakX)
		}
	}
	if points == 0 {
		return errors.New("bench: scale plot: no measurement")
	}
	// The axes run from 0 to a little past the largest N measured, and
	// throughput from zero so that the curvature is not exaggerated.
	p.X.Min, p.X.Max = 0, maxN+1
	p.Y.Min, p.Y.Max = 0, max(maxX, 1)*1.3 // room for the legend
	p.X.Tick.Marker = integerTicks{}
	return writePNG(w, p)
}

// integerTicks marks every whole N (N counts servers).
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for n := int(min); float64(n) <= max; n++ {
		if float64(n) >= min {
			ts = append(ts, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
		}
	}
	return ts
}

// WriteScalePlot writes the report's figure as dir/usl.png and records
// its name in rep.Plots.
func WriteScalePlot(dir string, rep *scale.Report) error {
	path := filepath.Join(dir, ScalePlotFile)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := renderScalePlot(f, rep); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rep.Plots = append(rep.Plots, ScalePlotFile)
	return nil
}
