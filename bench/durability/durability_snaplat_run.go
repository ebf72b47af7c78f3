package durability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// The figures measured against the size of the tree, Fig. 5.3 (snapshot
// latency) and Fig. 5.4 (restoration after a leader kill), share one
// ensemble per configuration, separate from the one the time-series
// phases use (those would otherwise start on a tree of a size that
// depends on the configuration's speed): the tree grows through the sizes
// asked for, ascending, and at each the snapshot and then the leader kill
// are measured.

// DurTreeRun is one configuration's ensemble for Fig. 5.3 and 5.4.
type DurTreeRun struct {
	DurabilityServer
	// Growth is how the tree was grown to each size.
	Growth    []DurGrowth   `json:"growth"`
	Snapshots []DurSnapshot `json:"snapshots,omitempty"`
	Restores  []DurRestore  `json:"restores,omitempty"`
	Err       string        `json:"error,omitempty"`
}

// DurGrowth is the growing of the tree to one size with pipelined creates.
type DurGrowth struct {
	Znodes int64 `json:"znodes"`
	// ZnodeCount is the leader's zk_znode_count after it.
	ZnodeCount int64   `json:"znode_count"`
	Created    int64   `json:"created"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"creates_per_sec"`
}

// Bounds and shape of the growth: pipelined creates, as compare makes.
const (
	growConns    = 16
	growInflight = 64
	// growTimeout bounds one growth step; growRounds the create phases one
	// step may take to make up for failed creates.
	growTimeout = 30 * time.Minute
	growRounds  = 3
	// MaxDurTreeZnodes bounds the sizes asked for (ZooKeeper's heap is 2 GB
	// by default); MinDurTreeZnodes keeps a size above the servers' own
	// Nodes.
	MaxDurTreeZnodes = 2000000
	MinDurTreeZnodes = 1000
)

// durTree is one configuration's tree ensemble while it is measured.
type durTree struct {
	cfg    Config
	target DurabilityTarget
	ens    *launch.Ensemble
	leader int
	// keys are the nodes made so far (the latest growth step's), which the
	// snapshot measurement overwrites.
	keys *load.KeySpace
	// trials counts the leader kills so far.
	trials int
}

// mode is member id's role as last known.
func (tr *durTree) mode(id int) string {
	if id == tr.leader {
		return launch.ModeLeader
	}
	return launch.ModeFollower
}

// treeSizes is the ascending union of the sizes of both figures.
func treeSizes(snap, restore []int64) []int64 {
	all := slices.Concat(snap, restore)
	slices.Sort(all)
	return slices.Compact(all)
}

// durabilityTree starts configuration t's ensemble, grows its tree through
// the sizes of cfg.SnapCounts and cfg.RestoreCounts, measures at each,
// and stops the members by PID. A failed measurement is recorded and the
// Run goes on, unless the ensemble is no longer whole.
func durabilityTree(ctx context.Context, cfg Config, base launch.LaunchConfig, work string, t DurabilityTarget) (DurTreeRun, error) {
	run := DurTreeRun{DurabilityServer: DurabilityServer{Target: t, ZooCfg: t.Durability.Lines(), Info: bench.ServerInfo{Target: t.Name}}}
	if t.Server == launch.TargetZooKeeper {
		run.Info.JavaHeap = cfg.JavaHeap
	}
	fail := func(err error) (DurTreeRun, error) {
		run.Err = err.Error()
		return run, err
	}
	lc := base
	lc.Dir = filepath.Join(work, t.Name+"-tree")
	lc.GlobalOutstandingLimit, lc.Timing, lc.Durability = cfg.GlobalOutstandingLimit, cfg.Timing, t.Durability
	cfg.Log.Info("starting ensemble for the tree-size figures", "config", t.Name, "servers", cfg.Servers)
	ens, err := launch.LaunchEnsemble(ctx, t.Server, launch.EnsembleConfig{LaunchConfig: lc, Servers: cfg.Servers})
	if err != nil {
		run.Info.Err = err.Error()
		return fail(err)
	}
	defer func() {
		ens.Stop()
		for _, m := range ens.Members {
			if cfg.OutDir != "" {
				b := fmt.Sprintf("%s-tree.s%d", t.Name, m.ID)
				bench.CopyFile(m.LogPath, filepath.Join(cfg.OutDir, b+".log"))
				bench.CopyFile(m.ZooCfgPath, filepath.Join(cfg.OutDir, b+".zoo.cfg"))
			}
			if !cfg.Keep {
				os.RemoveAll(m.DataDir)
			}
		}
	}()
	leader, err := ens.WaitWhole(ctx, bench.WholeTimeout)
	if err != nil {
		run.Info.Err = err.Error()
		return fail(err)
	}
	info := &run.Info
	info.Version, info.Argv = ens.Version, ens.Members[0].Argv
	info.Addr = strings.Join(ens.Addrs(), ",")
	info.Leader = bench.MemberName(ens, leader)
	for _, m := range ens.Members {
		mode := launch.ModeFollower
		if m.ID == leader {
			mode = launch.ModeLeader
		}
		info.Members = append(info.Members, bench.MemberInfo{ID: m.ID, Addr: m.Addr, PID: m.PID(), Mode: mode})
	}
	tr := &durTree{cfg: cfg, target: t, ens: ens, leader: leader}
	if len(cfg.RestoreCounts) > 0 {
		if err := failover.SetupFailoverNode(ctx, ens.Member(leader).Addr); err != nil {
			return fail(err)
		}
	}
	var errs []error
	for _, n := range treeSizes(cfg.SnapCounts, cfg.RestoreCounts) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		g, err := tr.grow(ctx, n)
		run.Growth = append(run.Growth, g)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if slices.Contains(cfg.SnapCounts, n) {
			s := tr.measureSnapshot(ctx, n)
			run.Snapshots = append(run.Snapshots, s)
			cfg.Log.Info("snapshot latency", "config", t.Name, "znodes", n, "ms", fmt.Sprintf("%.0f", s.Ms), "err", s.Err)
			if s.Err != "" {
				errs = append(errs, fmt.Errorf("snapshot at %d znodes: %s", n, s.Err))
			}
		}
		if slices.Contains(cfg.RestoreCounts, n) {
			r := tr.restoreTrials(ctx, n, cfg.RestoreTrials)
			run.Restores = append(run.Restores, r)
			cfg.Log.Info("restoration", "config", t.Name, "znodes", n, "kill_to_write_ms", fmt.Sprintf("%.0f", r.RestoreMs),
				"rejoin_ms", fmt.Sprintf("%.0f", r.Trial.RejoinMs), "trials_ms", fmt.Sprint(r.TrialsMs), "err", r.Err)
			if r.Err != "" {
				errs = append(errs, fmt.Errorf("restoration at %d znodes: %s", n, r.Err))
				// Later sizes need a whole ensemble.
				l, err := ens.WaitWhole(ctx, bench.WholeTimeout)
				if err != nil {
					errs = append(errs, err)
					break
				}
				tr.leader = l
			}
		}
	}
	if after := ens.Leader(ctx); after != leader {
		info.LeaderAfter = bench.MemberName(ens, after)
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	return run, nil
}

