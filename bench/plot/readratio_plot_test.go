package plot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/readratio"
)

func TestReadRatioJSONLinesAndPlot(t *testing.T) {
	rep := plotSyntheticReadRatioReport()
	var b bytes.Buffer
	if err := readratio.WriteReadRatioJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		kinds[m["kind"].(string)]++
		if m["kind"] == "cell" && (m["target"] == nil || m["read_pct"] == nil || m["ops_per_sec"] == nil || m["servers"] == nil) {
			t.Errorf("cell line %s", sc.Text())
		}
	}
	if kinds["ensemble"] != 4 || kinds["cell"] != 12 {
		t.Errorf("kinds %v", kinds)
	}
	dir := t.TempDir()
	if err := WriteReadRatioPlot(dir, rep); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, ReadRatioPlotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.DecodeConfig(f); err != nil || len(rep.Plots) != 1 {
		t.Errorf("png: %v, plots %v", err, rep.Plots)
	}
	if err := renderReadRatioPlot(&bytes.Buffer{}, &readratio.Report{Ratios: []int{0}}); err == nil {
		t.Error("a report without throughput was plotted")
	}
}

// plotSyntheticReadRatioReport has corral at twice ZooKeeper's throughput.
func plotSyntheticReadRatioReport() *readratio.Report {
	rep := &readratio.Report{Start: time.Unix(0, 0), Ratios: []int{0, 50, 100}, Keys: 100}
	rep.Env.CPUs = 2
	for _, n := range []int{3, 5} {
		for _, t := range []string{launch.TargetCorral, launch.TargetZooKeeper} {
			rep.Ensembles = append(rep.Ensembles, readratio.RatioEnsemble{Target: t, Servers: n, Leader: n})
			for _, pct := range rep.Ratios {
				f := 1.0
				if t == launch.TargetCorral {
					f = 2
				}
				c := readratio.RatioCell{Servers: n, ReadPct: pct, Reads: int64(pct), Writes: int64(100 - pct)}
				c.Target, c.Seconds, c.Ops = t, 1, int64(f*float64(1000*(pct+10)/n))
				c.OpsPerSec = float64(c.Ops)
				rep.Cells = append(rep.Cells, c)
			}
		}
	}
	return rep
}
