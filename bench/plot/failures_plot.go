package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/corral-db/corral/bench/failures"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Size of one target's panel of the timeline plot.
const (
	failuresPlotWidth   = 10 * vg.Inch
	failuresPanelHeight = 3.2 * vg.Inch
)

// renderFailuresPlot draws one panel per target, one above the other on a
// shared time axis: successful replies per second (and the writes among
// them, dashed) in each bucket, and a vertical line at each event labelled
// with its step, action and server. Each panel has its own throughput
// scale: the figure is about the shape of each target's dips and
// recoveries (the tables compare the levels), and a target several times
// faster would flatten the other's into the floor.
func renderFailuresPlot(w io.Writer, rep *failures.Report) error {
	var runs []failures.FailuresRun
	for _, r := range rep.Runs {
		if len(r.Buckets) > 0 {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("bench: %s: no timeline to plot", failures.FailuresPlotFile)
	}
	end := rep.Env.Duration.Seconds()
	plots := make([][]*plot.Plot, len(runs))
	for i, r := range runs {
		top := 0.0
		for _, b := range r.Buckets {
			top = max(top, b.OpsPerSec)
		}
		if top <= 0 {
			top = 1
		}
		// Room above the lines for the legend and the event labels.
		top *= 1.35
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %d servers: throughput upon failures (%d%% reads, %v buckets; ZooKeeper paper Fig. 8)",
			r.Target, r.Servers, rep.ReadPct, rep.Bucket)
		p.X.Label.Text = "time since the measured interval began (s)"
		p.Y.Label.Text = "operations/s"
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
		// Below the title, inside the axes.
		p.Legend.YOffs = -vg.Points(12)
		// A step per bucket, held over the bucket's length: the rate is an
		// average over it, not a sample at a point.
		var all, writes plotter.XYs
		for _, b := range r.Buckets {
			all = append(all, plotter.XY{X: b.T, Y: b.OpsPerSec})
			writes = append(writes, plotter.XY{X: b.T, Y: float64(b.Writes) / b.Seconds})
		}
		last := r.Buckets[len(r.Buckets)-1]
		all = append(all, plotter.XY{X: last.T + last.Seconds, Y: all[len(all)-1].Y})
		writes = append(writes, plotter.XY{X: last.T + last.Seconds, Y: writes[len(writes)-1].Y})
		la, err := plotter.NewLine(all)
		if err != nil {
			return err
		}
		la.Color, la.Width, la.StepStyle = plotutil.Color(0), vg.Points(1.2), plotter.PostStep
		lw, err := plotter.NewLine(writes)
		if err != nil {
			return err
		}
		lw.Color, lw.Width, lw.StepStyle = plotutil.Color(1), vg.Points(1), plotter.PostStep
		lw.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(la, lw)
		p.Legend.Add("all replies", la)
		p.Legend.Add("writes", lw)
		if err := addEventMarkers(p, r.Events, top); err != nil {
			return err
		}
		p.X.Min, p.X.Max = 0, end
		p.Y.Min, p.Y.Max = 0, top
		p.Y.Tick.Marker = wholeTicks{}
		plots[i] = []*plot.Plot{p}
	}
	img := vgimg.NewWith(vgimg.UseWH(failuresPlotWidth, failuresPanelHeight*vg.Length(len(runs))),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(runs), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(10)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// wholeTicks are plot's default ticks labelled as whole numbers
// ("25000", not "25000.00").
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}

// addEventMarkers draws a grey vertical line at each event, with its label
// written upwards beside the line's top.
func addEventMarkers(p *plot.Plot, events []failures.FailureEvent, top float64) error {
	if len(events) == 0 {
		return nil
	}
	var labels plotter.XYLabels
	for i, ev := range events {
		l, err := plotter.NewLine(plotter.XYs{{X: ev.At, Y: 0}, {X: ev.At, Y: top}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 110}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		// One label per step: a restart of several members is one event
		// on the axis ("7 restart s1 s3").
		if i > 0 && events[i-1].Step == ev.Step {
			labels.Labels[len(labels.Labels)-1] += fmt.Sprintf(" s%d", ev.Server)
			continue
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: ev.At, Y: top})
		labels.Labels = append(labels.Labels, failures.EventLabel(ev))
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lab.TextStyle {
		s := &lab.TextStyle[i]
		s.Rotation = math.Pi / 2
		// Rotated a quarter turn, the label's end sits at the top of the
		// line and the text runs down its left side.
		s.XAlign, s.YAlign = text.XRight, text.YBottom
		s.Font.Size = vg.Points(8)
		s.Color = color.Gray{Y: 60}
	}
	p.Add(lab)
	return nil
}

// WriteFailuresPlot writes the plot into dir and records it in rep.Plots.
func WriteFailuresPlot(dir string, rep *failures.Report) error {
	f, err := os.Create(filepath.Join(dir, failures.FailuresPlotFile))
	if err != nil {
		return err
	}
	if err := renderFailuresPlot(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rep.Plots = append(rep.Plots, failures.FailuresPlotFile)
	return nil
}
