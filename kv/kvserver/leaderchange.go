package kvserver

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/zab"
)

// leaderChange runs a member's part of the compaction-aware leader change
// (kv/leaderpolicy.go, kv/leaderchanger.go): every period it reads the
// store's temperature and sends it to the other members; on the
// established leader it holds the store's compactions and carries out
// kv.DecideLeaderChange, handing leadership over with the driver's zab
// transfer; elsewhere it lets compactions run. The decision state is a
// kv.LeaderChanger (the code the simulator runs too); run's goroutine
// steps it, peers' reports arrive on the node loop (onMessage), both
// under mu.
type leaderChange struct {
	cfg   kv.LeaderChangeConfig
	id    uint64
	peers []uint64 // the other members
	d     *replica.Driver
	store *kv.Store
	send  func([]zab.Message)
	log   *slog.Logger
	rand  *rand.Rand
	// every is the period.
	every time.Duration
	// onEvent, if set, learns each transfer started and each turn to
	// compacting in place.
	onEvent func(LeaderChangeEvent)

	mu sync.Mutex
	ch kv.LeaderChanger // guarded by mu

	// changedAt is the changer's LastChange in Unix nanoseconds, written
	// by run's goroutine and read by the node's leader balancer
	// (settled).
	changedAt atomic.Int64

	// run's goroutine only: transfers and inPlaceTurns count the
	// transfers started and the turns to compacting in place, logged when
	// the member stops.
	transfers, inPlaceTurns int
}

// LeaderChangeEvent is one act of the compaction-aware leader change on
// member Member: a transfer started (Decision.Action kv.Transfer; Err set
// if the driver refused it) or a turn to compacting in place.
type LeaderChangeEvent struct {
	Member      uint64
	Decision    kv.Decision
	Temperature kv.Temperature
	Err         error
}

func (lc *leaderChange) onMessage(m zab.Message) {
	// Reports are kept per member of the group only: the map stays
	// bounded whatever arrives.
	if len(m.Entries) != 1 || !slices.Contains(lc.peers, m.From) {
		lc.log.Warn("kv: driver message refused", "from", m.From)
		return
	}
	t, err := decodeHeat(m.Entries[0].Data)
	if err != nil {
		lc.log.Warn("kv: temperature message refused", "from", m.From, "err", err)
		return
	}
	lc.mu.Lock()
	lc.ch.Report(m.From, t, time.Now())
	lc.mu.Unlock()
}

// run reports and decides every period until ctx ends.
func (lc *leaderChange) run(ctx context.Context) {
	lc.noteChange(time.Now())
	t := time.NewTicker(lc.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if lc.cfg.Policy != kv.PolicyFixed {
				tp, _ := lc.store.Temperature(lc.cfg.DebtThreshold)
				lc.log.Info("kv: compaction-aware leader change", "policy", lc.cfg.Policy,
					"transfers", lc.transfers, "compactInPlaceTurns", lc.inPlaceTurns,
					"compactionsHeld", tp.HeldCompactions, "compactionsGranted", tp.GrantedCompactions)
			}
			return
		case <-t.C:
		}
		lc.step(time.Now())
	}
}

func (lc *leaderChange) step(now time.Time) {
	temp, err := lc.store.Temperature(lc.cfg.DebtThreshold)
	if err != nil {
		return // closing, or reopening after a snapshot install
	}
	msgs := make([]zab.Message, 0, len(lc.peers))
	for _, p := range lc.peers {
		msgs = append(msgs, heatMessage(lc.id, p, temp))
	}
	lc.send(msgs)

	ss := lc.d.SoftState()
	var st zab.Status
	if ss.Established() {
		st = lc.d.Status()
	}
	r := lc.rand.Uint64()
	lc.mu.Lock()
	out := lc.ch.Step(now, temp, ss, st, r)
	lc.changedAt.Store(lc.ch.LastChange().UnixNano())
	lc.mu.Unlock()
	if out.Keep {
		return // handing over (compactions stay held), or never held
	}
	lc.store.HoldCompactions(out.Hold)
	if !out.Turn {
		return
	}
	dec := out.Decision
	switch dec.Action {
	case kv.CompactInPlace:
		lc.inPlaceTurns++
		lc.log.Info("kv: compacting in place", "reason", dec.Reason, "heat", temp.Heat)
		lc.event(dec, temp, nil)
	case kv.Transfer:
		err := lc.d.TransferLeadership(dec.To)
		if err != nil {
			lc.log.Warn("kv: leadership transfer refused", "to", dec.To, "err", err)
		} else {
			lc.transfers++
			lc.log.Info("kv: handing leadership over before compacting", "to", dec.To, "reason", dec.Reason)
		}
		lc.event(dec, temp, err)
	}
}

// noteChange records a leader change the member saw (or its own
// attempt) at t.
func (lc *leaderChange) noteChange(t time.Time) {
	lc.mu.Lock()
	lc.ch.NoteChange(t)
	lc.mu.Unlock()
	lc.changedAt.Store(t.UnixNano())
}

// settled reports whether another mover (the node's leader balancer) may
// move this RG's leadership at now: always under the fixed policy, else
// only once the last leader change the member saw is MinInterval old, the
// same pause the leader change keeps itself. So the two never undo each
// other's move at once: each waits out the interval after the other's.
func (lc *leaderChange) settled(now time.Time) bool {
	if lc.cfg.Policy == kv.PolicyFixed {
		return true
	}
	at := lc.changedAt.Load()
	return at != 0 && now.Sub(time.Unix(0, at)) >= lc.cfg.WithDefaults().MinInterval
}

func (lc *leaderChange) event(d kv.Decision, t kv.Temperature, err error) {
	if lc.onEvent != nil {
		lc.onEvent(LeaderChangeEvent{Member: lc.id, Decision: d, Temperature: t, Err: err})
	}
}
