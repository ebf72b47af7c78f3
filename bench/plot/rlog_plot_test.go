package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/bench/rlog"
)

// TestRlogPlots: every figure a report's points feed is written as a
// PNG and named in the report; a report without points draws none.
func TestRlogPlots(t *testing.T) {
	rep := &rlog.Report{Config: rlog.Summary{Size: 64 << 10}}
	for _, p := range []rlog.Point{
		{Figure: "5.1", Size: 1024, Ops: 10, MBps: 1, OpsPerS: 1000, CeilingMBps: 50},
		{Figure: "5.1", Size: 64 << 10, Ops: 10, MBps: 30, OpsPerS: 450, CeilingMBps: 50},
		{Figure: "5.2", Setup: "n3-sync", Outstanding: 1, Ops: 10, P50us: 2000, P99us: 9000},
		{Figure: "5.2", Setup: "n3-diskless", Outstanding: 1, Ops: 10, P50us: 1000, P99us: 3000},
		{Figure: "5.4", Members: 3, GroupCommit: rlog.Decoupled, Ops: 10, MBps: 30},
		{Figure: "5.4", Members: 3, GroupCommit: rlog.Coupled, Ops: 10, MBps: 25},
		{Figure: "zookeeper", Members: 3, Ops: 10, MBps: 5},
	} {
		rep.Points = append(rep.Points, p)
	}
	dir := t.TempDir()
	if err := WriteRlogPlots(dir, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Plots) != 4 {
		t.Fatalf("plots %v, want 4", rep.Plots)
	}
	for _, f := range rep.Plots {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", f, err)
		}
	}
	empty := &rlog.Report{}
	if err := WriteRlogPlots(t.TempDir(), empty); err != nil || len(empty.Plots) != 0 {
		t.Errorf("empty report: %v, plots %v", err, empty.Plots)
	}
}
