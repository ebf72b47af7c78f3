package plot

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/corral-db/corral/bench/rlog"
)

// rlogPlots are the replicated logs' figures: throughput (MB/s, with the
// ceiling, and appends/s) against the append size (Fig. 5.1), p50 and
// p99 latency against appends in flight per configuration (Figs.
// 5.2/5.3), and MB/s against the ensemble size, decoupled and coupled,
// with ZooKeeper beside (Fig. 5.4). A figure no point fed is left out.
func rlogPlots(rep *rlog.Report) []xyPlot {
	var out []xyPlot
	pts := func(fig string) []rlog.Point {
		var v []rlog.Point
		for _, p := range rep.Points {
			if p.Figure == fig && p.Ops > 0 {
				v = append(v, p)
			}
		}
		return v
	}
	if sw := pts("5.1"); len(sw) > 0 {
		mb := xySeries{Name: "corral MB/s"}
		ceil := xySeries{Name: "ceiling (disk ÷ members)", Style: 1}
		ops := xySeries{Name: "corral appends/s"}
		for _, p := range sw {
			x := math.Log2(float64(p.Size) / 1024)
			mb.X, mb.Y = append(mb.X, x), append(mb.Y, p.MBps)
			ops.X, ops.Y = append(ops.X, x), append(ops.Y, p.OpsPerS)
			if p.CeilingMBps > 0 {
				ceil.X, ceil.Y = append(ceil.X, x), append(ceil.Y, p.CeilingMBps)
			}
		}
		out = append(out,
			xyPlot{File: "rlog-throughput.png", Title: "Fig. 5.1: throughput vs append size", XLabel: "log2(append size / KiB)", YLabel: "MB/s", Series: []xySeries{mb, ceil}},
			xyPlot{File: "rlog-appends.png", Title: "Fig. 5.1: appends/s vs append size", XLabel: "log2(append size / KiB)", YLabel: "appends/s", Series: []xySeries{ops}})
	}
	if lat := pts("5.2"); len(lat) > 0 {
		var setups []string
		for _, p := range lat {
			if !slices.Contains(setups, p.Setup) {
				setups = append(setups, p.Setup)
			}
		}
		var ss []xySeries
		for i, s := range setups {
			p50 := xySeries{Name: s + " p50", Style: 2 * i}
			p99 := xySeries{Name: s + " p99", Style: 2*i + 1}
			for _, p := range lat {
				if p.Setup == s {
					x := float64(p.Outstanding)
					p50.X, p50.Y = append(p50.X, x), append(p50.Y, float64(p.P50us)/1000)
					p99.X, p99.Y = append(p99.X, x), append(p99.Y, float64(p.P99us)/1000)
				}
			}
			ss = append(ss, p50, p99)
		}
		out = append(out, xyPlot{File: "rlog-latency.png", Title: fmt.Sprintf("Figs. 5.2/5.3: latency vs appends in flight (%d B appends)", rep.Config.Size), XLabel: "appends in flight", YLabel: "latency (ms)", Series: ss})
	}
	if q := pts("5.4"); len(q) > 0 {
		dec := xySeries{Name: "corral, decoupled"}
		cp := xySeries{Name: "corral, coupled", Style: 1}
		zk := xySeries{Name: "ZooKeeper, sequential znodes", Style: 2}
		slices.SortFunc(q, func(a, b rlog.Point) int { return a.Members - b.Members })
		for _, p := range q {
			s := &dec
			if p.GroupCommit == rlog.Coupled {
				s = &cp
			}
			s.X, s.Y = append(s.X, float64(p.Members)), append(s.Y, p.MBps)
		}
		for _, p := range pts("zookeeper") {
			zk.X, zk.Y = append(zk.X, float64(p.Members)), append(zk.Y, p.MBps)
		}
		out = append(out, xyPlot{File: "rlog-quorum.png", Title: fmt.Sprintf("Fig. 5.4: throughput vs ensemble size (%d B appends)", rep.Config.Size), XLabel: "members", YLabel: "MB/s", Series: []xySeries{dec, cp, zk}})
	}
	return out
}

// WriteRlogPlots writes the figures of rep into dir and records their
// names in rep.Plots.
func WriteRlogPlots(dir string, rep *rlog.Report) error {
	for _, xp := range rlogPlots(rep) {
		if err := writePlotFile(filepath.Join(dir, xp.File), xp); err != nil {
			return err
		}
		rep.Plots = append(rep.Plots, xp.File)
	}
	return nil
}
