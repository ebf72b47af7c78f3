package command

import (
	"slices"
	"strings"
)

// The replicated logs' section of the reference (BENCHMARKS.md), kept in
// its own file: `corral bench rlog`'s newest stored run
// (docs/bench/runs/rlog-*.md), its targets, Fig. 5.1 and Fig. 5.4
// tables, and corral ÷ ZooKeeper in the headline (ZooKeeper's own table
// stays in the run's report; the targets table has the ratio).

func init() { refExperiments = append(refExperiments, rlogReference()) }

// rlogTargetsHeading is the heading of the report's targets table.
const rlogTargetsHeading = "## Targets (issue 24)"

func rlogReference() refExperiment {
	return refExperiment{
		title:   "replicated logs (ZKRL)",
		glob:    "rlog-*.md",
		command: rlogReferenceCommand,
		what: "a 3-member corral ensemble with rlog.root, appends through the gRPC API in sync mode; " +
			"the disk (write + fdatasync) and loopback anchors measured in the same run, the ceiling disk ÷ 3; " +
			"the ZKRL thesis's Figs. 5.1-5.4 and §5.1.2, and ZooKeeper 3.9.3 storing the same 64 KiB payloads as sequential znodes; " +
			"run on a machine whose memory has been used once since boot (on a VM whose host backs memory on first touch, " +
			"a data log growing into never-used memory costs several times the CPU: docs/design/rlog.md)",
		tables: []refTable{
			{heading: rlogTargetsHeading},
			{heading: "## Fig. 5.1: throughput vs append size", rows: rlogFig51Row},
			{heading: "## Fig. 5.4: quorum size and group commit"},
		},
		headline: rlogHeadline,
		figures: []string{
			"docs/bench/rlog/rlog-throughput.png", "docs/bench/rlog/rlog-appends.png",
			"docs/bench/rlog/rlog-latency.png", "docs/bench/rlog/rlog-quorum.png",
		},
	}
}

// rlogReferenceCommand is the run the section shows: well under 15
// minutes on a 2-core machine.
const rlogReferenceCommand = "corral-bench rlog --warmup 2s --duration 8s --grow-bytes 8589934592 --out DIR"

// rlogHeadline is the targets table's corral ÷ ZooKeeper row.
func rlogHeadline(run string, tabs []mdTable) []headlineRow {
	t := findTable(tabs, rlogTargetsHeading)
	if t == nil {
		return nil
	}
	for _, r := range t.rows {
		if len(r) >= 3 && strings.Contains(r[0], "ZooKeeper") && r[2] != "not measured" {
			return []headlineRow{{"replicated logs", "64 KiB appends, MB/s (3 members, sync)", r[2], run}}
		}
	}
	return nil
}

// rlogFig51Row keeps the smallest, the 64 KiB and the largest append
// sizes of Fig. 5.1 (the report has every size).
func rlogFig51Row(cells []string) bool {
	return len(cells) > 4 && slices.Contains([]string{"1 KiB", "64 KiB", "512 KiB"}, cells[4])
}
