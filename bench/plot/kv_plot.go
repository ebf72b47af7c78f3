package plot

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/corral-db/corral/bench/kv"
)

// KVPlotFile is the name of workload w's throughput-over-time figure.
func KVPlotFile(w string) string { return "kv-throughput-" + w + ".png" }

// WriteKVPlots writes one throughput-over-time PNG per workload of rep
// into dir and returns the files written.
func WriteKVPlots(dir string, rep *kv.Report) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	for _, res := range rep.Results {
		if seen[res.Workload] {
			continue
		}
		seen[res.Workload] = true
		path, err := writePNGFile(dir, KVPlotFile(res.Workload), func(w io.Writer) error { return renderKVPlot(w, rep, res.Workload) })
		if err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// kvSmooth is the window of the moving average drawn over each panel's
// raw buckets: the 100 ms buckets swing too much to compare systems by
// eye, while a handover's zero-throughput window only shows in them.
const kvSmooth = 10

// renderKVPlot draws workload w's series as small multiples, one panel
// per system on one time axis and one operations/s scale (the paper's
// Figs. 8, 9 and 12 for W): the operations of each 100 ms bucket as a
// thin light step line, their 1 s moving average as a dark line, and a
// triangle on the axis at each leader handover. Overlaid on one axis,
// eight swinging lines were unreadable.
func renderKVPlot(w io.Writer, rep *kv.Report, workload string) error {
	bucket := kv.SeriesBucket.Seconds()
	var panels []*plot.Plot
	top := 0.0
	for _, res := range rep.Results {
		if res.Workload != workload || len(res.Series) == 0 {
			continue
		}
		p := plot.New()
		c := plotutil.Color(len(panels))
		raw, avg := kvSeriesXY(res.Series, bucket)
		rl, err := plotter.NewLine(raw)
		if err != nil {
			return err
		}
		rl.Color, rl.Width, rl.StepStyle = lighten(c), vg.Points(0.5), plotter.PostStep
		al, err := plotter.NewLine(avg)
		if err != nil {
			return err
		}
		al.Color, al.Width = c, vg.Points(1.5)
		p.Add(plotter.NewGrid(), rl, al)
		var at []float64
		for _, h := range res.Handovers {
			at = append(at, h.AtMs/1000)
		}
		sc, err := axisMarks(at, color.Black, vg.Points(3))
		if err != nil {
			return err
		}
		if sc != nil {
			p.Add(sc)
		}
		p.Title.Text = fmt.Sprintf("%s: mean %.0f ops/s, %d handovers", res.System, seriesMean(res.Series)/bucket, len(res.Handovers))
		p.Title.TextStyle.Font.Size = vg.Points(10)
		p.Y.Label.Text = "ops/s"
		p.Y.Tick.Marker = wholeTicks{}
		p.X.Min = 0
		top = max(top, p.Y.Max)
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return fmt.Errorf("bench: workload %s: no series to plot", workload)
	}
	for i, p := range panels {
		p.Y.Min, p.Y.Max = 0, top
		if i == len(panels)-1 {
			p.X.Label.Text = fmt.Sprintf("time since the measured interval began (s); workload %s, %v buckets (light), 1 s mean (dark), ▲ leader handover", workload, kv.SeriesBucket)
		}
	}
	const panelH = 1.7
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, vg.Length(float64(len(panels))*panelH+0.4)*vg.Inch), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// kvSeriesXY turns per-bucket counts into operations/s: the raw step
// points (held to the end of the last bucket) and the trailing moving
// average over kvSmooth buckets, at each bucket's end.
func kvSeriesXY(counts []int64, bucket float64) (raw, avg plotter.XYs) {
	sum := 0.0
	for i, v := range counts {
		raw = append(raw, plotter.XY{X: float64(i) * bucket, Y: float64(v) / bucket})
		sum += float64(v)
		n := i + 1
		if n > kvSmooth {
			sum -= float64(counts[i-kvSmooth])
			n = kvSmooth
		}
		avg = append(avg, plotter.XY{X: float64(i+1) * bucket, Y: sum / float64(n) / bucket})
	}
	raw = append(raw, plotter.XY{X: float64(len(counts)) * bucket, Y: raw[len(raw)-1].Y})
	return raw, avg
}

// seriesMean is the mean count per bucket.
func seriesMean(counts []int64) float64 {
	var s int64
	for _, v := range counts {
		s += v
	}
	return float64(s) / float64(len(counts))
}

// lighten mixes c two parts in three with white.
func lighten(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8 + 2*255) / 3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}
