package durability

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/stats"
)

// durRow is one row of a results table: a label and, per configuration,
// the cell text ("" when the configuration has no value).
type durRow struct {
	label string
	cell  func(p *DurPhase) string
}

// durTable writes one Markdown table of phase's rows: a column per
// configuration in run order.
func durTable(w io.Writer, rep *Report, phase string, rows []durRow) {
	configs := durConfigs(rep)
	fmt.Fprintf(w, "| %s |", phase)
	for _, c := range configs {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---:|", len(configs)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.label)
		for _, c := range configs {
			text := "—"
			if p := rep.phase(c, phase); p != nil && (p.Err == "" || p.Seconds > 0) {
				if s := r.cell(p); s != "" {
					text = s
				}
			}
			fmt.Fprintf(w, " %s |", text)
		}
		fmt.Fprintln(w)
	}
}

// durConfigs are the configurations of the report in run order.
func durConfigs(rep *Report) []string {
	var out []string
	for _, s := range rep.Servers {
		out = append(out, s.Target.Name)
	}
	return out
}

// phase returns the result of phase against config, or nil.
func (rep *Report) phase(config, phase string) *DurPhase {
	for i := range rep.Phases {
		if p := &rep.Phases[i]; p.Config == config && p.Phase == phase {
			return p
		}
	}
	return nil
}

func durF0(v float64) string { return fmt.Sprintf("%.0f", v) }
func durF1(v float64) string { return fmt.Sprintf("%.1f", v) }
func durMs(us int64) string {
	return fmt.Sprintf("%.2f", float64(us)/1000)
}

// latencyRows are p50, p99 and max of a latency summary.
func latencyRows(what string, lat func(p *DurPhase) *stats.Latency) []durRow {
	cell := func(f func(l *stats.Latency) int64) func(p *DurPhase) string {
		return func(p *DurPhase) string {
			l := lat(p)
			if l == nil || l.Count == 0 {
				return ""
			}
			return durMs(f(l))
		}
	}
	return []durRow{
		{what + " p50 ms", cell(func(l *stats.Latency) int64 { return l.P50 })},
		{what + " p99 ms", cell(func(l *stats.Latency) int64 { return l.P99 })},
		{what + " max ms", cell(func(l *stats.Latency) int64 { return l.Max })},
	}
}

// throughputRows are the mean and the spread of a per-second series.
func throughputRows(unit string) []durRow {
	return []durRow{
		{unit, func(p *DurPhase) string { return durF0(p.OpsPerSec) }},
		{"per-second min – max", func(p *DurPhase) string {
			if p.Series.Seconds == 0 {
				return ""
			}
			return fmt.Sprintf("%.0f – %.0f", p.Series.Min, p.Series.Max)
		}},
		{"per-second stddev", func(p *DurPhase) string {
			if p.Series.Seconds == 0 {
				return ""
			}
			return durF0(p.Series.Stddev)
		}},
	}
}

// cpuPct is the members' CPU over the measured interval in percent of one
// core.
func cpuPct(p *DurPhase) (float64, bool) {
	if p.ServerCPU == nil || p.Seconds <= 0 {
		return 0, false
	}
	return 100 * *p.ServerCPU / p.Seconds, true
}

// otherPct is the machine's busy CPU charged to neither the members nor
// the load generator, in percent of the whole machine.
func otherPct(p *DurPhase, cpus int) (float64, bool) {
	if p.MachineCPU == nil || p.ServerCPU == nil || p.Seconds <= 0 || cpus <= 0 {
		return 0, false
	}
	other := max(0, *p.MachineCPU-*p.ServerCPU-p.LoadgenCPU)
	return 100 * other / (p.Seconds * float64(cpus)), true
}

// conditionRows end every phase's table: how long, how clean, and what
// else used the CPUs. withServer adds the servers' CPU (the CPU phase has
// its own row for it).
func conditionRows(cpus int, withServer bool) []durRow {
	rows := []durRow{
		{"measured s", func(p *DurPhase) string { return fmt.Sprintf("%.1f", p.Seconds) }},
		{"errors", func(p *DurPhase) string { return fmt.Sprintf("%d", p.Errors) }},
		{"load average at start", func(p *DurPhase) string { return p.LoadAvg }},
	}
	if withServer {
		rows = append(rows, durRow{"server CPU % of one core", func(p *DurPhase) string {
			if v, ok := cpuPct(p); ok {
				return durF0(v)
			}
			return ""
		}})
	}
	return append(rows, []durRow{
		{"load generator CPU % of one core", func(p *DurPhase) string {
			if p.Seconds <= 0 {
				return ""
			}
			return durF0(100 * p.LoadgenCPU / p.Seconds)
		}},
		{"other CPU % of the machine", func(p *DurPhase) string {
			if v, ok := otherPct(p, cpus); ok {
				return durF0(v)
			}
			return ""
		}},
	}...)
}

