package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-db/corral/bench/compare"
	"github.com/corral-db/corral/bench/memory"
)

// The reference (BENCHMARKS.md) is generated from the stored reports of
// the runs (docs/bench/runs/*.md) by `corral-bench report-md`: for each
// experiment the newest stored run of the command that defines it, the
// report's main table, the command, and a link to the whole report; the
// headline ratios against ZooKeeper at the top. Nothing in it is typed by
// hand but the method and the list below.

// refExperiment is one section of the reference.
type refExperiment struct {
	title string
	// glob picks the experiment's stored runs in the runs directory; the
	// newest (by name: the names end in their start time) is shown.
	glob    string
	command string
	what    string
	// tables are the report's tables shown, by the heading they follow
	// (the first table after it); rows, if set, keeps only the rows it
	// accepts (cells without the outer pipes).
	tables []refTable
	// headline, if set, adds rows to the headline table from the report.
	headline func(run string, tabs []mdTable) []headlineRow
	// figures are the experiment's stored figures, relative to the
	// repository's root (the reports link theirs by bare file name).
	figures []string
}

type refTable struct {
	heading string
	rows    func(cells []string) bool
}

type headlineRow struct{ experiment, measure, ratio, run string }

// refExperiments is the reference's content, in order.
var refExperiments = []refExperiment{
	{
		title:   "compare: standalone",
		glob:    "compare-ops-repeat3-*.md",
		command: "corral-bench compare --targets corral,corral+ops,zookeeper --repeat 3 --phases seqcreate/create/set,get --keys 200000 --out DIR",
		what:    "one server each; 32 connections × 32 requests in flight of 1 KiB (seqcreate: one request at a time), each target started afresh per group of phases, three interleaved runs; medians. corral+ops is corral with the AdminServer, its web console and the Prometheus endpoint on and nobody polling them",
		tables:  []refTable{{heading: "## corral bench compare", rows: compareRow}},
		headline: func(run string, tabs []mdTable) []headlineRow {
			return ratioRows("compare, standalone", run, tabs)
		},
		figures: latencyFigures("docs/bench/compare"),
	},
	{
		title:   "compare: 3-server ensembles",
		glob:    "compare-3n-ops-repeat2-*.md",
		command: "corral-bench compare --servers 3 --targets corral,corral+ops,zookeeper --repeat 2 --phases create/set,get/seqcreate --keys 200000 --out DIR",
		what:    "as standalone, with 3-server ensembles on loopback and two interleaved runs",
		tables:  []refTable{{heading: "## corral bench compare", rows: compareRow}},
		headline: func(run string, tabs []mdTable) []headlineRow {
			return ratioRows("compare, 3 servers", run, tabs)
		},
		figures: latencyFigures("docs/bench/compare-3n"),
	},
	gozkExperiment("standalone", "standalone", "compare-gozk-2*.md", "", "the phases of compare driven by an ordinary client, "+
		"github.com/go-zookeeper/zk (16 sessions, each shared by 32 goroutines with one request outstanding), one server each, "+
		"one run; its CPU is the bench process's (loadgen CPU). The bound is what the machine's CPUs allow through this client: "+
		"CPUs ÷ (server + client CPU per op)"),
	gozkExperiment("3-server ensembles", "3 servers", "compare-3n-gozk-2*.md", "--servers 3 ",
		"as standalone, with 3-server ensembles on loopback"),
	{
		title:   "durability modes (the diskless thesis, Figs. 5.1-5.6)",
		glob:    "durability-2*.md",
		command: "corral-bench durability --create-duration 10s --get-duration 5s --cpu-duration 5s --queue-duration 5s --out DIR",
		what:    "3-server ensembles of corral sync, async and diskless and ZooKeeper with and without forceSync",
		tables: []refTable{
			{heading: "#### Create throughput (Fig. 5.1)", rows: firstCellIn("creates/s", "create p99 ms", "server CPU % of one core")},
			{heading: "### Create throughput targets (reported, not asserted)"},
			{heading: "#### Restoration after a leader kill (Fig. 5.4): kill → first write accepted, ms"},
		},
		headline: func(run string, tabs []mdTable) []headlineRow {
			t := findTable(tabs, "### Create throughput targets (reported, not asserted)")
			if t == nil {
				return nil
			}
			var out []headlineRow
			for _, r := range t.rows {
				if len(r) >= 2 {
					out = append(out, headlineRow{"durability", r[0], r[1], run})
				}
			}
			return out
		},
		figures: []string{
			"docs/bench/durability/create.png", "docs/bench/durability/get.png", "docs/bench/durability/cpu.png",
			"docs/bench/durability/queue.png", "docs/bench/durability/snapshot.png", "docs/bench/durability/restore.png",
		},
	},
	{
		title:   "failover",
		glob:    "failover-corral-*.md",
		command: "corral-bench failover --target corral --trials 20 --out DIR",
		what:    "the write gap seen by one client when the leader of a 3-server ensemble is killed",
		tables:  []refTable{{heading: "## corral bench failover"}},
	},
	{
		title:   "resident memory per member (issue 27)",
		glob:    "memory-*.md",
		command: "corral-bench memory --trees 1000000x100:" + memoryHeap1M + ",100000x1024:" + memoryHeap1K + " --settle 30s --load-limit 15m --out DIR",
		what: "3-server ensembles, sync; each tree created afresh by 8 connections × 32 creates in flight, then each member's VmRSS " +
			"read 30 s after the last create (an idle member; peak, under the load, in the full report); ZooKeeper at the smallest -Xmx " +
			"tried at which it completed the load every time (1M × 100 B: 384m and 448m did not, 512m in 2 runs of 3; 100k × 1 KiB: 128m did not); " +
			"raw is paths + data (mntr's approximate_data_size)",
		tables: []refTable{{heading: memory.HeadingRatios}},
	},
	{
		title:   "throughput against the read ratio (ZooKeeper paper, Fig. 5 and Table 1)",
		glob:    "readratio-*.md",
		command: "corral-bench readratio --out DIR",
		what:    "3 and 5 servers, 30 connections × 32 in flight, 1 KiB values",
		tables:  []refTable{{heading: "### Throughput (ops/s)", rows: firstCellIn("0", "80", "100")}},
		figures: []string{"docs/bench/experiments/readratio.png"},
	},
	{
		title:   "failures (ZooKeeper paper, Fig. 8)",
		glob:    "failures-*.md",
		command: "corral-bench failures --out DIR",
		what:    "5 servers under a 70% read load while members are killed and restarted",
		tables:  []refTable{{heading: "### Totals over the measured interval"}},
		figures: []string{"docs/bench/experiments/failures.png"},
	},
	{
		title:   "YCSB",
		glob:    "ycsb-*.md",
		command: "corral-bench ycsb --out DIR",
		what:    "workloads A-F and S over 1 KB records, 3 servers, 16 threads",
		tables:  []refTable{{heading: "### corral / zookeeper", rows: func(c []string) bool { return len(c) > 1 && c[1] == "all" }}},
	},
	{
		title:   "scale (Universal Scalability Law)",
		glob:    "scale-*.md",
		command: "corral-bench scale --out DIR",
		what:    "N = 1, 2, 3, 4, 6, 8 servers with 2N clients, getData",
		tables:  []refTable{{heading: "### USL coefficients side by side"}},
		figures: []string{"docs/bench/experiments/usl.png"},
	},
	{
		title:   "2^k r factorial",
		glob:    "factorial-*.md",
		command: "corral-bench factorial --out DIR",
		what:    "2^3 × 2 over servers, value size and durability",
		tables:  []refTable{{heading: "### Effects and allocation of variation", rows: factorialRow}},
	},
}

