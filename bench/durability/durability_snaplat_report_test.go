package durability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/failover"
)

// cannedTreeReport is a run of only the tree-size figures (--figs 5.3,5.4)
// for three configurations at two sizes; ZooKeeper's restoration at the
// larger size failed.
func cannedTreeReport() *Report {
	cfg := DefaultConfig()
	cfg.CreateDuration, cfg.GetDuration, cfg.CPUDuration, cfg.QueueDuration = 0, 0, 0, 0
	cfg.SnapCounts, cfg.RestoreCounts = []int64{100000, 250000}, []int64{100000, 250000}
	rep := &Report{
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC),
		CommandLine: "corral bench durability --figs 5.3,5.4", Config: cfg,
		Env: bench.Env{GOOS: "linux", GOARCH: "amd64", CPUs: 2, GOMAXPROCS: 2, LoadAvg: "0.50 0.40 0.30", WorkDir: "/tmp/w"},
	}
	all := DurabilityTargets()
	for i, tg := range []DurabilityTarget{all[0], all[2], all[3]} {
		run := DurTreeRun{DurabilityServer: DurabilityServer{Target: tg, ZooCfg: tg.Durability.Lines(), Info: bench.ServerInfo{
			Target: tg.Name, Leader: "server.3 (127.0.0.1:3)",
			Members: []bench.MemberInfo{{ID: 1, PID: 101 + 10*i}, {ID: 2, PID: 102 + 10*i}, {ID: 3, PID: 103 + 10*i}},
		}}}
		base := float64(100 * (i + 1)) // snapshot ms at 100k: 100, 200, 300
		for k, n := range []int64{100000, 250000} {
			run.Growth = append(run.Growth, DurGrowth{Znodes: n, ZnodeCount: n + 1, Created: n / 2, Seconds: 10, PerSec: float64(n) / 20})
			ms := base * float64(k+1)
			run.Snapshots = append(run.Snapshots, DurSnapshot{
				Config: tg.Name, Server: tg.Server, Znodes: n, ZnodeCount: n + 1, Ms: ms, MinMs: ms - 10, MaxMs: ms + 10,
				FillWrites: 60000, Members: []DurSnapMember{{ID: 1, Snapshots: 1, Ms: ms - 10}, {ID: 2, Snapshots: 1, Ms: ms}, {ID: 3, Snapshots: 1, Ms: ms + 10}},
			})
			// Restoration: sync 50/60 ms, diskless 55/120 ms, ZooKeeper 900 ms then failed.
			restore := map[string][]float64{DurCorralSync: {50, 60}, DurCorralDiskless: {55, 120}, DurZKForceSync: {900, 0}}[tg.Name][k]
			r := DurRestore{Config: tg.Name, Server: tg.Server, Znodes: n, ZnodeCount: n + 1, RestoreMs: restore,
				FullTreeMs: 2000 + restore, Trial: failover.FailoverTrial{Trial: k + 1, KillToWriteMs: restore, GapMs: restore + 1, RejoinMs: 1900 + restore}}
			if restore == 0 {
				r.Err = "no write issued after the kill succeeded within 2m0s"
			}
			if tg.Name == DurCorralDiskless && n == 250000 {
				r.TrialsMs = []float64{100, 120, 400} // three trials, the median's figures above
			}
			run.Restores = append(run.Restores, r)
		}
		rep.Trees = append(rep.Trees, run)
	}
	return rep
}

func TestDurTreeMarkdown(t *testing.T) {
	rep := cannedTreeReport()
	rep.Plots = []string{"snapshot.png", "restore.png"}
	var b bytes.Buffer
	WriteDurabilityMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{
		"corral bench durability --figs 5.3,5.4",
		"### Snapshot latency and restoration against the tree's size (Fig. 5.3, 5.4)",
		"- corral-diskless: `forceSync=yes durability=diskless`",
		"grown to 100001 in 10 s (5000 creates/s), 250001 in 10 s (12500 creates/s)",
		"#### Snapshot latency (Fig. 5.3), ms",
		"| znodes | corral-sync | corral-diskless | zk-forcesync |",
		"| 100000 | 100 (90–110) | 200 (190–210) | 300 (290–310) |",
		"| 250000 | 200 (190–210) | 400 (390–410) | 600 (590–610) |",
		"| 100000 | 50 | 55 | 900 |",          // kill → first write
		"| 250000 | 60 | 120 (100–400) | — |", // the median of three trials; ZooKeeper's failed trial has no value
		"7 `corral bench failover` trials",
		"| 100000 | 1950 | 1955 | 2800 |", // rejoin
		"| 250000 | 61 | 121 | — |",       // gap: nor in the other tables
		"| 100000 | corral-diskless ÷ corral-sync | 1.10x | ≤ 1.5x | yes |",
		"| 250000 | corral-diskless ÷ corral-sync | 2.00x | ≤ 1.5x | no |",
		"- zk-forcesync restoration at 250000 znodes FAILED: no write issued",
		"![snapshot](snapshot.png)", "![restore](restore.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Without a time-series phase their description and tables are left out.
	for _, absent := range []string{"### Per-second series", "1. cpu (Fig. 5.5)", "Latencies are of successful requests"} {
		if strings.Contains(md, absent) {
			t.Errorf("report has %q though no time-series phase ran", absent)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
	// A report without tree ensembles has no such section.
	b.Reset()
	WriteDurabilityMarkdown(&b, cannedDurabilityReport())
	if strings.Contains(b.String(), "Fig. 5.3") {
		t.Error("a time-series report mentions Fig. 5.3")
	}
}

func TestDurTreeJSONLines(t *testing.T) {
	rep := cannedTreeReport()
	var b bytes.Buffer
	if err := WriteDurabilityJSONLines(&b, rep); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	counts := map[string]int{}
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		counts[m["record"].(string)]++
		lines = append(lines, m)
	}
	if want := map[string]int{"run": 1, "tree": 3, "snapshot": 6, "restore": 6}; !equalCounts(counts, want) {
		t.Fatalf("records %v, want %v", counts, want)
	}
	run := lines[0]
	ratios, _ := run["restore_ratios"].([]any)
	if len(ratios) != 2 || ratios[1].(map[string]any)["ratio"] != 2.0 || ratios[1].(map[string]any)["met"] != false {
		t.Errorf("restore ratios: %v", ratios)
	}
	if sc, _ := run["snap_counts"].([]any); len(sc) != 2 || sc[1] != 250000.0 {
		t.Errorf("snap_counts: %v", run["snap_counts"])
	}
	tree := lines[1]
	if tree["name"] != DurCorralSync || len(tree["growth"].([]any)) != 2 {
		t.Errorf("tree line: %v", tree)
	}
	snap := lines[4]
	if snap["record"] != "snapshot" || snap["config"] != DurCorralSync || snap["znodes"] != 100000.0 || snap["ms"] != 100.0 ||
		len(snap["members"].([]any)) != 3 {
		t.Errorf("first snapshot line: %v", snap)
	}
	last := lines[len(lines)-1]
	if last["record"] != "restore" || last["config"] != DurZKForceSync || last["error"] == nil {
		t.Errorf("last restore line: %v", last)
	}
	if tr := lines[len(lines)-2]["trial"].(map[string]any); tr["kill_to_write_ms"] != 900.0 {
		t.Errorf("trial of ZooKeeper at 100000: %v", tr)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