// durRatio is one of the targets: a create throughput ratio.
type durRatio struct {
	Num    string  `json:"numerator"`
	Den    string  `json:"denominator"`
	Ratio  float64 `json:"ratio"`
	Target float64 `json:"target"`
	Met    bool    `json:"met"`
}

// durRatios are the create-throughput ratios the issue sets targets for:
// diskless against ZooKeeper with fsync (at least 4x) and against corral's
// sync mode (at least 1.3x). Only pairs that both ran are given.
func durRatios(rep *Report) []durRatio {
	var out []durRatio
	for _, t := range []struct {
		num, den string
		target   float64
	}{
		{DurCorralDiskless, DurZKForceSync, 4},
		{DurCorralDiskless, DurCorralSync, 1.3},
	} {
		n, d := rep.phase(t.num, DurPhaseCreate), rep.phase(t.den, DurPhaseCreate)
		if n == nil || d == nil || d.OpsPerSec <= 0 || n.Seconds <= 0 {
			continue
		}
		r := n.OpsPerSec / d.OpsPerSec
		out = append(out, durRatio{Num: t.num, Den: t.den, Ratio: r, Target: t.target, Met: r >= t.target})
	}
	return out
}

// WriteDurabilityMarkdown writes the report: the command and conditions,
// a table per phase, the targets, the plots and the per-second
// series.
func WriteDurabilityMarkdown(w io.Writer, rep *Report) {
	c, e := rep.Config, rep.Env
	fmt.Fprintf(w, "## corral bench durability\n\n")
	if rep.CommandLine != "" {
		fmt.Fprintf(w, "```\n%s\n```\n\n", rep.CommandLine)
	}
	fmt.Fprintf(w, "- started: %s", rep.Start.UTC().Format(time.RFC3339))
	if !rep.End.IsZero() {
		fmt.Fprintf(w, ", took %v", rep.End.Sub(rep.Start).Round(time.Second))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	if rep.LoadAvgEnd != "" {
		fmt.Fprintf(w, ", at end %s", rep.LoadAvgEnd)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- each configuration: a fresh %d-server ensemble on 127.0.0.1 (server.N=127.0.0.1:quorum:election;127.0.0.1:client, "+
		"one dataDir with myid per server under %s), started, measured and stopped by PID (SIGTERM, SIGKILL after %v) before the next; "+
		"zoo.cfg: %s, snapCount default, globalOutstandingLimit=%d, maxClientCnxns=0, admin.enableServer=false, "+
		"4lw.commands.whitelist=*, and the durability lines below\n",
		c.Servers, e.WorkDir, launch.StopTimeout, c.Timing.OrDefault(), c.GlobalOutstandingLimit)
	for _, s := range rep.Servers {
		fmt.Fprintf(w, "- %s: `%s`", s.Target.Name, strings.Join(s.ZooCfg, " "))
		s.Info.WriteDetails(w)
	}
	// Without a time-series phase (--figs 5.3,5.4) only the tree-size part is written.
	timed := c.TimePhases() || len(rep.Phases) > 0
	if timed {
		fmt.Fprintf(w, "- clients: synchronous (one request outstanding, the next sent when the reply is in), each its own session, "+
			"spread round-robin over the servers, followers first and the leader last; each phase opens its sessions, "+
			"runs %v unmeasured and then its measured interval, and closes them\n", c.Warmup)
		fmt.Fprintf(w, "- phases in the order run against each configuration (the fixed-rate and queue phases first, on a nearly empty tree, "+
			"so that every configuration serves them from the same state):\n")
		fmt.Fprintf(w, "  1. cpu (Fig. 5.5): %d clients create %d-byte nodes at %.0f/s together (paced from the start of the warm-up; "+
			"a create due while every client is busy is dropped and counted as missed), %v; server CPU is the members' "+
			"utime+stime from /proc/PID/stat, summed, in percent of one core\n", c.Clients, c.ValueSize, c.CPURate, c.CPUDuration)
		fmt.Fprintf(w, "  2. queue (Fig. 5.6): ZooKeeper's queue recipe, %d producer(s) creating persistent sequential %d-byte nodes "+
			"under %s (each stamped with its send time) and %d consumer(s) that list the children, sort them and take each in order "+
			"with getData and delete (NoNode: another consumer was first); producers wait while %d messages are unconsumed; %v. "+
			"Throughput is messages consumed; end-to-end latency runs from the create being sent to the delete's reply and includes "+
			"the time in the queue\n",
			c.QueueProducers, max(c.QueueValueSize, durMsgStamp), durQueueRoot, c.QueueConsumers, c.QueueMaxBacklog, c.QueueDuration)
		fmt.Fprintf(w, "  3. create (Fig. 5.1): %d clients create %d-byte persistent nodes as fast as they are answered, %v\n",
			c.Clients, c.ValueSize, c.CreateDuration)
		fmt.Fprintf(w, "  4. get (Fig. 5.2): %d clients getData the nodes the create phase made, as fast as they are answered, %v\n\n",
			c.Clients, c.GetDuration)

		fmt.Fprintf(w, "### Results\n\n")
		sections := []struct {
			phase, title string
			rows         []durRow
		}{
			{DurPhaseCreate, "Create throughput (Fig. 5.1)", append(throughputRows("creates/s"),
				latencyRows("create", func(p *DurPhase) *stats.Latency { return &p.Latency })...)},
			{DurPhaseGet, "getData throughput (Fig. 5.2)", append(throughputRows("getData/s"),
				latencyRows("getData", func(p *DurPhase) *stats.Latency { return &p.Latency })...)},
			{DurPhaseCPU, fmt.Sprintf("Server CPU at %.0f creates/s (Fig. 5.5)", c.CPURate), append([]durRow{
				{"creates/s achieved", func(p *DurPhase) string { return durF0(p.OpsPerSec) }},
				{"missed (servers behind)", func(p *DurPhase) string { return fmt.Sprintf("%d", p.Missed) }},
				{"server CPU % of one core", func(p *DurPhase) string {
					if v, ok := cpuPct(p); ok {
						return durF1(v)
					}
					return ""
				}},
				{"server CPU µs per create", func(p *DurPhase) string {
					if p.ServerCPU == nil || p.Ops == 0 {
						return ""
					}
					return durF0(*p.ServerCPU / float64(p.Ops) * 1e6)
				}},
				{"server CPU % by member", func(p *DurPhase) string {
					var parts []string
					for _, m := range p.ServerCPUEach {
						role := m.Server[strings.LastIndexByte(m.Server, ' ')+1:]
						parts = append(parts, fmt.Sprintf("%.0f %s", 100*m.CPU/max(p.Seconds, 1e-9), role[:1]))
					}
					return strings.Join(parts, ", ")
				}},
			}, latencyRows("create", func(p *DurPhase) *stats.Latency { return &p.Latency })...)},
			{DurPhaseQueue, "Message queue (Fig. 5.6)", append([]durRow{
				{"messages consumed/s", func(p *DurPhase) string { return durF0(p.OpsPerSec) }},
				{"messages produced/s", func(p *DurPhase) string { return durF0(p.ProducedPerSec) }},
				{"per-second consumed min – max", func(p *DurPhase) string {
					if p.Series.Seconds == 0 {
						return ""
					}
					return fmt.Sprintf("%.0f – %.0f", p.Series.Min, p.Series.Max)
				}},
				{"lost races", func(p *DurPhase) string { return fmt.Sprintf("%d", p.LostRaces) }},
				{"left in queue at end", func(p *DurPhase) string { return fmt.Sprintf("%d", p.LeftInQueue) }},
			}, append(latencyRows("end-to-end", func(p *DurPhase) *stats.Latency { return p.EndToEnd }),
				latencyRows("produce (create)", func(p *DurPhase) *stats.Latency { return &p.Latency })...)...)},
		}
		for _, s := range sections {
			if !rep.hasPhase(s.phase) {
				continue
			}
			fmt.Fprintf(w, "#### %s\n\n", s.title)
			durTable(w, rep, s.phase, append(s.rows, conditionRows(e.CPUs, s.phase != DurPhaseCPU)...))
			fmt.Fprintln(w)
		}
		if rep.hasPhase(DurPhaseCPU) {
			fmt.Fprint(w, "In the CPU table's \"by member\" row, l is the leader and f a follower. ")
		}
		fmt.Fprintf(w, "Latencies are of successful requests, from sending the request to reading its reply; "+
			"throughput counts the replies that arrived in the measured interval. Other CPU is the machine's busy time "+
			"(/proc/stat) less the servers' and the load generator's: other processes, and kernel threads (journal "+
			"commits, block I/O) that may be working for a server.")
		worst := 0.0
		for i := range rep.Phases {
			if v, ok := otherPct(&rep.Phases[i], e.CPUs); ok {
				worst = max(worst, v)
			}
		}
		if worst > 5 {
			fmt.Fprintf(w, " WARNING: up to %.0f%% of the machine was busy outside the servers and the load generator in a phase; "+
				"where that was other processes, the numbers are disturbed.", worst)
		}
		fmt.Fprintf(w, "\n\n")
	}

	if ratios := durRatios(rep); len(ratios) > 0 {
		fmt.Fprintf(w, "### Create throughput targets (reported, not asserted)\n\n")
		fmt.Fprintf(w, "| ratio of creates/s | measured | target | met |\n|---|---:|---:|---|\n")
		for _, r := range ratios {
			met := "no"
			if r.Met {
				met = "yes"
			}
			fmt.Fprintf(w, "| %s ÷ %s | %.2fx | ≥ %.1fx | %s |\n", r.Num, r.Den, r.Ratio, r.Target, met)
		}
		fmt.Fprintln(w)
	}

	writeDurTreeMarkdown(w, rep)

	if len(rep.Plots) > 0 {
		fmt.Fprintf(w, "### Plots\n\n")
		for _, p := range rep.Plots {
			fmt.Fprintf(w, "![%s](%s)\n\n", strings.TrimSuffix(p, ".png"), p)
		}
	}

	if timed {
		fmt.Fprintf(w, "### Per-second series\n\n")
		fmt.Fprintf(w, "Second k counts what completed in [k-1 s, k s) of the measured interval; CPU is the members' summed CPU in that second.\n\n")
		for _, s := range []struct {
			phase, title string
			values       func(p *DurPhase) []string
		}{
			{DurPhaseCreate, "creates/s", func(p *DurPhase) []string { return intCells(p.PerSecond, int(p.Seconds)) }},
			{DurPhaseGet, "getData/s", func(p *DurPhase) []string { return intCells(p.PerSecond, int(p.Seconds)) }},
			{DurPhaseQueue, "messages consumed/s", func(p *DurPhase) []string { return intCells(p.PerSecond, int(p.Seconds)) }},
			{DurPhaseCPU, "server CPU % at the fixed rate", func(p *DurPhase) []string {
				var out []string
				for _, v := range p.ServerCPUPerSecond {
					out = append(out, durF0(v))
				}
				return out
			}},
		} {
			if rep.hasPhase(s.phase) {
				seriesTable(w, rep, s.phase, s.title, s.values)
			}
		}
	}

	for _, p := range rep.Phases {
		if p.Err != "" {
			fmt.Fprintf(w, "- %s %s FAILED: %s\n", p.Config, p.Phase, p.Err)
		}
	}
	for _, p := range rep.Phases {
		if p.Errors > 0 {
			fmt.Fprintf(w, "- %s %s: %d error replies, first %s\n", p.Config, p.Phase, p.Errors, p.FirstError)
		}
	}
}

func (rep *Report) hasPhase(phase string) bool {
	for _, p := range rep.Phases {
		if p.Phase == phase {
			return true
		}
	}
	return false
}

// intCells formats the first n values.
func intCells(v []int64, n int) []string {
	var out []string
	for _, x := range v[:min(n, len(v))] {
		out = append(out, fmt.Sprintf("%d", x))
	}
	return out
}

// seriesTable writes a table with a row per second and a column per
// configuration.
func seriesTable(w io.Writer, rep *Report, phase, title string, values func(p *DurPhase) []string) {
	configs := durConfigs(rep)
	cols := make([][]string, len(configs))
	rows := 0
	for i, c := range configs {
		if p := rep.phase(c, phase); p != nil {
			cols[i] = values(p)
			rows = max(rows, len(cols[i]))
		}
	}
	if rows == 0 {
		return
	}
	fmt.Fprintf(w, "%s (%s):\n\n| s |", phase, title)
	for _, c := range configs {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, "\n|---:|%s\n", strings.Repeat("---:|", len(configs)))
	for k := range rows {
		fmt.Fprintf(w, "| %d |", k+1)
		for i := range configs {
			cell := "—"
			if k < len(cols[i]) {
				cell = cols[i][k]
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// durRunRecord is the first JSON line: how the run was made.
type durRunRecord struct {
	Record         string            `json:"record"`
	Start          string            `json:"start"`
	End            string            `json:"end,omitempty"`
	Command        string            `json:"command,omitempty"`
	CPUs           int               `json:"cpus"`
	LoadAvgStart   string            `json:"load_avg_start,omitempty"`
	LoadAvgEnd     string            `json:"load_avg_end,omitempty"`
	Servers        int               `json:"servers"`
	Timing         launch.Timing     `json:"timing"`
	Clients        int               `json:"clients"`
	ValueSize      int               `json:"value_bytes"`
	WarmupS        float64           `json:"warmup_s"`
	CreateS        float64           `json:"create_s"`
	GetS           float64           `json:"get_s"`
	CPURate        float64           `json:"cpu_rate"`
	CPUS           float64           `json:"cpu_s"`
	QueueS         float64           `json:"queue_s"`
	QueueProducers int               `json:"queue_producers"`
	QueueConsumers int               `json:"queue_consumers"`
	QueueValueSize int               `json:"queue_value_bytes"`
	QueueBacklog   int64             `json:"queue_max_backlog"`
	Configs        []durConfigRecord `json:"configs"`
	Ratios         []durRatio        `json:"create_ratios,omitempty"`
	SnapCounts     []int64           `json:"snap_counts,omitempty"`
	RestoreCounts  []int64           `json:"restore_counts,omitempty"`
	RestoreRatios  []durRestoreRatio `json:"restore_ratios,omitempty"`
	Plots          []string          `json:"plots,omitempty"`
}

type durConfigRecord struct {
	Name    string             `json:"name"`
	Server  string             `json:"server"`
	ZooCfg  []string           `json:"zoo_cfg"`
	Argv    []string           `json:"argv,omitempty"`
	Version string             `json:"version,omitempty"`
	Leader  string             `json:"leader,omitempty"`
	After   string             `json:"leader_after,omitempty"`
	Members []bench.MemberInfo `json:"members,omitempty"`
	Err     string             `json:"error,omitempty"`
}

type durPhaseRecord struct {
	Record string `json:"record"`
	DurPhase
}

// WriteDurabilityJSONLines writes a "run" line (conditions, configurations,
// the create ratios) and a "phase" line per phase result, then the
// tree-size figures' lines (writeDurTreeJSONLines).
func WriteDurabilityJSONLines(w io.Writer, rep *Report) error {
	c := rep.Config
	run := durRunRecord{
		Record: "run", Start: rep.Start.UTC().Format(time.RFC3339), Command: rep.CommandLine, CPUs: rep.Env.CPUs,
		LoadAvgStart: rep.Env.LoadAvg, LoadAvgEnd: rep.LoadAvgEnd, Servers: c.Servers, Timing: c.Timing,
		Clients: c.Clients, ValueSize: c.ValueSize, WarmupS: c.Warmup.Seconds(),
		CreateS: c.CreateDuration.Seconds(), GetS: c.GetDuration.Seconds(),
		CPURate: c.CPURate, CPUS: c.CPUDuration.Seconds(), QueueS: c.QueueDuration.Seconds(),
		QueueProducers: c.QueueProducers, QueueConsumers: c.QueueConsumers, QueueValueSize: c.QueueValueSize,
		QueueBacklog: c.QueueMaxBacklog, Ratios: durRatios(rep), Plots: rep.Plots,
		SnapCounts: c.SnapCounts, RestoreCounts: c.RestoreCounts, RestoreRatios: durRestoreRatios(rep),
	}
	if !rep.End.IsZero() {
		run.End = rep.End.UTC().Format(time.RFC3339)
	}
	for _, s := range rep.Servers {
		run.Configs = append(run.Configs, durConfigRecord{
			Name: s.Target.Name, Server: s.Target.Server, ZooCfg: s.ZooCfg, Argv: s.Info.Argv, Version: s.Info.Version,
			Leader: s.Info.Leader, After: s.Info.LeaderAfter, Members: s.Info.Members, Err: s.Info.Err,
		})
	}
	enc := json.NewEncoder(w)
	if err := enc.Encode(run); err != nil {
		return err
	}
	for _, p := range rep.Phases {
		if err := enc.Encode(durPhaseRecord{Record: "phase", DurPhase: p}); err != nil {
			return err
		}
	}
	return writeDurTreeJSONLines(enc, rep)
}

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteDurabilityMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteDurabilityJSONLines(w, r) }
