package kvoutage

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var flagProcs = flag.Bool("kv.procs", false, "run TestOutageSmoke (a sharded cluster of real processes, two SIGKILLs; builds corral unless $CORRAL_BIN names it)")

// TestOutageSmoke runs `corral bench kv-outage` small: one RG of three
// node processes, two kills with a restart between. It checks what the
// harness did (who was killed, that the killed node came back, that a
// newer leader was recorded, what the report holds), not how long
// anything took.
func TestOutageSmoke(t *testing.T) {
	if !*flagProcs {
		t.Skip("starts real processes; run with -kv.procs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := RunOutage(ctx, OutageConfig{
		Records: 200, Threads: 4, Groups: 1, Members: 3,
		Warmup: time.Second, After: 5 * time.Second, Kills: 2, Settle: 500 * time.Millisecond,
		TickTimeMs: 100, CorralBin: os.Getenv("CORRAL_BIN"), WorkDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Trials) != 2 {
		t.Fatalf("%d trials, want 2", len(rep.Trials))
	}
	pids := map[int]bool{}
	for _, tr := range rep.Trials {
		if pids[tr.PID] {
			t.Errorf("pid %d killed twice: the killed node was not restarted", tr.PID)
		}
		pids[tr.PID] = true
		if tr.NewEpoch <= tr.Epoch || tr.NewLeader == tr.Leader || tr.NewLeader == 0 {
			t.Errorf("kill %d: leader %d epoch %d, then %d epoch %d", tr.Kill, tr.Leader, tr.Epoch, tr.NewLeader, tr.NewEpoch)
		}
		if tr.Ops == 0 || len(tr.Series) == 0 {
			t.Errorf("kill %d: %d ops, series %v", tr.Kill, tr.Ops, tr.Series)
		}
	}
	var md, jl bytes.Buffer
	rep.Markdown(&md)
	if err := rep.JSONLines(&jl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| 2 |") || strings.Count(jl.String(), "\n") != 2 {
		t.Errorf("report:\n%s\n%s", md.String(), jl.String())
	}
}
