package kv

import (
	"testing"
	"time"

	"github.com/corral-db/corral/zab"
)

// TestLeaderChangerSteps: a member's changer releases as a follower,
// holds as a leader until a compaction is due, waits MinInterval after
// a leader change, transfers to a fresh, synced, cool member only (a
// stale report or a lagging member is no target), reports a turn to
// compacting in place once, and leaves the hold alone while handing
// over.
func TestLeaderChangerSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	lc := LeaderChanger{
		Config: LeaderChangeConfig{Policy: PolicyCoolest, MinInterval: 100 * time.Millisecond},
		ID:     1, StaleAfter: 100 * time.Millisecond, MaxLastHeard: 2, MaxLag: 10,
	}
	follower := zab.SoftState{State: zab.StateFollowing, Phase: zab.PhaseBroadcast, Leader: 2, Epoch: 1}
	leader := zab.SoftState{State: zab.StateLeading, Phase: zab.PhaseBroadcast, Leader: 1, Epoch: 2}
	hot := Temperature{Heat: 1.5, Pending: true}
	last := zab.NewZxid(2, 100)
	status := func(ack2, ack3 zab.Zxid) zab.Status {
		return zab.Status{LastZxid: last, Learners: []zab.LearnerStatus{
			{ID: 2, Synced: true, Ack: ack2}, {ID: 3, Synced: true, Ack: ack3},
		}}
	}
	if out := lc.Step(at(0), hot, follower, zab.Status{}, 0); out.Keep || out.Hold || out.Turn {
		t.Fatalf("follower: %+v, want a release", out)
	}
	// Leading from t=10: a leader change then, so no move before 110.
	if out := lc.Step(at(10), Temperature{Heat: 0.5}, leader, status(last, last), 0); !out.Hold || out.Turn {
		t.Fatalf("cool leader: %+v, want a hold", out)
	}
	lc.Report(2, Temperature{Heat: 0.1}, at(60))
	lc.Report(3, Temperature{Heat: 0.2}, at(60))
	if out := lc.Step(at(60), hot, leader, status(last, last), 0); out.Hold || out.Decision.Action != CompactInPlace || !out.Turn {
		t.Fatalf("hot within MinInterval: %+v, want a turn to compacting in place", out)
	}
	if out := lc.Step(at(70), hot, leader, status(last, last), 0); out.Hold || out.Turn {
		t.Fatalf("still in place: %+v, want a release and no new turn", out)
	}
	// At 120: member 2's report (60) is fresh, 3 is the coolest eligible
	// once 2 lags by more than MaxLag.
	if out := lc.Step(at(120), hot, leader, status(zab.NewZxid(2, 80), last), 0); out.Decision.Action != Transfer || out.Decision.To != 3 || !out.Hold || !out.Turn {
		t.Fatalf("hot, 2 lagging: %+v, want a transfer to 3", out)
	}
	// The attempt counts as a change: compact in place until 220.
	if out := lc.Step(at(200), hot, leader, status(last, last), 0); out.Decision.Action != CompactInPlace {
		t.Fatalf("after an attempt: %+v, want compacting in place", out)
	}
	// At 230 the reports (60) are stale: nobody to hand over to.
	if out := lc.Step(at(230), hot, leader, status(last, last), 0); out.Decision.Action != CompactInPlace {
		t.Fatalf("stale reports: %+v, want compacting in place", out)
	}
	lc.Report(2, Temperature{Heat: 0.1}, at(230))
	if out := lc.Step(at(240), hot, leader, status(last, last), 0); out.Decision.Action != Transfer || out.Decision.To != 2 {
		t.Fatalf("fresh report of 2: %+v, want a transfer to 2", out)
	}
	handing := leader
	handing.Transferee = 2
	if out := lc.Step(at(250), hot, handing, status(last, last), 0); !out.Keep {
		t.Fatalf("handing over: %+v, want the hold kept", out)
	}
}
