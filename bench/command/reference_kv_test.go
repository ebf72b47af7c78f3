package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/kvoutage"
	"github.com/corral-db/corral/bench/stats"
)

func kvLat(p99us int64) stats.Latency {
	return stats.Latency{Count: 1, Mean: float64(p99us) / 2, P50: p99us / 2, P99: p99us}
}

// TestReferenceKVSections: stored kv, kv-leader, kv-routing and
// kv-outage reports become their sections, with their commands, tables,
// links and headline ratios.
func TestReferenceKVSections(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	store := func(name string, md func(b *strings.Builder)) {
		var b strings.Builder
		md(&b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	etcd := &kv.Report{Started: started, Results: []kv.Result{
		{System: "corral", Kind: kv.SystemCorral, Workload: "W", Groups: 1, Throughput: 3000, Latency: kvLat(4000)},
		{System: "etcd", Kind: kv.SystemEtcd, Workload: "W", Throughput: 1000, Latency: kvLat(9000)},
	}}
	store("kv-etcd-2026-11-28T1200.md", func(b *strings.Builder) { etcd.Markdown(b) })
	leader := &kv.Report{Started: started, Results: []kv.Result{
		{System: "corral[fixed]", Kind: kv.SystemCorral, Workload: "W", Groups: 1, Policy: "fixed", Durability: "sync", Throughput: 1000, Latency: kvLat(9000)},
		{System: "corral[coolest]", Kind: kv.SystemCorral, Workload: "W", Groups: 1, Policy: "coolest", Durability: "sync", Throughput: 1450, Latency: kvLat(5000),
			Handovers:  []kv.Handover{{AtMs: 900, ZeroMs: 80}},
			Compaction: &kv.CompactionShare{Members: 3, Samples: 10, None: 0.6, Minority: 0.3, Quorum: 0.1}},
	}}
	store("kv-leader-2026-11-28T1210.md", func(b *strings.Builder) { leader.Markdown(b) })
	routing := &kv.Report{Started: started, Results: []kv.Result{
		{System: "corral[g=6]", Kind: kv.SystemCorral, Workload: "C", Groups: 6, Routing: kv.RoutingRouted, Throughput: 1300, Latency: kvLat(2000)},
		{System: "corral[forwarded,g=6]", Kind: kv.SystemCorral, Workload: "C", Groups: 6, Routing: kv.RoutingForwarded, Throughput: 1000, Latency: kvLat(3000)},
	}}
	store("kv-routing-2026-11-28T1220.md", func(b *strings.Builder) { routing.Markdown(b) })
	outage := &kvoutage.OutageReport{Config: kvoutage.DefaultOutageConfig(), Started: started, Trials: []kvoutage.OutageTrial{
		{Kill: 1, Outage: 250 * time.Millisecond, Election: 120 * time.Millisecond, CM: 30 * time.Millisecond, Reconnect: 100 * time.Millisecond, Series: []int64{5}},
	}}
	store("kv-outage-2026-11-28T1230.md", func(b *strings.Builder) { outage.Markdown(b) })

	var b strings.Builder
	if err := writeReference(&b, dir, "runs"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		// headline ratios
		"| kv vs etcd | W ops/s, corral ÷ etcd | 3.00× | [kv-etcd-2026-11-28T1200](runs/kv-etcd-2026-11-28T1200.md) |",
		"| kv leader change | coolest ÷ fixed, W ops/s, sync | 1.45× | [kv-leader-2026-11-28T1210](runs/kv-leader-2026-11-28T1210.md) |",
		"| kv routing | C ops/s, 6 RGs, routed ÷ forwarded | 1.30× |",
		// sections: command, start, link, tables
		"corral-bench kv --workload A,B,C,F,W",
		"Run started 2026-11-28T12:00:00Z; [full report](runs/kv-etcd-2026-11-28T1200.md)",
		"| W | corral | 3000 | 1000 | 3.00× |",
		"corral-bench kv --systems corral --workload W --leader-policy fixed,random,roundrobin,coolest --durability sync,async",
		"| W | sync | coolest | 1450 | 1.45× | 5.00 | 1 | 80 |",
		"| 6 | C | 1300 | 1000 | 1.30× |",
		"corral-bench kv-outage --kills 5 --out DIR",
		"Median (min-max) over the kills, ms:",
		"| 250 (250-250) | 0 (0-0) | 120 (120-120) | 30 (30-30) | 100 (100-100) |",
		"[kv-outage](docs/bench/kv/outage/kv-outage.png)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
	// A section whose run is not stored (kv-groups, kv-compaction5) is
	// left out rather than shown empty.
	if strings.Contains(out, "over 1, 2 and 4 replica groups") || strings.Contains(out, "replica group of 5") {
		t.Errorf("reference shows a section without a run:\n%s", out)
	}
}
