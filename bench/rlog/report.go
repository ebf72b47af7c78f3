package rlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is a run's result.
type Report struct {
	Config           Summary     `json:"config"`
	Started          time.Time   `json:"started"`
	Finished         time.Time   `json:"finished"`
	Anchors          *Anchors    `json:"anchors,omitempty"`
	Setups           []SetupInfo `json:"setups"`
	Points           []Point     `json:"points"`
	Growth           *Growth     `json:"growth,omitempty"`
	ZooKeeperVersion string      `json:"zookeeper_version,omitempty"`
	Warnings         []string    `json:"warnings,omitempty"`
	// Plots are the PNG files written beside report.md.
	Plots []string `json:"plots,omitempty"`
}

// SetupInfo is one launched ensemble and member 1's zoo.cfg.
type SetupInfo struct {
	Name        string `json:"name"`
	Members     int    `json:"members"`
	Durability  string `json:"durability"`
	GroupCommit string `json:"group_commit"`
	ZooCfg      string `json:"-"`
}

// Summary is the configuration as reported.
type Summary struct {
	Sizes            []int  `json:"sizes"`
	Size             int    `json:"size"`
	Outstanding      int    `json:"outstanding"`
	Latency          []int  `json:"latency"`
	Members          int    `json:"members"`
	Quorums          []int  `json:"quorums"`
	Durability       string `json:"durability"`
	MemoryDurability string `json:"memory_durability"`
	Warmup           string `json:"warmup"`
	Duration         string `json:"duration"`
	PhaseBytes       int64  `json:"phase_bytes"`
	GrowBytes        int64  `json:"grow_bytes"`
	GrowSamples      int    `json:"grow_samples"`
	SnapCount        int    `json:"snap_count"`
	CommandLine      string `json:"command_line"`
}

func (c *Config) summary() Summary {
	return Summary{Sizes: c.Sizes, Size: c.Size, Outstanding: c.Outstanding, Latency: c.Latency, Members: c.Members,
		Quorums: c.Quorums, Durability: c.Durability, MemoryDurability: c.MemoryDurability,
		Warmup: c.Warmup.String(), Duration: c.Duration.String(), PhaseBytes: c.PhaseBytes, GrowBytes: c.GrowBytes,
		GrowSamples: c.GrowSamples, SnapCount: c.SnapCount, CommandLine: c.CommandLine}
}

// PointCeiling is a point's ceiling in MB/s: a configuration that writes
// the disk (every member the same disk) gets the disk's bandwidth at the
// point's append size ÷ members, one that
// does not (diskless) loopback ÷ members (the leader's link carries each
// byte in once and out to every follower), the read the loopback.
func PointCeiling(a *Anchors, p Point) float64 {
	if a == nil {
		return 0
	}
	switch {
	case p.Figure == "read":
		return a.LoopbackMBps
	case p.Durability == "diskless":
		return Ceiling(a.LoopbackMBps, p.Members)
	default:
		return Ceiling(a.DiskAt(p.Size), p.Members)
	}
}

// add records p with its ceiling.
func (r *Report) add(p Point) {
	p.CeilingMBps = PointCeiling(r.Anchors, p)
	p.OfCeiling = Fraction(p.MBps, p.CeilingMBps)
	r.Points = append(r.Points, p)
}

// The targets, stated beside the figures (never asserted).
const (
	TargetOfCeiling     = 0.80 // 64 KiB, 3 members, sync: of disk ÷ 3
	TargetDecoupledGain = 0.20 // decoupled over coupled
	TargetOverZooKeeper = 5.0  // corral MB/s ÷ ZooKeeper's
	TargetRSSSpread     = 0.10 // each member's RSS while the log grows
)

// Targets are the figures the targets are about, found in r; ok
// false where the run did not measure them.
type Targets struct {
	OfCeiling       float64 `json:"of_ceiling"`
	OfCeilingOK     bool    `json:"-"`
	DecoupledGain   float64 `json:"decoupled_gain"`
	DecoupledGainOK bool    `json:"-"`
	OverZooKeeper   float64 `json:"over_zookeeper"`
	OverZooKeeperOK bool    `json:"-"`
	MaxRSSSpread    float64 `json:"max_rss_spread"`
	MaxRSSSpreadOK  bool    `json:"-"`
}

// find returns the first point of figure fig matching f.
func (r *Report) find(fig string, f func(Point) bool) (Point, bool) {
	for _, p := range r.Points {
		if p.Figure == fig && f(p) {
			return p, true
		}
	}
	return Point{}, false
}

// Gain is a/b - 1; 0 when b is 0.
func Gain(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a/b - 1
}

