package plot

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Latency distribution plots: per phase, one PNG with each target's
// latencies as a percentile plot in HdrHistogram's style. x is the
// latency (ms, log scale); y the percentile on a "nines" scale,
// -log10(1 - q), so 90%, 99%, 99.9% and 99.99% are equally spaced and the
// tail, where servers differ most, gets as much room as the body. With
// repeats a target's runs are merged into one curve. In open loop a
// dashed curve per target gives the latencies from the intended send
// times.

// cdfMaxNines is how far up the percentile axis goes: 99.99%.
const cdfMaxNines = 4

// cdfStep is the spacing of the plotted percentiles on the nines scale.
const cdfStep = 0.02

// cdfMinMs is the smallest latency drawn: the log axis has no zero.
const cdfMinMs = 0.001

// cdfCurve is one line of a latency plot.
type cdfCurve struct {
	Name   string
	Hist   *stats.Hist
	Dashed bool
}

// latencyPlot is one phase's figure.
type latencyPlot struct {
	File   string // "latency-create.png"
	Phase  string
	Curves []cdfCurve
}

// nines maps percentile q (0 <= q < 100) to the plot's y.
func nines(q float64) float64 { return -math.Log10(1 - q/100) }

// cdfPoints are the curve of h: at each step of the nines scale up to
// cdfMaxNines, or to the rank of the single largest value if h holds
// fewer values (beyond it every percentile is the maximum), the latency in
// Ms at that percentile. Empty when h is.
func cdfPoints(h *stats.Hist) plotter.XYs {
	n := h.Count()
	if n == 0 {
		return nil
	}
	top := min(cdfMaxNines, math.Log10(float64(n)))
	var xys plotter.XYs
	for y := 0.0; y <= top+1e-9; y += cdfStep {
		q := 100 * (1 - math.Pow(10, -y))
		xys = append(xys, plotter.XY{X: max(load.Ms(h.PercentileMicros(max(q, 1e-9))), cdfMinMs), Y: y})
	}
	return xys
}

// latencyPlots are the figures of rep: one per phase that has latencies,
// in the order the phases ran, with a curve per target (runs merged) and,
// for open-loop phases, one per target from the intended send times.
func latencyPlots(rep *compare.Report) []latencyPlot {
	var phases, targets []string
	for _, r := range rep.Results {
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
	}
	var out []latencyPlot
	for _, p := range phases {
		lp := latencyPlot{File: "latency-" + fileSafe(p) + ".png", Phase: p}
		var dashed []cdfCurve
		for _, t := range targets {
			h, hi := stats.NewHist(), stats.NewHist()
			runs := 0
			for i := range rep.Results {
				r := &rep.Results[i]
				if r.Target != t || r.Phase != p || r.Hist == nil || r.Hist.Count() == 0 {
					continue
				}
				runs++
				h.Merge(r.Hist)
				if r.OpenLoop != nil && r.OpenLoop.Hist != nil {
					hi.Merge(r.OpenLoop.Hist)
				}
			}
			if runs == 0 {
				continue
			}
			name := t
			if runs > 1 {
				name = fmt.Sprintf("%s (%d runs)", t, runs)
			}
			lp.Curves = append(lp.Curves, cdfCurve{Name: name, Hist: h})
			if hi.Count() > 0 {
				dashed = append(dashed, cdfCurve{Name: name + ", from intended send time", Hist: hi, Dashed: true})
			}
		}
		lp.Curves = append(lp.Curves, dashed...)
		if len(lp.Curves) > 0 {
			out = append(out, lp)
		}
	}
	return out
}

// fileSafe keeps a phase name usable as part of a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// render draws the figure as PNG into w.
func (lp latencyPlot) render(w io.Writer) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s latency distribution", lp.Phase)
	p.X.Label.Text = "latency (ms, log scale)"
	p.Y.Label.Text = "percentile"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	lo, hi := math.Inf(1), math.Inf(-1)
	color := map[string]int{}
	for _, c := range lp.Curves {
		xys := cdfPoints(c.Hist)
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("bench: plot %s, %s: %w", lp.File, c.Name, err)
		}
		// A target's dashed curve takes the colour of its solid one.
		base, _, _ := strings.Cut(c.Name, ",")
		i, ok := color[base]
		if !ok {
			i = len(color)
			color[base] = i
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		if c.Dashed {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(c.Name, l)
		for _, xy := range xys {
			lo, hi = min(lo, xy.X), max(hi, xy.X)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("bench: plot %s: no latencies", lp.File)
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = latencyTicks{}
	// A little room either side of the data.
	p.X.Min, p.X.Max = lo/1.25, hi*1.25
	p.Y.Min, p.Y.Max = 0, cdfMaxNines+0.6 // room for the legend
	p.Y.Tick.Marker = ninesTicks{}
	return writePNG(w, p)
}

// latencyTicks label 1, 2 and 5 of each decade in ms, or every digit when
// the axis spans less than about a decade and a half.
type latencyTicks struct{}

func (latencyTicks) Ticks(lo, hi float64) []plot.Tick {
	mantissas := []float64{1, 2, 5}
	if math.Log10(hi/lo) < 1.2 {
		mantissas = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mantissas {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			// Three significant digits, without an exponent: 0.3, 1000.
			r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(r, 'f', -1, 64)})
		}
	}
	return ts
}

// ninesTicks label the percentile axis: 0, 50, 90, 99, 99.9 and 99.99%.
type ninesTicks struct{}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, q := range []float64{0, 50, 90, 99, 99.9, 99.99} {
		if y := nines(q); y >= lo && y <= hi {
			ts = append(ts, plot.Tick{Value: y, Label: fmt.Sprintf("%g%%", q)})
		}
	}
	return ts
}

// WriteLatencyPlots writes rep's latency figures as PNG files into dir
// and records their names in rep.Plots.
func WriteLatencyPlots(dir string, rep *compare.Report) error {
	for _, lp := range latencyPlots(rep) {
		if err := writePlotFile(filepath.Join(dir, lp.File), lp); err != nil {
			return err
		}
		rep.Plots = append(rep.Plots, lp.File)
	}
	return nil
}
