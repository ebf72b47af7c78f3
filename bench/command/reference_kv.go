package command

import (
	"slices"
	"strings"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/kvoutage"
)

// The key-value store's sections of the reference (issues 23 and 25):
// each is one `corral-bench kv` or `kv-outage` command whose report is
// stored as docs/bench/runs/<glob's prefix><start>.md, its figures under
// docs/bench/kv/<section>/. The tables are the reports' summary tables
// (bench/kv/report_tables.go), found by their headings.
var kvRefExperiments = []refExperiment{
	{
		title:   "key-value store against etcd (ACaZoo, YCSB)",
		glob:    "kv-etcd-*.md",
		command: "corral-bench kv --workload A,B,C,F,W --duration 20s --compaction-sample 0 --out DIR",
		what:    "one replica group of 3 `corral server` members (store=kv, sync) and a 3-member etcd cluster in the same run, each member GOMAXPROCS=1 on its own CPU budget; 1 KiB records of 10 × 100 B, 10,000 records, 16 closed-loop threads, zipfian keys; issue 23's targets: writes ≥ 2.5×, reads ≥ 2×, p99 no worse",
		tables:  []refTable{{heading: kv.HeadingEtcd}},
		headline: func(run string, tabs []mdTable) []headlineRow {
			return kvEtcdRows("kv vs etcd", run, tabs)
		},
		figures: []string{"docs/bench/kv/etcd/kv-throughput-W.png", "docs/bench/kv/etcd/kv-throughput-C.png"},
	},
	{
		title:    "compaction-aware leader change (ACaZoo Figs. 8, 9, 12, 13-15 and Table I)",
		glob:     "kv-leader-*.md",
		command:  "corral-bench kv --systems corral --workload W --leader-policy fixed,random,roundrobin,coolest --durability sync,async --duration 30s --warmup 5s --out DIR",
		what:     "100% writes on one replica group of 3, a fixed leader against the compaction-aware leader change's policies, sync and async; the members' compaction state read every 100 ms; a handover's zero-throughput window is the longest run of 1 ms without a completed write near it; issue 23's targets: ≥ 1.40× the fixed leader in sync, ≤ 100 ms without throughput at a handover",
		tables:   []refTable{{heading: kv.HeadingPolicies}},
		headline: kvPolicyRows,
		figures:  []string{"docs/bench/kv/leader/kv-throughput-W.png"},
	},
	{
		title:   "share of time members compact, replica group of 5 (ACaZoo Figs. 13-15)",
		glob:    "kv-compaction5-*.md",
		command: "corral-bench kv --systems corral --members 5 --workload W --leader-policy fixed,coolest --duration 60s --warmup 5s --out DIR",
		what:    "as the leader-change runs with a replica group of 5 (the group of 3 is in the section above)",
		tables:  []refTable{{heading: kv.HeadingCompaction}},
	},
	{
		title:   "client-coordinated vs server-forwarded requests (ACaZoo Table II)",
		glob:    "kv-routing-*.md",
		command: "corral-bench kv --systems corral --groups 6 --routing routed,forwarded --workload C --duration 20s --out DIR",
		what:    "six replica groups of 3 hosted by 3 storage node processes (`corral kv cluster`), read-only, records and threads scaled by 6; routed: the client sends each row to its RG's leader; forwarded: to any node, which forwards it; issue 25's target: routed ≥ 1.30×",
		tables:  []refTable{{heading: kv.HeadingRouting}},
		headline: func(run string, tabs []mdTable) []headlineRow {
			t := findTable(tabs, kv.HeadingRouting)
			if t == nil {
				return nil
			}
			var out []headlineRow
			for _, r := range t.rows {
				if len(r) > 4 {
					out = append(out, headlineRow{"kv routing", r[1] + " ops/s, " + r[0] + " RGs, routed ÷ forwarded", r[4], run})
				}
			}
			return out
		},
	},
	{
		title:   "key-value store over 1, 2 and 4 replica groups (USL)",
		glob:    "kv-groups-*.md",
		command: "corral-bench kv --groups 1,2,4 --workload A,B,C,D,E,F --duration 10s --compaction-sample 0 --out DIR",
		what:    "YCSB A-F on 1, 2 and 4 replica groups of 3 (records and threads scaled with the groups) and etcd with the unscaled load in the same run; the Universal Scalability Law fitted over the group counts",
		tables:  []refTable{{heading: kv.HeadingScaling}},
	},
	{
		title:   "leader crash under a read-only load (ACaZoo Figs. 16-17)",
		glob:    "kv-outage-*.md",
		command: "corral-bench kv-outage --kills 5 --out DIR",
		what:    "SIGKILL of the leader of one replica group of 3 under a read-only Zipf load, the killed node restarted between kills; the outage split into election, configuration-manager propagation and client reconnect; issue 25's target: outage ≤ 300 ms",
		tables:  []refTable{{heading: kvoutage.HeadingOutageMedian}},
		figures: []string{"docs/bench/kv/outage/kv-outage.png"},
	},
}

// kvEtcdRows are the one-RG throughput ratios of a corral ÷ etcd table,
// one row for each corral system (durability), its workloads side by
// side ("A / B / C").
func kvEtcdRows(experiment, run string, tabs []mdTable) []headlineRow {
	t := findTable(tabs, kv.HeadingEtcd)
	if t == nil {
		return nil
	}
	var out []headlineRow
	var workloads, ratios []string
	flush := func(system string) {
		out = append(out, joinedRow(experiment, workloads, " ops/s, "+system+" ÷ etcd", ratios, run)...)
		workloads, ratios = nil, nil
	}
	system := ""
	for _, r := range t.rows {
		if len(r) > 8 && !strings.Contains(r[1], "g=") {
			if r[1] != system {
				flush(system)
				system = r[1]
			}
			workloads, ratios = append(workloads, r[0]), append(ratios, r[4])
		}
	}
	flush(system)
	return out
}

// kvPolicyRows are each leader-change policy's throughput over the fixed
// leader's in sync mode, the target; the async rows stay in the
// section's table.
func kvPolicyRows(run string, tabs []mdTable) []headlineRow {
	t := findTable(tabs, kv.HeadingPolicies)
	if t == nil {
		return nil
	}
	col := slices.Index(t.header, "÷ fixed")
	var policies, ratios []string
	workload := ""
	for _, r := range t.rows {
		if col > 0 && len(r) > col && r[col] != "–" && r[1] == "sync" {
			if workload != "" && r[0] != workload {
				break // one workload's policies in the headline
			}
			workload = r[0]
			policies, ratios = append(policies, r[2]), append(ratios, r[col])
		}
	}
	return joinedRow("kv leader change", policies, " ÷ fixed, "+workload+" ops/s, sync", ratios, run)
}
