package plot

import (
	"image/color"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// seriesPlot is one figure of step lines over a time axis, as the kv
// experiments draw their throughput series: the axes, a grid, a legend
// at the top and the next line's colour.
type seriesPlot struct {
	p *plot.Plot
	n int
}

func newSeriesPlot(title, x, y string) *seriesPlot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return &seriesPlot{p: p}
}

// step adds a line through the counts, one per bucket of width seconds
// from x0, held to the end of the last bucket; y scales each count.
func (s *seriesPlot) step(label string, counts []int64, x0, width, y float64) (color.Color, error) {
	var xy plotter.XYs
	for i, v := range counts {
		xy = append(xy, plotter.XY{X: x0 + float64(i)*width, Y: float64(v) * y})
	}
	xy = append(xy, plotter.XY{X: x0 + float64(len(counts))*width, Y: xy[len(xy)-1].Y})
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	c := plotutil.Color(s.n)
	l.Color, l.Width, l.StepStyle = c, vg.Points(1.2), plotter.PostStep
	s.p.Add(l)
	s.p.Legend.Add(label, l)
	s.n++
	return c, nil
}

// marks adds triangles at (x, 0) in colour c (the moments of a line's
// events, such as leader handovers).
func (s *seriesPlot) marks(xs []float64, c color.Color) error {
	sc, err := axisMarks(xs, c, vg.Points(4))
	if sc != nil {
		s.p.Add(sc)
	}
	return err
}

// axisMarks is a scatter of triangles of radius r at (x, 0) in colour c,
// or nil if xs is empty.
func axisMarks(xs []float64, c color.Color, r vg.Length) (*plotter.Scatter, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	xy := make(plotter.XYs, len(xs))
	for i, x := range xs {
		xy[i] = plotter.XY{X: x}
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: r, Shape: draw.TriangleGlyph{}}
	return sc, nil
}

// png writes the figure, 10 × 4 inches, the y axis from 0 with whole
// ticks.
func (s *seriesPlot) png(w io.Writer) error {
	s.p.Y.Min = 0
	s.p.Y.Tick.Marker = wholeTicks{}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 4*vg.Inch), vgimg.UseBackgroundColor(color.White))
	s.p.Draw(draw.New(img))
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// writePNGFile creates dir/name and renders into it.
func writePNGFile(dir, name string, render func(io.Writer) error) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}
