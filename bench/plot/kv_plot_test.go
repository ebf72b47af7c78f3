package plot

import (
	"bytes"
	"image/png"
	"math"
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

func TestKVSeriesXY(t *testing.T) {
	raw, avg := kvSeriesXY([]int64{10, 20, 30}, 0.1)
	if len(raw) != 4 || raw[1].Y != 200 || math.Abs(raw[3].X-0.3) > 1e-9 || raw[3].Y != 300 {
		t.Errorf("raw = %v", raw)
	}
	// Fewer buckets than the window: the mean of those so far.
	if len(avg) != 3 || avg[2].Y != 200 {
		t.Errorf("avg = %v", avg)
	}
	long := make([]int64, kvSmooth+5)
	for i := range long {
		long[i] = int64(i)
	}
	_, avg = kvSeriesXY(long, 1)
	// The last point averages the last kvSmooth buckets only.
	want := 0.0
	for _, v := range long[len(long)-kvSmooth:] {
		want += float64(v)
	}
	want /= kvSmooth
	if got := avg[len(avg)-1].Y; got != want {
		t.Errorf("last moving average = %v, want %v", got, want)
	}
}