// memoryHeap1M and memoryHeap1K are ZooKeeper's -Xmx in the stored
// memory run: the smallest tried at which it completed each load.
const (
	memoryHeap1M = "576m"
	memoryHeap1K = "160m"
)

// latencyFigures are compare's latency percentile plots stored in dir.
func latencyFigures(dir string) []string {
	var out []string
	for _, p := range []string{"create", "set", "get", "seqcreate"} {
		out = append(out, dir+"/latency-"+p+".png")
	}
	return out
}

// compareRow keeps the throughput, p99 and CPU rows of a compare table
// (the report has the p50s and the error counts too).
func compareRow(cells []string) bool {
	return len(cells) > 1 && slices.Contains([]string{"ops/s", "p99 ms", "server CPU µs/op"}, cells[1])
}

// gozkExperiment is a compare driven by go-zookeeper (issue 27): its
// results and the CPU bound's two tables, and a headline row. setup
// names it in the title, short in the headline; flags go before
// --targets.
func gozkExperiment(setup, short, glob, flags, what string) refExperiment {
	label := "compare via go-zookeeper, " + short
	return refExperiment{
		title: "compare through go-zookeeper: " + setup + " (issue 27)",
		glob:  glob,
		command: "corral-bench compare --client gozk " + flags +
			"--targets corral,zookeeper --phases create/set,get --keys 200000 --conns 16 --inflight 32 --out DIR",
		what: what,
		tables: []refTable{
			{heading: "## corral bench compare", rows: gozkRow},
			{heading: compare.HeadingCPUBound},
			{heading: compare.HeadingBoundRatio},
		},
		headline: func(run string, tabs []mdTable) []headlineRow { return ratioRows(label, run, tabs) },
	}
}

