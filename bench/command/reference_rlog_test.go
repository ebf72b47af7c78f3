package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/rlog"
)

// TestReferenceRlog: a stored `corral bench rlog` report gets its
// section (command, targets, Fig. 5.1 and 5.4 tables) and its corral ÷
// ZooKeeper headline row.
func TestReferenceRlog(t *testing.T) {
	rep := &rlog.Report{
		Config:   rlog.Summary{Members: 3, Durability: "sync", Size: 64 << 10, Outstanding: 16},
		Started:  time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
		Finished: time.Date(2026, 11, 28, 12, 10, 0, 0, time.UTC),
		Anchors:  &rlog.Anchors{DiskMBps: 300, LoopbackMBps: 3000, Members: 3, CeilingMBps: 100, BlockSize: 64 << 10},
		Points: []rlog.Point{
			{Figure: "5.1", Setup: "n3-sync", Members: 3, Durability: "sync", GroupCommit: rlog.Decoupled, Size: 1024, Ops: 5, MBps: 3},
			{Figure: "5.4", Setup: "n3-sync", Members: 3, Durability: "sync", GroupCommit: rlog.Decoupled, Size: 64 << 10, Ops: 5, MBps: 85},
			{Figure: "5.4", Setup: "n3-sync-coupled", Members: 3, Durability: "sync", GroupCommit: rlog.Coupled, Size: 64 << 10, Ops: 5, MBps: 70},
			{Figure: "zookeeper", Setup: "zookeeper", Members: 3, Size: 64 << 10, Ops: 5, MBps: 10},
		},
	}
	var md strings.Builder
	rep.Markdown(&md)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rlog-20261128T120000Z.md"), []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeReference(&b, dir, "docs/bench/runs"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"## replicated logs (ZKRL)",
		rlogReferenceCommand,
		"Run started 2026-11-28T12:00:00Z",
		"| replicated logs | 64 KiB appends, MB/s (3 members, sync) | 8.5x |",
		"Fig. 5.1: throughput vs append size:",
		"| n3-sync-coupled | 3 | sync | coupled | 64 KiB |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
}
