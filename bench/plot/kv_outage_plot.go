package plot

import (
	"errors"
	"fmt"
	"io"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/kvoutage"
)

// KVOutagePlotFile is the name of the kv-outage figure.
const KVOutagePlotFile = "kv-outage.png"

// WriteKVOutagePlot writes the kv-outage figure into dir.
func WriteKVOutagePlot(dir string, rep *kvoutage.OutageReport) (string, error) {
	return writePNGFile(dir, KVOutagePlotFile, func(w io.Writer) error { return renderKVOutagePlot(w, rep) })
}

// renderKVOutagePlot draws each kill's successful operations per 100 ms
// on one axis of time from the kill (the paper's Figs. 16-17).
func renderKVOutagePlot(w io.Writer, rep *kvoutage.OutageReport) error {
	sp := newSeriesPlot(fmt.Sprintf("SIGKILL of RG 1's leader: successful reads per %v", kv.SeriesBucket),
		"time since the kill (s)", "operations per 100 ms")
	bucket := kv.SeriesBucket.Seconds()
	for _, tr := range rep.Trials {
		if len(tr.Series) == 0 {
			continue
		}
		if _, err := sp.step(fmt.Sprintf("kill %d", tr.Kill), tr.Series, -tr.KillAt.Seconds(), bucket, 1); err != nil {
			return err
		}
	}
	if sp.n == 0 {
		return errors.New("bench: kv-outage: no series to plot")
	}
	return sp.png(w)
}