// grow creates nodes until the leader counts n (one growth step).
func (tr *durTree) grow(ctx context.Context, n int64) (g DurGrowth, err error) {
	g.Znodes = n
	addr := tr.ens.Member(tr.leader).Addr
	start := time.Now()
	defer func() {
		g.Seconds = time.Since(start).Seconds()
		if g.Seconds > 0 {
			g.PerSec = float64(g.Created) / g.Seconds
		}
	}()
	for round := 0; ; round++ {
		have, err := znodeCount(ctx, addr)
		if err != nil {
			return g, fmt.Errorf("bench: %s: %w", tr.target.Name, err)
		}
		g.ZnodeCount = have
		if have >= n {
			return g, nil
		}
		if round == growRounds {
			return g, fmt.Errorf("bench: %s: the tree has %d nodes after %d create phases, want %d", tr.target.Name, have, growRounds, n)
		}
		tr.cfg.Log.Info("growing the tree", "config", tr.target.Name, "from", have, "to", n)
		res, err := load.RunPhase(ctx, load.PhaseConfig{
			Target: tr.target.Name, Phase: "grow", Addrs: tr.ens.ClientOrder(tr.leader),
			Workload: load.WorkloadCreate, Conns: growConns, Inflight: growInflight, ValueSize: tr.cfg.ValueSize,
			Duration: growTimeout, MaxOps: n - have, SessionTimeout: tr.cfg.SessionTimeout,
		})
		g.Created += res.Ops
		g.Errors += res.Errors
		if res.Keys != nil && res.Keys.Total() > 0 {
			tr.keys = res.Keys
		}
		if err != nil {
			return g, err
		}
	}
}

// TimePhases reports whether any of the time-series phases (Fig. 5.1,
// 5.2, 5.5, 5.6) is to run.
func (c *Config) TimePhases() bool {
	return c.CPUDuration > 0 || c.QueueDuration > 0 || c.CreateDuration > 0 || c.GetDuration > 0
}

// checkTreeCounts checks the tree sizes and sorts them.
func (c *Config) checkTreeCounts() error {
	for _, counts := range []*[]int64{&c.SnapCounts, &c.RestoreCounts} {
		for _, n := range *counts {
			if n < MinDurTreeZnodes || n > MaxDurTreeZnodes {
				return fmt.Errorf("bench: tree size %d out of range [%d, %d]", n, MinDurTreeZnodes, MaxDurTreeZnodes)
			}
		}
		s := slices.Clone(*counts)
		slices.Sort(s)
		*counts = slices.Compact(s)
	}
	if len(c.RestoreCounts) > 0 && c.Servers < 3 {
		return fmt.Errorf("bench: killing the leader needs an ensemble of at least 3 servers, not %d", c.Servers)
	}
	return nil
}
