package durability

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/load"
)

// The report's part for the tree-size figures (5.3 and 5.4): tables with
// a row per size and a column per configuration, the restoration
// target, JSON lines and two plots against the size.

// treeConfigs are the configurations that had a tree ensemble, in run
// order.
func treeConfigs(rep *Report) []string {
	var out []string
	for _, t := range rep.Trees {
		out = append(out, t.Target.Name)
	}
	return out
}

// treeSizesOf are the sizes some configuration measured, ascending.
func treeSizesOf(rep *Report, restores bool) []int64 {
	var s, r []int64
	for _, t := range rep.Trees {
		for _, p := range t.Snapshots {
			s = append(s, p.Znodes)
		}
		for _, p := range t.Restores {
			r = append(r, p.Znodes)
		}
	}
	if restores {
		return treeSizes(nil, r)
	}
	return treeSizes(s, nil)
}

func (rep *Report) tree(config string) *DurTreeRun {
	for i := range rep.Trees {
		if rep.Trees[i].Target.Name == config {
			return &rep.Trees[i]
		}
	}
	return nil
}

// snapshotAt is config's snapshot measurement at size n, or nil.
func (rep *Report) snapshotAt(config string, n int64) *DurSnapshot {
	if t := rep.tree(config); t != nil {
		for i := range t.Snapshots {
			if t.Snapshots[i].Znodes == n {
				return &t.Snapshots[i]
			}
		}
	}
	return nil
}

// restoreAt is config's restoration trial at size n, or nil.
func (rep *Report) restoreAt(config string, n int64) *DurRestore {
	if t := rep.tree(config); t != nil {
		for i := range t.Restores {
			if t.Restores[i].Znodes == n {
				return &t.Restores[i]
			}
		}
	}
	return nil
}