// gozkRow is compareRow with the client's CPU and the errors.
func gozkRow(cells []string) bool {
	return compareRow(cells) || len(cells) > 1 && slices.Contains([]string{"loadgen CPU µs/op", "errors"}, cells[1])
}

// firstCellIn keeps the rows whose first cell is one of names.
func firstCellIn(names ...string) func(cells []string) bool {
	return func(cells []string) bool { return len(cells) > 0 && slices.Contains(names, cells[0]) }
}

// factorialRow keeps the mean, the significant effects and the totals of
// the allocation of variation.
func factorialRow(cells []string) bool {
	return len(cells) > 4 && (cells[4] == "yes" || slices.Contains([]string{"I", "error", "total"}, cells[0]))
}

// ratioRows are the ops/s ratios of corral over ZooKeeper in a compare
// report. corral+ops over corral (the operability endpoints on ÷ off)
// stays in the section's table.
func ratioRows(experiment, run string, tabs []mdTable) []headlineRow {
	t := findTable(tabs, "## corral bench compare")
	if t == nil {
		return nil
	}
	col := slices.IndexFunc(t.header, func(h string) bool { return strings.HasPrefix(h, "corral/zookeeper") })
	var phases, ratios []string
	for _, r := range t.rows {
		if col >= 0 && len(r) > col && len(r) > 1 && r[1] == "ops/s" {
			phases, ratios = append(phases, r[0]), append(ratios, r[col])
		}
	}
	return joinedRow(experiment, phases, " ops/s", ratios, run)
}

// joinedRow is one headline row for several measures of one run, side
// by side ("create / set ops/s", "2.1x / 2.4x"); none when there are no
// measures.
func joinedRow(experiment string, names []string, unit string, ratios []string, run string) []headlineRow {
	if len(names) == 0 {
		return nil
	}
	return []headlineRow{{experiment, strings.Join(names, " / ") + unit, strings.Join(ratios, " / "), run}}
}

// mdTable is one Markdown table of a report and the heading above it.
type mdTable struct {
	heading string
	lines   []string // as written, header and separator included
	header  []string
	rows    [][]string
}

// parseTables reads the tables of a Markdown document.
func parseTables(md string) []mdTable {
	var out []mdTable
	heading := ""
	var cur *mdTable
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") {
			if cur == nil {
				out = append(out, mdTable{heading: heading})
				cur = &out[len(out)-1]
			}
			cur.lines = append(cur.lines, line)
			cells := splitRow(line)
			switch len(cur.lines) {
			case 1:
				cur.header = cells
			case 2: // separator
			default:
				cur.rows = append(cur.rows, cells)
			}
			continue
		}
		cur = nil
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(line)
		}
	}
	return out
}

func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// findTable is the first table after heading.
func findTable(tabs []mdTable, heading string) *mdTable {
	for i := range tabs {
		if tabs[i].heading == heading {
			return &tabs[i]
		}
	}
	return nil
}

// newestRun is the last of the runs matching glob, by name.
func newestRun(fsys []string, glob string) (string, bool) {
	var match []string
	for _, name := range fsys {
		if ok, _ := path.Match(glob, name); ok {
			match = append(match, name)
		}
	}
	if len(match) == 0 {
		return "", false
	}
	slices.Sort(match)
	return match[len(match)-1], true
}

