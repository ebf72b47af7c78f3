package readratio

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
)

func TestParseReadRatios(t *testing.T) {
	got, err := ParseReadRatios("0, 20,100,90")
	if err != nil || launch.JoinInts(got) != "0,20,100,90" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "101", "-1", "50,50", "x"} {
		if v, err := ParseReadRatios(bad); err == nil {
			t.Errorf("%q accepted: %v", bad, v)
		}
	}
}

// TestMixedPhaseSendsTheMix runs one ratio against an in-process fake that
// holds the preloaded nodes: every request issued reaches the server, in
// the proportion asked, and is answered.
func TestMixedPhaseSendsTheMix(t *testing.T) {
	ks := &load.KeySpace{Root: load.DefaultRoot, Prefix: "k", Counts: []int64{30, 20}}
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	readratioPreloadFake(s, ks, load.Value(32))
	cell, err := runMixedPhase(readratioBenchTestCtx(t), mixedPhase{
		Target: "fake", ReadPct: 70, Addrs: []string{s.Addr()}, Keys: ks, Conns: 2, Inflight: 4,
		ValueSize: 32, Duration: 300 * time.Millisecond, SessionTimeout: 10 * time.Second, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	gets, sets := int64(s.Count(wire.OpGetData)), int64(s.Count(wire.OpSetData))
	if cell.Reads != gets || cell.Writes != sets || gets+sets == 0 {
		t.Errorf("issued %d reads and %d writes; the server read %d getData and %d setData", cell.Reads, cell.Writes, gets, sets)
	}
	// Each connection's share is exact over every 100 requests, so the two
	// together are off by less than a hundred's worth each.
	if n := gets + sets; gets*10 < 7*n-2*70 || gets*10 > 7*n+2*70 {
		t.Errorf("%d reads of %d requests, want 70%%", gets, n)
	}
	if cell.Ops == 0 || cell.Errors != 0 || cell.Phase != "read70" || cell.ReadPct != 70 || cell.Seconds == 0 || cell.Count == 0 {
		t.Errorf("cell %+v", cell)
	}
	s.Check()
}

// TestReadRatioAgainstFakeEnsemble runs the harness on fake members (this
// test binary; server.3 leads): by default the clients spread over every
// member, with --leader-only they are all on the leader.
func TestReadRatioAgainstFakeEnsemble(t *testing.T) {
	t.Setenv(fakezk.ProcessEnv, "1")
	for _, leaderOnly := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out := t.TempDir()
		cfg := DefaultConfig()
		cfg.Targets, cfg.Servers, cfg.Ratios, cfg.LeaderOnly = []string{launch.TargetCorral}, []int{3}, []int{100, 0}, leaderOnly
		cfg.Conns, cfg.Inflight, cfg.Keys, cfg.ValueSize = 3, 2, 30, 16
		cfg.Warmup, cfg.Duration = 0, 300*time.Millisecond
		cfg.CorralBin, cfg.WorkDir, cfg.OutDir = os.Args[0], t.TempDir(), out
		rep, err := Run(ctx, cfg)
		cancel()
		// The members share no state: a read of a node another member
		// holds is an error reply, which is counted, not a failure.
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Ensembles) != 1 || len(rep.Cells) != 2 || rep.Ensembles[0].Leader != 3 {
			t.Fatalf("leader-only %v: report %+v", leaderOnly, rep)
		}
		for _, c := range rep.Cells {
			if c.Ops+c.Errors == 0 || c.ServerCPU == nil || len(c.ServerCPUEach) != 3 || c.Servers != 3 {
				t.Errorf("leader-only %v: cell %+v", leaderOnly, c)
			}
		}
		if r, w := rep.Cells[0].Reads, rep.Cells[0].Writes; r == 0 || w != 0 {
			t.Errorf("100%% reads issued %d reads, %d writes", r, w)
		}
		if r, w := rep.Cells[1].Reads, rep.Cells[1].Writes; r != 0 || w == 0 {
			t.Errorf("0%% reads issued %d reads, %d writes", r, w)
		}
		// The measured getData and setData go where the clients are.
		for id := 1; id <= 3; id++ {
			logb, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("corral-3.s%d.log", id)))
			var creates, sets, gets int
			if i := strings.Index(string(logb), "served "); i >= 0 {
				fmt.Sscanf(string(logb[i:]), "served create %d setData %d getData %d", &creates, &sets, &gets)
			}
			onLeader := id == 3
			if err != nil || (leaderOnly && !onLeader) != (sets+gets == 0) {
				t.Errorf("leader-only %v: server.%d served create %d setData %d getData %d (%v)", leaderOnly, id, creates, sets, gets, err)
			}
		}
	}
}

