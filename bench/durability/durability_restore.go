package durability

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/load"
)

// Restoration after a leader kill against the size of the tree: the
// thesis's Fig. 5.4 (section 5.3.1.3). The measurement is the median of
// RestoreTrials trials of `corral bench failover` (runTrial), each: a client overwrites a node on a
// follower, the leader is SIGKILLed by PID, and the restoration time is
// from the kill to the reply of the first write sent after it: the
// ensemble noticing, electing, the new leader synchronizing its followers
// (and, in diskless mode, every survivor first making its disk complete,
// the thesis's Algorithm 4.2: corral writes the log after its newest busy
// snapshot). The killed server is then started
// again; the trial times it until the ensemble is whole, and this file
// adds the wait until it holds the leader's whole tree.

// DurRestore is one point of Fig. 5.4.
type DurRestore struct {
	Config string `json:"config"`
	Server string `json:"server"`
	// Znodes is the size asked for; ZnodeCount the leader's zk_znode_count
	// before the kill.
	Znodes     int64 `json:"znodes"`
	ZnodeCount int64 `json:"znode_count"`
	// RestoreMs is Trial.KillToWriteMs: from the kill to the ensemble
	// accepting a write again.
	RestoreMs float64 `json:"restore_ms"`
	// FullTreeMs is from the killed server's restart until it serves as a
	// follower (the ensemble is whole: Trial.RejoinMs) and reports the
	// leader's znode count; 0 when that was not seen.
	FullTreeMs float64                `json:"full_tree_ms,omitempty"`
	Trial      failover.FailoverTrial `json:"trial"`
	Err        string                 `json:"error,omitempty"`
	// TrialsMs is every trial's RestoreMs at this size, ascending; the
	// fields above are the median trial's (restoreTrials).
	TrialsMs []float64 `json:"trials_ms,omitempty"`
}

// restoreTrials kills the leader k times at the tree's current size and
// returns the median trial by restoration time, with every trial's time
// in TrialsMs. A failed trial ends the series and is returned (its
// error is the result's), with the times of the trials before it.
func (tr *durTree) restoreTrials(ctx context.Context, n int64, k int) DurRestore {
	var ok []DurRestore
	var times []float64
	for range max(k, 1) {
		r := tr.restore(ctx, n)
		if r.Err != "" {
			r.TrialsMs = times
			return r
		}
		ok = append(ok, r)
		times = append(times, r.RestoreMs)
	}
	slices.SortStableFunc(ok, func(a, b DurRestore) int { return cmp.Compare(a.RestoreMs, b.RestoreMs) })
	slices.Sort(times)
	m := ok[(len(ok)-1)/2]
	m.TrialsMs = times
	return m
}

// Bounds of a restoration trial. A big tree makes both the election (the
// new leader's snapshot) and the restart (loading the snapshot) slower
// than the failover command's defaults allow for.
const (
	restoreRecoveryTimeout = 2 * time.Minute
	restoreWholeTimeout    = 5 * time.Minute
	restoreFullTreeTimeout = 2 * time.Minute
	restorePoll            = 100 * time.Millisecond
)

// restore kills the leader once with the tree at its current size (asked:
// n) and waits for the ensemble to be whole again.
func (tr *durTree) restore(ctx context.Context, n int64) DurRestore {
	res := DurRestore{Config: tr.target.Name, Server: tr.target.Server, Znodes: n}
	if c, err := znodeCount(ctx, tr.ens.Member(tr.leader).Addr); err == nil {
		res.ZnodeCount = c
	}
	fcfg := failover.Config{
		Target: tr.target.Server, Servers: len(tr.ens.Members), Timing: tr.cfg.Timing, ValueSize: tr.cfg.ValueSize,
		RecoveryTimeout: restoreRecoveryTimeout, WholeTimeout: restoreWholeTimeout, Log: tr.cfg.Log,
	}
	if err := fcfg.Fill(); err != nil {
		res.Err = err.Error()
		return res
	}
	tr.trials++
	tr.cfg.Log.Info("killing the leader", "config", tr.target.Name, "znodes", n, "leader", tr.leader)
	trial, _ := failover.RunTrial(ctx, fcfg, tr.ens, tr.trials, load.Value(tr.cfg.ValueSize))
	res.Trial, res.RestoreMs = trial, trial.KillToWriteMs
	if trial.NewLeader != 0 {
		tr.leader = trial.NewLeader
	}
	if trial.Err != "" {
		res.Err = trial.Err
		return res
	}
	// The trial's wait ends when the restarted server is a follower that
	// accepts sessions; ask it for its tree's size until it has the
	// leader's.
	start := time.Now()
	killed, leader := tr.ens.Member(trial.Killed), tr.ens.Member(tr.leader)
	for {
		kc, kerr := znodeCount(ctx, killed.Addr)
		lc, lerr := znodeCount(ctx, leader.Addr)
		if kerr == nil && lerr == nil && kc == lc {
			res.FullTreeMs = trial.RejoinMs + failover.MsOf(time.Since(start))
			return res
		}
		if time.Since(start) > restoreFullTreeTimeout {
			res.Err = fmt.Sprintf("server.%d (restarted) did not report the leader's znode count in %v: %d vs %d (%v, %v)",
				killed.ID, restoreFullTreeTimeout, kc, lc, kerr, lerr)
			return res
		}
		if !load.SleepCtx(ctx, restorePoll) {
			res.Err = ctx.Err().Error()
			return res
		}
	}
}