// Targets computes the target figures.
func (r *Report) Targets() Targets {
	var t Targets
	c := r.Config
	dec, okd := r.find("5.4", func(p Point) bool {
		return p.Members == c.Members && p.GroupCommit == Decoupled && p.Durability == c.Durability
	})
	if okd && dec.CeilingMBps > 0 {
		t.OfCeiling, t.OfCeilingOK = dec.OfCeiling, true
	}
	if cp, ok := r.find("5.4", func(p Point) bool { return p.Members == c.Members && p.GroupCommit == Coupled }); ok && okd && cp.MBps > 0 {
		t.DecoupledGain, t.DecoupledGainOK = Gain(dec.MBps, cp.MBps), true
	}
	if zp, ok := r.find("zookeeper", func(Point) bool { return true }); ok && okd && zp.MBps > 0 {
		t.OverZooKeeper, t.OverZooKeeperOK = dec.MBps/zp.MBps, true
	}
	if r.Growth != nil && len(r.Growth.Samples) >= 2 {
		for _, s := range r.Growth.Spread {
			t.MaxRSSSpread = max(t.MaxRSSSpread, s)
		}
		t.MaxRSSSpreadOK = true
	}
	return t
}

func mib(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func ms(us int64) string { return fmt.Sprintf("%.2f", float64(us)/1000) }

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// Markdown writes the report.
func (r *Report) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "# corral bench rlog: replicated logs (ZKRL)\n\n")
	fmt.Fprintf(w, "`%s`\n\n", c.CommandLine)
	fmt.Fprintf(w, "- started: %s\n- finished: %s\n\n", r.Started.UTC().Format(time.RFC3339), r.Finished.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "Appends through the gRPC API (rlog/rlogclient), %s of warm-up and %s measured per phase (or until %s were appended), %d appends in flight unless the table says otherwise; corral members on 127.0.0.1 with rlog.root=%s, snapCount=%d, snapSizeLimitInKb=%d (ZooKeeper's default), the newest 3 snapshots kept (PurgeTime=%d ms, NumberToRetain=3).\n\n",
		c.Warmup, c.Duration, mib(c.PhaseBytes), c.Outstanding, Root, c.SnapCount, snapSizeLimitKB, purgeTimeMs)
	for _, wv := range r.Warnings {
		fmt.Fprintf(w, "**Warning:** %s\n\n", wv)
	}
	if a := r.Anchors; a != nil {
		fmt.Fprintf(w, "## Anchors (measured in this run)\n\n| anchor | MB/s |\n|---|---:|\n")
		fmt.Fprintf(w, "| disk: sequential %s writes + fdatasync each, in the work directory (%d blocks) | %.1f |\n", mib(int64(a.BlockSize)), a.DiskBlocks, a.DiskMBps)
		fmt.Fprintf(w, "| loopback TCP, one stream of %s writes | %.1f |\n", mib(int64(a.BlockSize)), a.LoopbackMBps)
		fmt.Fprintf(w, "| ceiling of replicated appends on disk: disk ÷ %d members | %.1f |\n\n", a.Members, a.CeilingMBps)
		if len(a.BySize) > 0 {
			fmt.Fprintf(w, "The disk anchor at each append size (each size's ceiling is its own bandwidth ÷ members):\n\n| block | blocks | disk MB/s | ÷ %d members |\n|---:|---:|---:|---:|\n", a.Members)
			for _, d := range a.BySize {
				fmt.Fprintf(w, "| %s | %d | %.1f | %.1f |\n", mib(int64(d.Block)), d.Blocks, d.MBps, Ceiling(d.MBps, a.Members))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Every member writes every byte to the same disk, so the ceiling of a disk configuration of N members is disk ÷ N; a diskless one's is loopback ÷ N; the read's is loopback. \"of ceiling\" is the throughput as a fraction of its ceiling.\n\n")
	}
	t := r.Targets()
	fmt.Fprintf(w, "## Targets (issue 24)\n\n| target | wanted | measured |\n|---|---|---|\n")
	show := func(ok bool, v string) string {
		if !ok {
			return "not measured"
		}
		return v
	}
	fmt.Fprintf(w, "| %s appends, %d members, %s: of the ceiling | ≥ %s | %s |\n", mib(int64(c.Size)), c.Members, c.Durability, pct(TargetOfCeiling), show(t.OfCeilingOK, pct(t.OfCeiling)))
	fmt.Fprintf(w, "| decoupled over coupled group commit (thesis: 88 → 106 MB/s, +20%%) | ≥ +%s | %s |\n", pct(TargetDecoupledGain), show(t.DecoupledGainOK, fmt.Sprintf("%+.0f%%", 100*t.DecoupledGain)))
	fmt.Fprintf(w, "| corral MB/s ÷ ZooKeeper's, same %s payloads | ≥ %.0fx | %s |\n", mib(int64(c.Size)), TargetOverZooKeeper, show(t.OverZooKeeperOK, fmt.Sprintf("%.1fx", t.OverZooKeeper)))
	fmt.Fprintf(w, "| each member's RSS while one log grows from %s to %s: (max-min)/min (the issue: 1 GiB → 8 GiB) | ≤ %s | %s |\n\n", mib(c.GrowBytes/int64(max(c.GrowSamples, 1))), mib(c.GrowBytes), pct(TargetRSSSpread), show(t.MaxRSSSpreadOK, pct(t.MaxRSSSpread)))
	table := func(title, note string, pts []Point) {
		if len(pts) == 0 {
			return
		}
		fmt.Fprintf(w, "## %s\n\n%s\n\n| setup | members | durability | group commit | size | in flight | MB/s | appends/s | of ceiling | p50 ms | p99 ms | errors | server CPU ms/MB |\n|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", title, note)
		for _, p := range pts {
			oc := "–"
			if p.CeilingMBps > 0 {
				oc = pct(p.OfCeiling)
			}
			cpu := "–"
			if p.ServerCPUmsPerMB > 0 {
				cpu = fmt.Sprintf("%.1f", p.ServerCPUmsPerMB)
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %d | %.1f | %.0f | %s | %s | %s | %d | %s |\n", p.Setup, p.Members, p.Durability, p.GroupCommit, mib(int64(p.Size)), p.Outstanding, p.MBps, p.OpsPerS, oc, ms(p.P50us), ms(p.P99us), p.Errors, cpu)
		}
		for _, p := range pts {
			if p.FirstError != "" {
				fmt.Fprintf(w, "\n%s, %s: first error: %s\n", p.Setup, mib(int64(p.Size)), p.FirstError)
			}
		}
		fmt.Fprintln(w)
	}
	sel := func(fig string) []Point {
		var out []Point
		for _, p := range r.Points {
			if p.Figure == fig {
				out = append(out, p)
			}
		}
		return out
	}
	table("Fig. 5.1: throughput vs append size", "The main ensemble; one new log per size.", sel("5.1"))
	table("Figs. 5.2/5.3: latency vs appends in flight", "Disk (the main ensemble) and memory configurations.", sel("5.2"))
	table("Fig. 5.4: quorum size and group commit", fmt.Sprintf("%s appends, each setup's first phase (a fresh ensemble); coupled = the data log's sync and the commit records' sync as one step per group (rlog.groupCommit=coupled).", mib(int64(c.Size))), sel("5.4"))
	table("§5.1.2: sequential read", fmt.Sprintf("One reader, %s reads from the start of the Fig. 5.4 log to its committed end (size = bytes per read).", mib(readChunk)), sel("read"))
	table("ZooKeeper 3.9.3: the same payloads as sequential znodes", fmt.Sprintf("forceSync=yes, %d sessions over the members (go-zookeeper, one create in flight each). Version: %s.", c.Outstanding, r.ZooKeeperVersion), sel("zookeeper"))
	if g := r.Growth; g != nil {
		first := ""
		if g.FirstError != "" {
			first = fmt.Sprintf(" (the first: %s)", g.FirstError)
		}
		fmt.Fprintf(w, "## Resident memory while one log grows\n\n%s appends to one log up to %s in %.1f s (%d errors%s); each member's VmRSS in MiB.\n\n| log bytes |", mib(int64(g.Size)), mib(g.Target), g.Seconds, g.Errors, first)
		for i := range g.Spread {
			fmt.Fprintf(w, " m%d |", i+1)
		}
		fmt.Fprintf(w, "\n|---:|%s\n", strings.Repeat("---:|", len(g.Spread)))
		for _, s := range g.Samples {
			fmt.Fprintf(w, "| %s |", mib(s.Bytes&^(1<<20-1)))
			for _, v := range s.RSS {
				fmt.Fprintf(w, " %.0f |", float64(v)/(1<<20))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "| spread |")
		for _, s := range g.Spread {
			fmt.Fprintf(w, " %s |", pct(s))
		}
		fmt.Fprintf(w, "\n\n")
	}
	for _, p := range r.Plots {
		fmt.Fprintf(w, "![%s](%s)\n\n", p, p)
	}
	for _, s := range r.Setups {
		if s.ZooCfg != "" {
			fmt.Fprintf(w, "<details><summary>%s: member 1's zoo.cfg</summary>\n\n```\n%s```\n\n</details>\n\n", s.Name, s.ZooCfg)
		}
	}
	fmt.Fprintf(w, "Benchmarks report, tests assert: nothing here judges the numbers; the targets are stated, not checked.\n")
}

// JSONLines writes one object per anchor set, point and growth, then
// the targets.
func (r *Report) JSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	if r.Anchors != nil {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			*Anchors
		}{"anchors", r.Anchors}); err != nil {
			return err
		}
	}
	for _, p := range r.Points {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			Point
		}{"point", p}); err != nil {
			return err
		}
	}
	if r.Growth != nil {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			*Growth
		}{"growth", r.Growth}); err != nil {
			return err
		}
	}
	return enc.Encode(struct {
		Kind   string  `json:"kind"`
		Config Summary `json:"config"`
		Targets
	}{"targets", r.Config, r.Targets()})
}
