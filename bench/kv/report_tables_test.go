package kv

import (
	"bytes"
	"strings"
	"testing"

	"github.com/corral-db/corral/bench/stats"
)

// tableReport is a run of every kind the summary tables read: two
// durabilities × fixed and coolest on one RG, a sharded routed and
// forwarded pair, and etcd.
func tableReport() *Report {
	lat := func(meanUs float64, p99Us int64) stats.Latency {
		return stats.Latency{Count: 1, Mean: meanUs, P50: p99Us / 2, P99: p99Us}
	}
	one := func(pol, dur, wl string, ops float64, p99 int64) Result {
		return Result{System: corralRunName(pol, dur, 1, RoutingRouted), Kind: SystemCorral, Workload: wl, Groups: 1,
			Policy: pol, Durability: dur, Throughput: ops, Latency: lat(1000, p99)}
	}
	coolest := one("coolest", "sync", "W", 3000, 4000)
	coolest.Handovers = []Handover{{AtMs: 500, Member: "m2", ZeroMs: 40}, {AtMs: 1500, Member: "m3", ZeroMs: 90}}
	coolest.Compaction = &CompactionShare{Members: 3, EveryMs: 100, Samples: 20, None: 0.5, Minority: 0.35, Quorum: 0.15, Leader: 0.05}
	routed := Result{System: "corral[g=6]", Kind: SystemCorral, Workload: "C", Groups: 6, Routing: RoutingRouted, Durability: "sync", Throughput: 13000, Latency: lat(900, 3000)}
	fwd := Result{System: "corral[forwarded,g=6]", Kind: SystemCorral, Workload: "C", Groups: 6, Routing: RoutingForwarded, Durability: "sync", Throughput: 10000, Latency: lat(1200, 5000)}
	return &Report{
		Config: ConfigSummary{CompactionSample: "100ms"},
		Results: []Result{
			one("fixed", "sync", "W", 2000, 8000), coolest,
			one("fixed", "async", "W", 4000, 3000), one("coolest", "async", "W", 4400, 3000),
			routed, fwd,
			{System: SystemEtcd, Kind: SystemEtcd, Workload: "W", Throughput: 1000, Latency: lat(5000, 10000)},
			{System: SystemEtcd, Kind: SystemEtcd, Workload: "C", Throughput: 4000, Latency: lat(2000, 6000)},
		},
	}
}

func TestReportSummaryTables(t *testing.T) {
	var b bytes.Buffer
	tableReport().Markdown(&b)
	md := b.String()
	for _, want := range []string{
		HeadingEtcd + "\n",
		"| W | corral[coolest,sync] | 3000 | 1000 | 3.00× | 4.00 | 10.00 | 0.40× | ≥ 2.5×, p99 ≤ 1× | yes |",
		"| W | corral[fixed,sync] | 2000 | 1000 | 2.00× | 8.00 | 10.00 | 0.80× | ≥ 2.5×, p99 ≤ 1× | no |",
		"| C | corral[g=6] | 13000 | 4000 | 3.25× | 3.00 | 6.00 | 0.50× | – (load scaled) | – |",
		HeadingPolicies + "\n",
		"| W | sync | coolest | 3000 | 1.50× | 4.00 | 2 | 90 | 0 | 35.0 | 15.0 | 5.0 |",
		"| W | async | coolest | 4400 | 1.10× | 3.00 | 0 | – | 0 | – | – | – |",
		"| W | sync | fixed | 2000 | – |",
		HeadingCompaction + "\n",
		"| corral[coolest,sync] | W | 3 | 20 (0 dropped) | 50.0 | 35.0 | 15.0 | 5.0 |",
		HeadingRouting + "\n",
		"| 6 | C | 13000 | 10000 | 1.30× | 0.90 | 1.20 | 3.00 | 5.00 |",
		"| leader handovers | 0 | 2 |",
		"| zero window at a handover, max (ms) | – | 90 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// The forwarded run has no routed partner in another durability, and
	// no table appears without its runs.
	var none bytes.Buffer
	(&Report{Results: []Result{{System: "corral", Kind: SystemCorral, Workload: "C", Groups: 1}}}).Markdown(&none)
	for _, h := range []string{HeadingEtcd, HeadingPolicies, HeadingCompaction, HeadingRouting} {
		if strings.Contains(none.String(), h) {
			t.Errorf("a run without its data has %q", h)
		}
	}
}
