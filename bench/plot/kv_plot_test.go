package plot

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/corral-db/corral/bench/kv"
)

func TestRenderKVPlot(t *testing.T) {
	rep := &kv.Report{Results: []kv.Result{
		{System: "corral", Workload: "W", Series: []int64{10, 0, 12}, Handovers: []kv.Handover{{AtMs: 150, ZeroMs: 100}}},
		{System: "etcd", Workload: "W", Series: []int64{5, 6, 7}},
		{System: "etcd", Workload: "C"},
	}}
	var b bytes.Buffer
	if err := renderKVPlot(&b, rep, "W"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil || img.Bounds().Dx() == 0 {
		t.Fatalf("not a PNG: %v", err)
	}
	if err := renderKVPlot(&b, rep, "C"); err == nil {
		t.Error("a workload without series plotted")
	}
	dir := t.TempDir()
	files, err := WriteKVPlots(dir, &kv.Report{Results: rep.Results[:2]})
	if err != nil || len(files) != 1 {
		t.Errorf("WriteKVPlots = %v, %v", files, err)
	}
}