// sizeTable writes a table with a row per size and a column per
// configuration; cell returns "" for no value.
func sizeTable(w io.Writer, rep *Report, sizes []int64, cell func(config string, n int64) string) {
	configs := treeConfigs(rep)
	fmt.Fprintf(w, "| znodes |")
	for _, c := range configs {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, "\n|---:|%s\n", strings.Repeat("---:|", len(configs)))
	for _, n := range sizes {
		fmt.Fprintf(w, "| %d |", n)
		for _, c := range configs {
			text := cell(c, n)
			if text == "" {
				text = "—"
			}
			fmt.Fprintf(w, " %s |", text)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// durRestoreRatio is the restoration target at one size: corral
// diskless's restoration time at most 1.5x corral sync's.
type durRestoreRatio struct {
	Znodes int64   `json:"znodes"`
	Num    string  `json:"numerator"`
	Den    string  `json:"denominator"`
	Ratio  float64 `json:"ratio"`
	Target float64 `json:"target_at_most"`
	Met    bool    `json:"met"`
}

// durRestoreRatios are the ratios at the sizes both configurations
// Measured without error.
func durRestoreRatios(rep *Report) []durRestoreRatio {
	const target = 1.5
	var out []durRestoreRatio
	for _, n := range treeSizesOf(rep, true) {
		d, s := rep.restoreAt(DurCorralDiskless, n), rep.restoreAt(DurCorralSync, n)
		if d == nil || s == nil || d.Err != "" || s.Err != "" || s.RestoreMs <= 0 {
			continue
		}
		r := d.RestoreMs / s.RestoreMs
		out = append(out, durRestoreRatio{Znodes: n, Num: DurCorralDiskless, Den: DurCorralSync, Ratio: r, Target: target, Met: r <= target})
	}
	return out
}

// writeDurTreeMarkdown writes the tree-size figures' part of the report;
// nothing when no tree ensemble ran.
func writeDurTreeMarkdown(w io.Writer, rep *Report) {
	if len(rep.Trees) == 0 {
		return
	}
	c := rep.Config
	fmt.Fprintf(w, "\n### Snapshot latency and restoration against the tree's size (Fig. 5.3, 5.4)\n\n")
	fmt.Fprintf(w, "Each configuration again on a fresh %d-server ensemble with the same zoo.cfg (snapCount default: 100000). "+
		"The tree is grown with pipelined creates (%d sessions × %d in flight, %d-byte persistent nodes under %s) "+
		"through the sizes, ascending; a size is the leader's zk_znode_count, the servers' own nodes included. At each size:\n\n",
		c.Servers, growConns, growInflight, c.ValueSize, load.DefaultRoot)
	fmt.Fprintf(w, "- snapshot (Fig. 5.3): after the members' snapshot files and mntr counters have been still for %v, "+
		"existing nodes are overwritten (setData, so the tree keeps its size) until each member's own "+
		"snapCount rule starts a snapshot; the writes go in chunks of about %v, and after a chunk in which a member's new "+
		"snapshot file appeared writing pauses until that snapshot is counted, so it shares the machine with at most the "+
		"rest of its chunk. A member's time is the change of mntr's zk_sum_snapshottime over that of zk_cnt_snapshottime "+
		"(ZooKeeper 3.9's SNAPSHOT_TIME, whole ms; corral reports the same keys); the cell is the mean over the members, "+
		"with the least and greatest member in brackets\n", snapQuiet, snapFillChunkTime)
	fmt.Fprintf(w, "- restoration (Fig. 5.4): %d `corral bench failover` trials, one after the other, the first table giving the median "+
		"trial's time with the least and greatest in brackets and the other tables the median trial's figures; each: a client overwrites %s on a follower in a "+
		"closed loop, the leader is SIGKILLed by PID, and the restoration time runs from the kill to the reply of the "+
		"first write sent after it (the ensemble noticing, electing and synchronizing; in diskless mode every survivor "+
		"first writes a checkpoint: corral the log after its newest busy snapshot, the thesis a complete snapshot). The killed server is then started again: rejoin is until the ensemble is whole "+
		"(every member leader or follower, each accepting a session), full tree until the restarted member also reports "+
		"the leader's zk_znode_count\n\n", max(c.RestoreTrials, 1), failover.FailoverPath)
	for _, t := range rep.Trees {
		fmt.Fprintf(w, "- %s: `%s`", t.Target.Name, strings.Join(t.ZooCfg, " "))
		in := t.Info
		if in.JavaHeap != "" {
			fmt.Fprintf(w, " (JVM heap -Xmx%s per server)", in.JavaHeap)
		}
		if in.Leader != "" {
			fmt.Fprintf(w, "; leader at the start %s", in.Leader)
		}
		if len(in.Members) > 0 {
			fmt.Fprintf(w, " (%s)", in.MemberPIDs())
		}
		var grown []string
		for _, g := range t.Growth {
			grown = append(grown, fmt.Sprintf("%d in %.0f s (%.0f creates/s)", g.ZnodeCount, g.Seconds, g.PerSec))
		}
		if len(grown) > 0 {
			fmt.Fprintf(w, "; grown to %s", strings.Join(grown, ", "))
		}
		if in.Err != "" {
			fmt.Fprintf(w, "; FAILED: %s", in.Err)
		} else if t.Err != "" {
			fmt.Fprintf(w, "; errors: %s", t.Err)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)

	if sizes := treeSizesOf(rep, false); len(sizes) > 0 {
		fmt.Fprintf(w, "#### Snapshot latency (Fig. 5.3), ms\n\n")
		sizeTable(w, rep, sizes, func(cfg string, n int64) string {
			s := rep.snapshotAt(cfg, n)
			if s == nil || s.Ms <= 0 {
				return ""
			}
			return fmt.Sprintf("%.0f (%.0f–%.0f)", s.Ms, s.MinMs, s.MaxMs)
		})
		fmt.Fprintf(w, "setData requests until every member had snapshotted:\n\n")
		sizeTable(w, rep, sizes, func(cfg string, n int64) string {
			if s := rep.snapshotAt(cfg, n); s != nil {
				return fmt.Sprintf("%d", s.FillWrites)
			}
			return ""
		})
	}
	if sizes := treeSizesOf(rep, true); len(sizes) > 0 {
		fmt.Fprintf(w, "#### Restoration after a leader kill (Fig. 5.4): kill → first write accepted, ms\n\n")
		fmt.Fprintf(w, "(A failed trial has no value in these tables; its error is listed below them.)\n\n")
		restoreCell := func(f func(r *DurRestore) float64) func(string, int64) string {
			return func(cfg string, n int64) string {
				r := rep.restoreAt(cfg, n)
				if r == nil || r.Err != "" || f(r) <= 0 {
					return ""
				}
				return fmt.Sprintf("%.0f", f(r))
			}
		}
		sizeTable(w, rep, sizes, func(cfg string, n int64) string {
			r := rep.restoreAt(cfg, n)
			if r == nil || r.Err != "" || r.RestoreMs <= 0 {
				return ""
			}
			if t := r.TrialsMs; len(t) > 1 {
				return fmt.Sprintf("%.0f (%.0f–%.0f)", r.RestoreMs, t[0], t[len(t)-1])
			}
			return fmt.Sprintf("%.0f", r.RestoreMs)
		})
		fmt.Fprintf(w, "Client-side gap (last write before the kill → first after it), ms:\n\n")
		sizeTable(w, rep, sizes, restoreCell(func(r *DurRestore) float64 { return r.Trial.GapMs }))
		fmt.Fprintf(w, "Killed server restarted → ensemble whole, ms:\n\n")
		sizeTable(w, rep, sizes, restoreCell(func(r *DurRestore) float64 { return r.Trial.RejoinMs }))
		fmt.Fprintf(w, "Killed server restarted → it reports the leader's znode count, ms:\n\n")
		sizeTable(w, rep, sizes, restoreCell(func(r *DurRestore) float64 { return r.FullTreeMs }))
		if ratios := durRestoreRatios(rep); len(ratios) > 0 {
			fmt.Fprintf(w, "Restoration target (reported, not asserted):\n\n")
			fmt.Fprintf(w, "| znodes | ratio of restoration times | measured | target | met |\n|---:|---|---:|---:|---|\n")
			for _, r := range ratios {
				met := "no"
				if r.Met {
					met = "yes"
				}
				fmt.Fprintf(w, "| %d | %s ÷ %s | %.2fx | ≤ %.1fx | %s |\n", r.Znodes, r.Num, r.Den, r.Ratio, r.Target, met)
			}
			fmt.Fprintln(w)
		}
	}
	for _, t := range rep.Trees {
		for _, s := range t.Snapshots {
			if s.Err != "" {
				fmt.Fprintf(w, "- %s snapshot at %d znodes FAILED: %s\n", s.Config, s.Znodes, s.Err)
			}
			for _, m := range s.Members {
				if m.Err != "" && s.Err == "" {
					fmt.Fprintf(w, "- %s snapshot at %d znodes, server.%d: %s\n", s.Config, s.Znodes, m.ID, m.Err)
				}
			}
		}
		for _, r := range t.Restores {
			if r.Err != "" {
				fmt.Fprintf(w, "- %s restoration at %d znodes FAILED: %s\n", r.Config, r.Znodes, r.Err)
			}
		}
	}
	fmt.Fprintln(w)
}

// durTreeRecord is a JSON line per tree ensemble.
type durTreeRecord struct {
	Record  string             `json:"record"`
	Name    string             `json:"name"`
	Server  string             `json:"server"`
	ZooCfg  []string           `json:"zoo_cfg"`
	Argv    []string           `json:"argv,omitempty"`
	Version string             `json:"version,omitempty"`
	Leader  string             `json:"leader,omitempty"`
	After   string             `json:"leader_after,omitempty"`
	Members []bench.MemberInfo `json:"members,omitempty"`
	Growth  []DurGrowth        `json:"growth"`
	Err     string             `json:"error,omitempty"`
}

type durSnapshotRecord struct {
	Record string `json:"record"`
	DurSnapshot
}

type durRestoreRecord struct {
	Record string `json:"record"`
	DurRestore
}

// writeDurTreeJSONLines writes a "tree" line per tree ensemble, then a
// "snapshot" line per Fig. 5.3 point and a "restore" line per Fig. 5.4
// point.
func writeDurTreeJSONLines(enc *json.Encoder, rep *Report) error {
	for _, t := range rep.Trees {
		err := t.Err
		if t.Info.Err != "" {
			err = t.Info.Err
		}
		rec := durTreeRecord{
			Record: "tree", Name: t.Target.Name, Server: t.Target.Server, ZooCfg: t.ZooCfg, Argv: t.Info.Argv,
			Version: t.Info.Version, Leader: t.Info.Leader, After: t.Info.LeaderAfter, Members: t.Info.Members,
			Growth: t.Growth, Err: err,
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	for _, t := range rep.Trees {
		for _, s := range t.Snapshots {
			if err := enc.Encode(durSnapshotRecord{Record: "snapshot", DurSnapshot: s}); err != nil {
				return err
			}
		}
	}
	for _, t := range rep.Trees {
		for _, r := range t.Restores {
			if err := enc.Encode(durRestoreRecord{Record: "restore", DurRestore: r}); err != nil {
				return err
			}
		}
	}
	return nil
}
