package kv

import (
	"time"

	"github.com/corral-db/corral/zab"
)

// LeaderChanger is one member's compaction-aware leader change without
// clocks, goroutines or I/O: what it knows of the other members'
// temperatures, the last leader change it saw, and the turn it is in.
// The caller reads the store's temperature and zab's state, calls Step
// every period and carries the answer out: hold or release the store's
// compactions, start a transfer. kv/kvserver runs it on a timer with
// temperatures from pebble; the simulator (sim/kvgate.go) runs the same
// code under its faults, with temperatures from a model of compaction
// debt. It is not safe for concurrent use.
type LeaderChanger struct {
	Config LeaderChangeConfig
	ID     uint64
	// StaleAfter is how old a report may be to count; MaxLastHeard (zab
	// ticks) and MaxLag (entries) bound how far behind a target may be.
	StaleAfter   time.Duration
	MaxLastHeard int
	MaxLag       uint32

	reports    map[uint64]heatReport
	lastChange time.Time
	leader     uint64
	epoch      uint32
	inPlace    bool
}

type heatReport struct {
	t  Temperature
	at time.Time
}

// LeaderStep is what a member does with its compactions after a Step.
type LeaderStep struct {
	// Keep: leave the hold as it is (a transfer is under way, or the
	// policy never holds); otherwise Hold says hold (true) or release.
	Keep, Hold bool
	// Decision is the policy's answer on an established leader (Action
	// Hold otherwise); Turn says it is news: a transfer to start (to
	// Decision.To) or a turn to compacting in place, once per turn.
	Decision Decision
	Turn     bool
}

// Report records member from's temperature, received at. The caller
// accepts reports from the group's members only, so the map stays
// bounded.
func (lc *LeaderChanger) Report(from uint64, t Temperature, at time.Time) {
	if lc.reports == nil {
		lc.reports = make(map[uint64]heatReport)
	}
	lc.reports[from] = heatReport{t: t, at: at}
}

// Reported returns the last temperature member id reported.
func (lc *LeaderChanger) Reported(id uint64) (Temperature, bool) {
	r, ok := lc.reports[id]
	return r.t, ok
}

// NoteChange records a leader change the member saw (or its own
// attempt) at t.
func (lc *LeaderChanger) NoteChange(t time.Time) { lc.lastChange = t }

// LastChange returns when the member last saw leadership change.
func (lc *LeaderChanger) LastChange() time.Time { return lc.lastChange }

// Step decides at now, from the member's own temperature, its zab soft
// state and (on an established leader; otherwise ignored) its status,
// with rand the policy's random number. A follower, or a member with no
// leader, releases its compactions (an old leader's held ones run now).
// A Transfer counts as a leader change at now, whether or not the driver
// accepts it: a refused attempt is not retried before MinInterval.
func (lc *LeaderChanger) Step(now time.Time, self Temperature, ss zab.SoftState, st zab.Status, rand uint64) LeaderStep {
	if ss.Leader != lc.leader || ss.Epoch != lc.epoch {
		lc.leader, lc.epoch = ss.Leader, ss.Epoch
		lc.lastChange = now
	}
	if !ss.Established() {
		lc.inPlace = false
		return LeaderStep{Decision: Decision{Action: CompactInPlace, Reason: "not leading"}}
	}
	if ss.Transferee != 0 || lc.Config.Policy == PolicyFixed {
		return LeaderStep{Keep: true, Decision: Decision{Action: Hold, Reason: "handing over or fixed leader"}}
	}
	dec := DecideLeaderChange(lc.Config, lc.view(now, self, st, rand))
	out := LeaderStep{Decision: dec}
	switch dec.Action {
	case Hold:
		out.Hold = true
		lc.inPlace = false
	case CompactInPlace:
		out.Turn = !lc.inPlace
		lc.inPlace = true
	case Transfer:
		out.Hold, out.Turn = true, true
		lc.inPlace = false
		lc.lastChange = now
	}
	return out
}

// view gathers what the leader knows for DecideLeaderChange: a member is
// eligible when zab has it synced, heard from it lately and has its
// acknowledgements near the log's end, and its report is fresh.
func (lc *LeaderChanger) view(now time.Time, self Temperature, st zab.Status, rand uint64) LeaderView {
	v := LeaderView{
		Now: now, LeaderID: lc.ID, LastChange: lc.lastChange,
		Heat: self.Heat, Pending: self.Pending, NearStall: self.NearStall,
		Rand: rand,
	}
	for _, l := range st.Learners {
		r, ok := lc.reports[l.ID]
		if !ok || l.Observer || now.Sub(r.at) > lc.StaleAfter {
			continue
		}
		near := l.Ack >= st.LastZxid ||
			(l.Ack.Epoch() == st.LastZxid.Epoch() && st.LastZxid.Counter()-l.Ack.Counter() <= lc.MaxLag)
		v.Members = append(v.Members, MemberHeat{
			ID: l.ID, Heat: r.t.Heat, Compacting: r.t.Compacting > 0,
			Eligible: l.Synced && l.LastHeard <= lc.MaxLastHeard && near,
		})
	}
	return v
}
