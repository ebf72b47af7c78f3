package kv

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Temperature is how near a member is to heavy compaction work, ACaZoo's
// "temperature", read from pebble: the input of the compaction-aware
// leader change (leaderpolicy.go) and of the share of time members
// compact (the paper's Figs. 13-15).
type Temperature struct {
	L0Sublevels int32
	L0Tables    int64
	// CompactionDebt is pebble's estimate of the bytes to compact before
	// the LSM is stable.
	CompactionDebt        uint64
	CompactionsInProgress int64
	// Compacting counts the compactions running that rewrite data: not
	// moves, copies or delete-only ones, which cost little.
	Compacting int64
	// Flushes and Compactions count the finished ones since Open.
	Flushes, Compactions int64
	// WriteStalls counts pebble's write stalls since Open (a commit
	// waiting for a memtable to flush or for L0 to shrink), and
	// WriteStallTime is their total length, the one under way included.
	WriteStalls    int64
	WriteStallTime time.Duration
	// Heat is max(L0Sublevels / L0CompactionThreshold, CompactionDebt /
	// debtThreshold): 1 or more means a compaction is due.
	Heat float64
	// NearStall: L0 is within two sublevels of pebble's
	// L0StopWritesThreshold, where writes stop until a compaction runs.
	NearStall bool
	// Held: compactions are held (HoldCompactions); Pending: pebble has a
	// compaction waiting to start (on the hold, or for a free slot).
	Held, Pending bool
	// HeldCompactions counts the compactions pebble asked to start and a
	// hold refused, GrantedCompactions those the gate let run, since the
	// store opened (both 0 without Options.GateCompactions).
	HeldCompactions, GrantedCompactions int64
	// Holds and Releases count the turns of the hold on and off;
	// StallReleases, of the releases, those the store made itself
	// before a flush, L0 being near the write stall.
	Holds, Releases, StallReleases int64
}

// eventCounts are kept by pebble's EventListener callbacks, which run on
// pebble's goroutines: they only count.
type eventCounts struct {
	flushes, compactions atomic.Int64
	// compacting counts the data-rewriting compactions begun and not
	// ended.
	compacting atomic.Int64
	// stalls counts write stalls begun; stalled sums the ended ones'
	// nanoseconds; stallSince is when the one under way began (Unix
	// nanoseconds; 0: none). pebble begins and ends stalls in turn.
	stalls, stalled, stallSince atomic.Int64
}

// stallTime is the total length of the write stalls, the one under way
// included, at now.
func (c *eventCounts) stallTime(now time.Time) time.Duration {
	d := c.stalled.Load()
	if since := c.stallSince.Load(); since != 0 {
		d += max(now.UnixNano()-since, 0)
	}
	return time.Duration(d)
}

// rewrites reports whether a compaction of this reason rewrites data
// (pebble's compactionKind names).
func rewrites(reason string) bool {
	switch reason {
	case "move", "copy", "delete-only", "flush", "ingested-flushable":
		return false
	}
	return true
}

func (c *eventCounts) listener(log *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		// A stall stops every commit, so apply: an operator sees each in
		// the log and in corral_kv_write_stalls_total.
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			c.stalls.Add(1)
			c.stallSince.Store(time.Now().UnixNano())
			log.Info("pebble write stall", "reason", info.Reason)
		},
		WriteStallEnd: func() {
			if since := c.stallSince.Swap(0); since != 0 {
				d := max(time.Now().UnixNano()-since, 0)
				c.stalled.Add(d)
				log.Info("pebble write stall ended", "took", time.Duration(d))
			}
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				c.flushes.Add(1)
				log.Debug("pebble flush", "took", info.TotalDuration, "tables", len(info.Output))
			}
		},
		CompactionBegin: func(info pebble.CompactionInfo) {
			if rewrites(info.Reason) {
				c.compacting.Add(1)
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if rewrites(info.Reason) {
				c.compacting.Add(-1)
			}
			if info.Err == nil {
				c.compactions.Add(1)
				log.Debug("pebble compaction", "reason", info.Reason, "took", info.TotalDuration, "from", len(info.Input), "to", info.Output.Level)
			}
		},
	}
}

// Temperature reads the store's compaction state; debtThreshold is the
// debt that counts as a due compaction (0: 64 MiB).
func (s *Store) Temperature(debtThreshold uint64) (Temperature, error) {
	if debtThreshold == 0 {
		debtThreshold = 64 << 20
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return Temperature{}, errClosed
	}
	m := s.db.Metrics()
	t := Temperature{
		L0Sublevels:           m.Levels[0].Sublevels,
		L0Tables:              m.Levels[0].TablesCount,
		CompactionDebt:        m.Compact.EstimatedDebt,
		CompactionsInProgress: m.Compact.NumInProgress,
		Compacting:            max(s.events.compacting.Load(), 0),
		Flushes:               s.events.flushes.Load(),
		WriteStalls:           s.events.stalls.Load(),
		WriteStallTime:        s.events.stallTime(time.Now()),
		Compactions:           s.events.compactions.Load(),
	}
	threshold := s.l0CompactionThreshold
	if threshold <= 0 {
		threshold = 4
	}
	t.Heat = max(float64(t.L0Sublevels)/float64(threshold), float64(t.CompactionDebt)/float64(debtThreshold))
	if s.l0StopWritesThreshold > 0 {
		t.NearStall = int(t.L0Sublevels) >= s.l0StopWritesThreshold-2
	}
	if s.gate != nil {
		t.Held, t.Pending = s.gate.state()
		t.HeldCompactions, t.GrantedCompactions = s.gate.held.Load(), s.gate.granted.Load()
		t.Holds, t.Releases = s.gate.holds.Load(), s.gate.releases.Load()
		t.StallReleases = s.gate.stallReleases.Load()
	}
	return t, nil
}

// HoldCompactions holds (true) or releases (false) the store's
// compactions: held, pebble's compactions wait (flushes go on); released,
// the waiting ones start. It reports false, doing nothing, on a store
// opened without Options.GateCompactions.
func (s *Store) HoldCompactions(hold bool) bool {
	if s.gate == nil {
		return false
	}
	s.gate.setHold(hold)
	return true
}

// releaseNearStallLocked releases held compactions when L0 is within two
// sublevels of pebble's write stall, before a flush the store asks for (Snapshot, WriteSnapshot, Close):
// under the hold, a flush that reaches the stall waits for a compaction
// nobody lets run, and the store's caller waits with it (a leader whose
// leader change decides less often than it flushes, or the simulator,
// which flushes on the goroutine that would decide). The next decision
// of the leader change holds them again if L0 has come down. The caller
// holds dbMu (read or write) with the database open.
func (s *Store) releaseNearStallLocked() {
	if s.gate == nil || s.l0StopWritesThreshold <= 0 || !s.gate.isHeld() {
		return
	}
	if int(s.db.Metrics().Levels[0].Sublevels) >= s.l0StopWritesThreshold-2 {
		s.gate.setHold(false)
		s.gate.stallReleases.Add(1)
	}
}
