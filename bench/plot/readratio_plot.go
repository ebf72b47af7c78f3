package plot

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/readratio"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ReadRatioPlotFile is the name of the throughput plot.
const ReadRatioPlotFile = "readratio.png"

// renderReadRatioPlot draws throughput against the read percentage, a
// line per target and ensemble size: the same colour for one size, a solid
// line with circles for corral and a dashed one with triangles for the
// other target. The y axis is logarithmic: local reads make the 100% end
// an order of magnitude above the 0% end, which a linear axis would
// flatten into the floor.
func renderReadRatioPlot(w io.Writer, rep *readratio.Report) error {
	p := plot.New()
	p.Title.Text = "saturated throughput vs read ratio (ZooKeeper paper Fig. 5)"
	if rep.LeaderOnly {
		p.Title.Text = "saturated throughput vs read ratio, clients on the leader only (Fig. 6)"
	}
	p.X.Label.Text = "reads (% of requests)"
	p.Y.Label.Text = "operations/s (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	lo, hi := math.Inf(1), math.Inf(-1)
	for si, n := range rep.Sizes() {
		for ti, t := range rep.Targets() {
			var xys plotter.XYs
			for _, pct := range rep.Ratios {
				if c := rep.Cell(t, n, pct); c != nil && c.Seconds > 0 && c.OpsPerSec > 0 {
					xys = append(xys, plotter.XY{X: float64(pct), Y: c.OpsPerSec})
					lo, hi = min(lo, c.OpsPerSec), max(hi, c.OpsPerSec)
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color, s.Color = plotutil.Color(si), plotutil.Color(si)
			l.Width = vg.Points(1.5)
			if ti > 0 {
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			}
			s.Shape = plotutil.Shape(ti)
			s.Radius = vg.Points(3)
			p.Add(l, s)
			p.Legend.Add(readratio.SystemLabel(t, n), l, s)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("bench: %s: no throughput to plot", ReadRatioPlotFile)
	}
	p.X.Min, p.X.Max = 0, 100
	// Whole decades, and room above the lines for the legend.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*3)))
	p.Legend.ThumbnailWidth = vg.Points(30)
	// Below the title, inside the axes.
	p.Legend.YOffs = -vg.Points(12)
	return writePNG(w, p)
}

// WriteReadRatioPlot writes the plot into dir and records it in rep.Plots.
func WriteReadRatioPlot(dir string, rep *readratio.Report) error {
	f, err := os.Create(filepath.Join(dir, ReadRatioPlotFile))
	if err != nil {
		return err
	}
	if err := renderReadRatioPlot(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rep.Plots = append(rep.Plots, ReadRatioPlotFile)
	return nil
}
