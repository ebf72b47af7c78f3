package kv

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Temperature is how near a member is to heavy compaction work, ACaZoo's
// "temperature", read from pebble: the input of the compaction-aware
// leader change (docs/design/kv.md, not done yet), and of the share of
// time members compact (the paper's Figs. 13-15).
type Temperature struct {
	L0Sublevels int32
	L0Tables    int64
	// CompactionDebt is pebble's estimate of the bytes to compact before
	// the LSM is stable.
	CompactionDebt        uint64
	CompactionsInProgress int64
	// Flushes and Compactions count the finished ones since Open.
	Flushes, Compactions int64
	// Heat is max(L0Sublevels / L0CompactionThreshold, CompactionDebt /
	// debtThreshold): 1 or more means a compaction is due.
	Heat float64
}

// eventCounts are kept by pebble's EventListener callbacks, which run on
// pebble's goroutines: they only count.
type eventCounts struct {
	flushes, compactions atomic.Int64
}

func (c *eventCounts) listener() *pebble.EventListener {
	return &pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				c.flushes.Add(1)
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err == nil {
				c.compactions.Add(1)
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
		Flushes:               s.events.flushes.Load(),
		Compactions:           s.events.compactions.Load(),
	}
	threshold := s.l0CompactionThreshold
	if threshold <= 0 {
		threshold = 4
	}
	t.Heat = max(float64(t.L0Sublevels)/float64(threshold), float64(t.CompactionDebt)/float64(debtThreshold))
	return t, nil
}
