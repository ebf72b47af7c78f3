package plot

import (
	"errors"
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

// KVOutagePlotFile is the name of the kv-outage figure.
const KVOutagePlotFile = "kv-outage.png"

// WriteKVOutagePlot writes the kv-outage figure into dir.
func WriteKVOutagePlot(dir string, rep *kv.OutageReport) (string, error) {
	path := filepath.Join(dir, KVOutagePlotFile)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = renderKVOutagePlot(f, rep)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}

// renderKVOutagePlot draws each kill's successful operations per 100 ms
// on one axis of time from the kill (the paper's Figs. 16-17).
func renderKVOutagePlot(w io.Writer, rep *kv.OutageReport) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("SIGKILL of RG 1's leader: successful reads per %v", kv.SeriesBucket)
	p.X.Label.Text = "time since the kill (s)"
	p.Y.Label.Text = "operations per 100 ms"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	bucket := kv.SeriesBucket.Seconds()
	n := 0
	for _, tr := range rep.Trials {
		if len(tr.Series) == 0 {
			continue
		}
		k := tr.KillAt.Seconds()
		var xy plotter.XYs
		for i, v := range tr.Series {
			xy = append(xy, plotter.XY{X: float64(i)*bucket - k, Y: float64(v)})
		}
		xy = append(xy, plotter.XY{X: float64(len(tr.Series))*bucket - k, Y: xy[len(xy)-1].Y})
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.StepStyle = plotutil.Color(n), vg.Points(1.2), plotter.PostStep
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("kill %d", tr.Kill), l)
		n++
	}
	if n == 0 {
		return errors.New("bench: kv-outage: no series to plot")
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = wholeTicks{}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 4*vg.Inch), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(img))
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}
