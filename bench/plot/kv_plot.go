package plot

import (
	"fmt"
	"io"

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

// renderKVPlot draws workload w's series: operations per second in each
// 100 ms bucket, one step line per system, on one time axis, with a
// triangle on the axis at each leader handover of a system (the paper's
// Figs. 8, 9 and 12 for W).
func renderKVPlot(w io.Writer, rep *kv.Report, workload string) error {
	sp := newSeriesPlot(fmt.Sprintf("workload %s: throughput over time (%v buckets; ▲ leader handover)", workload, kv.SeriesBucket),
		"time since the measured interval began (s)", "operations/s")
	bucket := kv.SeriesBucket.Seconds()
	for _, res := range rep.Results {
		if res.Workload != workload || len(res.Series) == 0 {
			continue
		}
		c, err := sp.step(res.System, res.Series, 0, bucket, 1/bucket)
		if err != nil {
			return err
		}
		var at []float64
		for _, h := range res.Handovers {
			at = append(at, h.AtMs/1000)
		}
		if err := sp.marks(at, c); err != nil {
			return err
		}
	}
	if sp.n == 0 {
		return fmt.Errorf("bench: workload %s: no series to plot", workload)
	}
	return sp.png(w)
}
