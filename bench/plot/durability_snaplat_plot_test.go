package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/durability"
	"github.com/corral-db/corral/bench/failover"
)

func TestDurTreePlots(t *testing.T) {
	rep := plotCannedTreeReport()
	plots := durTreePlots(rep)
	if len(plots) != 2 || plots[0].File != "snapshot.png" || plots[1].File != "restore.png" {
		t.Fatalf("plots %+v", plots)
	}
	snap, rest := plots[0], plots[1]
	if len(snap.Series) != 3 || !slices.Equal(snap.Series[2].X, []float64{100, 250}) || !slices.Equal(snap.Series[2].Y, []float64{300, 600}) {
		t.Errorf("snapshot series: %+v", snap.Series)
	}
	// ZooKeeper's failed trial is left out; its line keeps its style.
	if zk := rest.Series[2]; zk.Name != durability.DurZKForceSync || !slices.Equal(zk.X, []float64{100}) || zk.Style != 2 {
		t.Errorf("ZooKeeper's restoration series: %+v", zk)
	}
	// A configuration with no point has no line, and the others keep their
	// style (colour) by their place in the run.
	rep.Trees[0].Snapshots = nil
	if s := durTreePlots(rep)[0].Series; len(s) != 2 || s[0].Name != durability.DurCorralDiskless || s[0].Style != 1 {
		t.Errorf("without corral-sync's snapshots: %+v", s)
	}
	// No point at all: no figure.
	for i := range rep.Trees {
		rep.Trees[i].Snapshots = nil
	}
	if p := durTreePlots(rep); len(p) != 1 || p[0].File != "restore.png" {
		t.Errorf("without any snapshot: %+v", p)
	}
}

func TestWriteDurabilityTreePlots(t *testing.T) {
	dir := t.TempDir()
	rep := plotCannedTreeReport()
	if err := WriteDurabilityPlots(dir, rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Plots, []string{"snapshot.png", "restore.png"}) {
		t.Fatalf("recorded plots %v", rep.Plots)
	}
	for _, name := range rep.Plots {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, b)
		if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w < 400 || h < 200 {
			t.Errorf("%s: %dx%d", name, w, h)
		}
		if n := distinctColors(img, 10); n < 10 {
			t.Errorf("%s: only %d colours: nothing drawn?", name, n)
		}
	}
	empty := xyPlot{File: "e.png", Series: []xySeries{{Name: "a"}}}
	if err := empty.render(&bytes.Buffer{}); err == nil {
		t.Error("a plot without points rendered")
	}
}

// plotCannedTreeReport is a run of only the tree-size figures (--figs 5.3,5.4)
// for three configurations at two sizes; ZooKeeper's restoration at the
// larger size failed.
func plotCannedTreeReport() *durability.Report {
	cfg := durability.DefaultConfig()
	cfg.CreateDuration, cfg.GetDuration, cfg.CPUDuration, cfg.QueueDuration = 0, 0, 0, 0
	cfg.SnapCounts, cfg.RestoreCounts = []int64{100000, 250000}, []int64{100000, 250000}
	rep := &durability.Report{
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC),
		CommandLine: "corral bench durability --figs 5.3,5.4", Config: cfg,
		Env: bench.Env{GOOS: "linux", GOARCH: "amd64", CPUs: 2, GOMAXPROCS: 2, LoadAvg: "0.50 0.40 0.30", WorkDir: "/tmp/w"},
	}
	all := durability.DurabilityTargets()
	for i, tg := range []durability.DurabilityTarget{all[0], all[2], all[3]} {
		run := durability.DurTreeRun{DurabilityServer: durability.DurabilityServer{Target: tg, ZooCfg: tg.Durability.Lines(), Info: bench.ServerInfo{
			Target: tg.Name, Leader: "server.3 (127.0.0.1:3)",
			Members: []bench.MemberInfo{{ID: 1, PID: 101 + 10*i}, {ID: 2, PID: 102 + 10*i}, {ID: 3, PID: 103 + 10*i}},
		}}}
		base := float64(100 * (i + 1)) // snapshot ms at 100k: 100, 200, 300
		for k, n := range []int64{100000, 250000} {
			run.Growth = append(run.Growth, durability.DurGrowth{Znodes: n, ZnodeCount: n + 1, Created: n / 2, Seconds: 10, PerSec: float64(n) / 20})
			ms := base * float64(k+1)
			run.Snapshots = append(run.Snapshots, durability.DurSnapshot{
				Config: tg.Name, Server: tg.Server, Znodes: n, ZnodeCount: n + 1, Ms: ms, MinMs: ms - 10, MaxMs: ms + 10,
				FillWrites: 60000, Members: []durability.DurSnapMember{{ID: 1, Snapshots: 1, Ms: ms - 10}, {ID: 2, Snapshots: 1, Ms: ms}, {ID: 3, Snapshots: 1, Ms: ms + 10}},
			})
			// Restoration: sync 50/60 ms, diskless 55/120 ms, ZooKeeper 900 ms then failed.
			restore := map[string][]float64{durability.DurCorralSync: {50, 60}, durability.DurCorralDiskless: {55, 120}, durability.DurZKForceSync: {900, 0}}[tg.Name][k]
			r := durability.DurRestore{Config: tg.Name, Server: tg.Server, Znodes: n, ZnodeCount: n + 1, RestoreMs: restore,
				FullTreeMs: 2000 + restore, Trial: failover.FailoverTrial{Trial: k + 1, KillToWriteMs: restore, GapMs: restore + 1, RejoinMs: 1900 + restore}}
			if restore == 0 {
				r.Err = "no write issued after the kill succeeded within 2m0s"
			}
			if tg.Name == durability.DurCorralDiskless && n == 250000 {
				r.TrialsMs = []float64{100, 120, 400} // three trials, the median's figures above
			}
			run.Restores = append(run.Restores, r)
		}
		rep.Trees = append(rep.Trees, run)
	}
	return rep
}
