package plot

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"

	"github.com/corral-db/corral/bench/kv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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
		path := filepath.Join(dir, KVPlotFile(res.Workload))
		f, err := os.Create(path)
		if err != nil {
			return files, err
		}
		err = renderKVPlot(f, rep, res.Workload)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// renderKVPlot draws workload w's series: operations per second in each
// 100 ms bucket, one step line per system, on one time axis (the paper's
// Figs. 8, 9 and 12 for W).
func renderKVPlot(w io.Writer, rep *kv.Report, workload string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("workload %s: throughput over time (%v buckets)", workload, kv.SeriesBucket)
	p.X.Label.Text = "time since the measured interval began (s)"
	p.Y.Label.Text = "operations/s"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	bucket := kv.SeriesBucket.Seconds()
	n := 0
	for _, res := range rep.Results {
		if res.Workload != workload || len(res.Series) == 0 {
			continue
		}
		var xy plotter.XYs
		for i, v := range res.Series {
			xy = append(xy, plotter.XY{X: float64(i) * bucket, Y: float64(v) / bucket})
		}
		xy = append(xy, plotter.XY{X: float64(len(res.Series)) * bucket, Y: xy[len(xy)-1].Y})
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.StepStyle = plotutil.Color(n), vg.Points(1.2), plotter.PostStep
		p.Add(l)
		p.Legend.Add(res.System, l)
		n++
	}
	if n == 0 {
		return fmt.Errorf("bench: workload %s: no series to plot", workload)
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = wholeTicks{}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 4*vg.Inch), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(img))
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}
