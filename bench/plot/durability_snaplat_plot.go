package plot

import (
	"fmt"
	"io"
	"strconv"

	"github.com/corral-db/corral/bench/durability"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// xySeries is one line of a figure against the tree's size. Style picks
// its colour, dashes and marker: the configuration's place in the run, so
// a configuration looks the same in every figure.
type xySeries struct {
	Name  string
	Style int
	X, Y  []float64
}

// xyPlot is a figure with a line and points per configuration against the
// number of znodes.
type xyPlot struct {
	File, Title, XLabel, YLabel string
	Series                      []xySeries
}

// render draws the figure as PNG into w; a figure without any point is an
// error.
func (xp xyPlot) render(w io.Writer) error {
	p := plot.New()
	p.Title.Text = xp.Title
	p.X.Label.Text = xp.XLabel
	p.Y.Label.Text = xp.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	points := 0
	for _, s := range xp.Series {
		if len(s.X) == 0 || len(s.X) != len(s.Y) {
			continue
		}
		i := s.Style
		xys := make(plotter.XYs, len(s.X))
		for k := range s.X {
			xys[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("bench: plot %s, %s: %w", xp.File, s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(3)
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
		points += len(s.X)
	}
	if points == 0 {
		return fmt.Errorf("bench: plot %s: no values", xp.File)
	}
	// Both axes from zero, so a line's slope reads as growth with size.
	p.X.Min, p.Y.Min = 0, 0
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	p.Y.Max *= 1.3 // room for the legend
	p.X.Max *= 1.05
	return writePNG(w, p)
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("250", not "250.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}

// durTreePlots are Fig. 5.3 (snapshot latency) and Fig. 5.4 (restoration
// time) against the size, one line per configuration; failed points are
// left out, and a figure without any point is not drawn.
func durTreePlots(rep *durability.Report) []xyPlot {
	snap := xyPlot{File: "snapshot.png", Title: "snapshot latency against the tree's size (Fig. 5.3)",
		XLabel: "znodes (thousands)", YLabel: "snapshot duration (ms), mean over the members"}
	rest := xyPlot{File: "restore.png", Title: "restoration after the leader is killed (Fig. 5.4)",
		XLabel: "znodes (thousands)", YLabel: "kill to first write accepted (ms)"}
	var out []xyPlot
	for i, t := range rep.Trees {
		s := xySeries{Name: t.Target.Name, Style: i}
		for _, p := range t.Snapshots {
			if p.Ms > 0 {
				s.X, s.Y = append(s.X, float64(p.Znodes)/1000), append(s.Y, p.Ms)
			}
		}
		if len(s.X) > 0 {
			snap.Series = append(snap.Series, s)
		}
		r := xySeries{Name: t.Target.Name, Style: i}
		for _, p := range t.Restores {
			if p.Err == "" && p.RestoreMs > 0 {
				r.X, r.Y = append(r.X, float64(p.Znodes)/1000), append(r.Y, p.RestoreMs)
			}
		}
		if len(r.X) > 0 {
			rest.Series = append(rest.Series, r)
		}
	}
	for _, p := range []xyPlot{snap, rest} {
		if len(p.Series) > 0 {
			out = append(out, p)
		}
	}
	return out
}