// reportStart is the "started" line of a report, or "".
func reportStart(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if v, ok := strings.CutPrefix(line, "- started: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

const refMethod = `## Method

- **One machine, one invocation.** Every table comes from one command
  that starts corral and Apache ZooKeeper 3.9.3 in turn on 127.0.0.1,
  from the same generated zoo.cfg, and drives both with the same load
  generator (the ZooKeeper client protocol, pipelined). Ratios compare
  figures of the same run, never of different runs.
- **The machine**: 2 cores shared by the servers and the load
  generator; each report states the load average at its start, the
  load generator's CPU share, and the CPU busy outside both ("other
  CPU s"), which marks a disturbed run.
- **Noise**: targets start afresh for each group of phases; with
  --repeat N the runs are interleaved (corral, ZooKeeper, corral, ...)
  and the tables show medians with min–max, the relative standard
  deviation and the paired runs' ratios.
- **The key-value store** (the kv sections) is measured the same way
  against etcd (Debian's etcd-server, in the same run), or against
  itself (leader policies, routing). To model the ACaZoo paper's
  separate machines each member of either runs with GOMAXPROCS=1 and
  its own CPU: a cgroup v2 cpu.max of one CPU where the controller is
  delegated, else taskset to one CPU, members spread over the CPUs in
  turn (on 2 cores two of three members share one, and the load
  generator runs beside them); each report states what was applied per
  member.
- **Builds**: make build (bin/corral, bin/corral-bench) and
  make zookeeper (the jars); each report names the server binaries.
- **This file** is generated from the stored reports in
  docs/bench/runs/ by the command in its first line; long tables keep
  the rows a reader needs, each section's full report has them all;
  the history of what was tried is in the commit messages and
  docs/bench/notes/.
`

// writeReference writes the reference from the reports in runsDir,
// linking them as linkDir/<name>.
func writeReference(w io.Writer, runsDir, linkDir string) error {
	entries, err := os.ReadDir(runsDir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			names = append(names, e.Name())
		}
	}
	type section struct {
		exp  refExperiment
		run  string
		md   string
		tabs []mdTable
	}
	var sections []section
	var headline []headlineRow
	for _, exp := range slices.Concat(refExperiments, kvRefExperiments) {
		run, ok := newestRun(names, exp.glob)
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(runsDir, run))
		if err != nil {
			return err
		}
		s := section{exp: exp, run: run, md: string(b), tabs: parseTables(string(b))}
		sections = append(sections, s)
		if exp.headline != nil {
			headline = append(headline, exp.headline(run, s.tabs)...)
		}
	}
	if len(sections) == 0 {
		return fmt.Errorf("no stored run in %s matches an experiment", runsDir)
	}
	link := func(run string) string { return path.Join(linkDir, run) }

	fmt.Fprintf(w, "# Benchmarks\n\n")
	fmt.Fprintf(w, "<!-- Generated by `go run ./cmd/corral-bench report-md --runs %s --out BENCHMARKS.md`; edit bench/command/reference.go, not this file. -->\n\n", linkDir)
	fmt.Fprintf(w, "corral against Apache ZooKeeper 3.9.3 (and its key-value store against\n")
	fmt.Fprintf(w, "etcd) on one 2-core machine, each experiment's newest stored run.\n")
	fmt.Fprintf(w, "corral ÷ ZooKeeper unless the measure says otherwise, higher is better\n")
	fmt.Fprintf(w, "for throughput:\n\n")
	fmt.Fprintf(w, "| experiment | measure | ratio | run |\n|---|---|---:|---|\n")
	for _, h := range headline {
		fmt.Fprintf(w, "| %s | %s | %s | [%s](%s) |\n", h.experiment, h.measure, h.ratio, strings.TrimSuffix(h.run, ".md"), link(h.run))
	}
	fmt.Fprintf(w, "\n%s", refMethod)
	for _, s := range sections {
		fmt.Fprintf(w, "\n## %s\n\n", s.exp.title)
		what := s.exp.what
		what = strings.ToUpper(what[:1]) + what[1:]
		fmt.Fprintf(w, "%s. Run started %s; [full report](%s).\n\n", what, reportStart(s.md), link(s.run))
		fmt.Fprintf(w, "```sh\n%s\n```\n", s.exp.command)
		for _, sel := range s.exp.tables {
			t := findTable(s.tabs, sel.heading)
			if t == nil {
				return fmt.Errorf("%s: no table after %q", s.run, sel.heading)
			}
			fmt.Fprintln(w)
			if h := strings.TrimLeft(sel.heading, "# "); !strings.HasPrefix(h, "corral bench") {
				fmt.Fprintf(w, "%s:\n\n", h)
			}
			fmt.Fprintln(w, t.lines[0])
			fmt.Fprintln(w, t.lines[1])
			for i, r := range t.rows {
				if sel.rows == nil || sel.rows(r) {
					fmt.Fprintln(w, t.lines[2+i])
				}
			}
		}
		if len(s.exp.figures) > 0 {
			fmt.Fprintf(w, "\nFigures (the last stored; `git log` on a figure names its run):")
			for _, f := range s.exp.figures {
				fmt.Fprintf(w, " [%s](%s)", strings.TrimSuffix(path.Base(f), ".png"), f)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// referenceCommand runs `corral-bench report-md`.
func referenceCommand(args []string, env CommandEnv) int {
	fs := flag.NewFlagSet("report-md", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	runs := fs.String("runs", "docs/bench/runs", "directory of the stored run reports (linked relative to the output file's directory as given)")
	out := fs.String("out", "", "file to write (default: stdout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "corral bench report-md: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var b strings.Builder
	if err := writeReference(&b, *runs, filepath.ToSlash(*runs)); err != nil {
		fmt.Fprintf(env.Stderr, "corral bench report-md: %v\n", err)
		return 1
	}
	if *out == "" {
		fmt.Fprint(env.Stdout, b.String())
		return 0
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "corral bench report-md: %v\n", err)
		return 1
	}
	return 0
}
