package kv

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var flagProcs = flag.Bool("kv.procs", false, "run TestLeaderRunSmoke (real corral server processes; builds corral unless $CORRAL_BIN names it)")

// TestLeaderRunSmoke runs `corral bench kv` small against one RG of three
// `corral server` processes under the coolest policy, with a small
// memtable and a short pause between leader changes so compactions and
// perhaps handovers happen. It checks what the harness read (samples of
// every member, handovers inside the interval with rising epochs, the
// policy table), not how often anything happened.
func TestLeaderRunSmoke(t *testing.T) {
	if !*flagProcs {
		t.Skip("starts real processes; run with -kv.procs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wl, err := ParseWorkloads("W")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Workloads, cfg.Systems, cfg.Records, cfg.Threads = wl, []string{SystemCorral}, 1000, 4
	cfg.Warmup, cfg.Duration = 500*time.Millisecond, 3*time.Second
	cfg.LeaderPolicies = []string{"coolest"}
	cfg.ServerOpts = []string{"kv.leaderChangeMinIntervalMs=1000", "kv.memTableSize=1048576"}
	cfg.CorralBin, cfg.WorkDir = os.Getenv("CORRAL_BIN"), t.TempDir()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	res := rep.Results[0]
	if res.Compaction == nil || res.Compaction.Samples == 0 || res.Compaction.Members != 3 {
		t.Fatalf("compaction share %+v", res.Compaction)
	}
	if sum := res.Compaction.None + res.Compaction.Minority + res.Compaction.Quorum; sum < 0.999 || sum > 1.001 {
		t.Errorf("shares sum to %v", sum)
	}
	var last float64
	for _, h := range res.Handovers {
		if h.AtMs < last || h.AtMs > 3000 || h.ZeroMs < 0 || h.ZeroMs > 3000 {
			t.Errorf("handover %+v after one at %v ms", h, last)
		}
		last = h.AtMs
	}
	if res.Policy != "coolest" || res.Durability != "sync" || res.Ops == 0 {
		t.Errorf("result %+v", res)
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), HeadingPolicies) || !strings.Contains(md.String(), "| W | sync | coolest |") {
		t.Errorf("report:\n%s", md.String())
	}
	t.Logf("%d handovers, share %+v", len(res.Handovers), *res.Compaction)
}
