package plot

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/durability"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// namedSeries is one line of a plot: a configuration's per-second values,
// the first for the second that ends 1 s into the measured interval.
type namedSeries struct {
	Name   string
	Values []float64
}

// linePlot is one figure: a line per configuration against time.
type linePlot struct {
	File   string // base name, "create.png"
	Title  string
	YLabel string
	Series []namedSeries
}

// Plot size: wide enough for 60 seconds to read, as the thesis's figures.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// render draws the figure as PNG into w. A figure without any value is an
// error: there is nothing to show.
func (lp linePlot) render(w io.Writer) error {
	p := plot.New()
	p.Title.Text = lp.Title
	p.X.Label.Text = "time since the measured interval began (s)"
	p.Y.Label.Text = lp.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	points := 0
	for i, s := range lp.Series {
		if len(s.Values) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.Values))
		for k, v := range s.Values {
			xys[k] = plotter.XY{X: float64(k + 1), Y: v}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("bench: plot %s, %s: %w", lp.File, s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
		points += len(s.Values)
	}
	if points == 0 {
		return fmt.Errorf("bench: plot %s: no values", lp.File)
	}
	// Throughput and CPU start at zero: a line near the top of an axis cut
	// at its own minimum would exaggerate the differences.
	p.Y.Min = 0
	p.X.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	// Leave room above the lines for the legend.
	p.Y.Max *= 1.25
	return writePNG(w, p)
}

// writePNG renders p at the reports' plot size as PNG.
func writePNG(w io.Writer, p *plot.Plot) error {
	wt, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// durabilityPlots are the figures of a report: throughput against time of
// the create, get and queue phases (the thesis's Fig. 5.1, 5.2 and 5.6)
// and the members' CPU in the fixed-rate phase (Table A.5 behind Fig.
// 5.5). Each series has the whole seconds of its measured interval (a
// partial last second would read as a dip). Figures no phase fed are left
// out.
func durabilityPlots(rep *durability.Report) []linePlot {
	whole := func(p *durability.DurPhase, v []int64) []float64 {
		n := min(len(v), int(p.Seconds))
		return durability.ToFloats(v[:n])
	}
	figs := []struct {
		phase, file, title, ylabel string
		values                     func(p *durability.DurPhase) []float64
	}{
		{durability.DurPhaseCreate, "create.png", "create throughput (Fig. 5.1)", "creates/s",
			func(p *durability.DurPhase) []float64 { return whole(p, p.PerSecond) }},
		{durability.DurPhaseGet, "get.png", "getData throughput (Fig. 5.2)", "getData/s",
			func(p *durability.DurPhase) []float64 { return whole(p, p.PerSecond) }},
		{durability.DurPhaseQueue, "queue.png", "message queue: messages consumed (Fig. 5.6)", "messages/s",
			func(p *durability.DurPhase) []float64 { return whole(p, p.PerSecond) }},
		{durability.DurPhaseCPU, "cpu.png", "server CPU at a fixed create rate (Fig. 5.5)", "CPU % of one core, members summed",
			func(p *durability.DurPhase) []float64 { return p.ServerCPUPerSecond }},
	}
	var out []linePlot
	for _, f := range figs {
		lp := linePlot{File: f.file, Title: f.title, YLabel: f.ylabel}
		fed := false
		for i := range rep.Phases {
			p := &rep.Phases[i]
			if p.Phase != f.phase {
				continue
			}
			v := f.values(p)
			fed = fed || len(v) > 0
			lp.Series = append(lp.Series, namedSeries{Name: p.Config, Values: v})
		}
		if f.phase == durability.DurPhaseCPU && len(lp.Series) > 0 {
			lp.Title = fmt.Sprintf("server CPU at %.0f creates/s (Fig. 5.5)", rep.Config.CPURate)
		}
		if fed {
			out = append(out, lp)
		}
	}
	return out
}

// WriteDurabilityPlots writes the report's figures as PNG files into dir
// and records their names in rep.Plots: the time series', then the
// tree-size figures (durTreePlots).
func WriteDurabilityPlots(dir string, rep *durability.Report) error {
	for _, lp := range durabilityPlots(rep) {
		if err := writePlotFile(filepath.Join(dir, lp.File), lp); err != nil {
			return err
		}
		rep.Plots = append(rep.Plots, lp.File)
	}
	for _, xp := range durTreePlots(rep) {
		if err := writePlotFile(filepath.Join(dir, xp.File), xp); err != nil {
			return err
		}
		rep.Plots = append(rep.Plots, xp.File)
	}
	return nil
}

func writePlotFile(path string, lp interface{ render(io.Writer) error }) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := lp.render(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
