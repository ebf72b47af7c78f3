package plot

import (
	"bytes"
	"image/png"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/kvoutage"
)

func TestRenderKVOutagePlot(t *testing.T) {
	rep := &kvoutage.OutageReport{Trials: []kvoutage.OutageTrial{
		{Kill: 1, KillAt: 300 * time.Millisecond, Series: []int64{10, 11, 9, 0, 0, 12}},
		{Kill: 2, KillAt: 200 * time.Millisecond, Series: []int64{8, 9, 0, 10}},
	}}
	var b bytes.Buffer
	if err := renderKVOutagePlot(&b, rep); err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(&b); err != nil || img.Bounds().Dx() == 0 {
		t.Fatalf("not a PNG: %v", err)
	}
	if err := renderKVOutagePlot(&b, &kvoutage.OutageReport{}); err == nil {
		t.Error("a report without series plotted")
	}
	if _, err := WriteKVOutagePlot(t.TempDir(), rep); err != nil {
		t.Error(err)
	}
}