// syntheticReadRatioReport has corral at twice ZooKeeper's throughput.
func syntheticReadRatioReport() *Report {
	rep := &Report{Start: time.Unix(0, 0), Ratios: []int{0, 50, 100}, Keys: 100}
	rep.Env.CPUs = 2
	for _, n := range []int{3, 5} {
		for _, t := range []string{launch.TargetCorral, launch.TargetZooKeeper} {
			rep.Ensembles = append(rep.Ensembles, RatioEnsemble{Target: t, Servers: n, Leader: n})
			for _, pct := range rep.Ratios {
				f := 1.0
				if t == launch.TargetCorral {
					f = 2
				}
				c := RatioCell{Servers: n, ReadPct: pct, Reads: int64(pct), Writes: int64(100 - pct)}
				c.Target, c.Seconds, c.Ops = t, 1, int64(f*float64(1000*(pct+10)/n))
				c.OpsPerSec = float64(c.Ops)
				rep.Cells = append(rep.Cells, c)
			}
		}
	}
	return rep
}

func TestReadRatioMarkdown(t *testing.T) {
	var b bytes.Buffer
	WriteReadRatioMarkdown(&b, syntheticReadRatioReport())
	md := b.String()
	for _, want := range []string{
		"| reads % | corral n=3 | zookeeper n=3 | corral/zookeeper n=3 | corral n=5 | zookeeper n=5 | corral/zookeeper n=5 |",
		"| 0 | 6666 | 3333 | 2.00x | 4000 | 2000 | 2.00x |",
		"| 100 | 73332 | 36666 | 2.00x | 44000 | 22000 | 2.00x |",
		"| zookeeper n=5 | 22000 | 2000 |", // Table 1: 100% and 0% reads
		"| corral n=3 | 50 | 40000 |",      // details
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestReadRatioTableWithOneTargetHasNoRatio(t *testing.T) {
	rep := syntheticReadRatioReport()
	var cells []RatioCell
	for _, c := range rep.Cells {
		if c.Target == launch.TargetCorral {
			cells = append(cells, c)
		}
	}
	var ens []RatioEnsemble
	for _, e := range rep.Ensembles {
		if e.Target == launch.TargetCorral {
			ens = append(ens, e)
		}
	}
	rep.Cells, rep.Ensembles = cells, ens
	var b bytes.Buffer
	WriteReadRatioTable(&b, rep)
	if strings.Contains(b.String(), "/") || !strings.Contains(b.String(), "| 50 | 40000 | 24000 |") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestReadRatioConnectsToARunningServer measures a server it did not
// Start (an in-process fake, which says it is standalone): with
// --leader-only the clients go to the server that says it leads.
func TestReadRatioConnectsToARunningServer(t *testing.T) {
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	cfg := DefaultConfig()
	cfg.Connect, cfg.Ratios, cfg.LeaderOnly = []string{s.Addr()}, []int{50}, true
	cfg.Conns, cfg.Inflight, cfg.Keys, cfg.ValueSize = 2, 2, 20, 8
	cfg.Warmup, cfg.Duration = 0, 200*time.Millisecond
	rep, err := Run(readratioBenchTestCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 1 || rep.Cells[0].Ops == 0 || rep.Cells[0].Errors != 0 || rep.Cells[0].Target != "server" ||
		len(rep.Ensembles) != 1 || rep.Ensembles[0].Clients[0] != s.Addr() || rep.Ensembles[0].Version != "Zookeeper version: fake" {
		t.Errorf("report %+v", rep)
	}
	if s.Count(wire.OpCreate) < 20 {
		t.Errorf("%d creates, want the 20 preloaded nodes", s.Count(wire.OpCreate))
	}
	s.Check()
}
