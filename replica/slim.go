package replica

import (
	"fmt"
	"math"

	"github.com/corral-db/corral/zab"
)

// Slim entries: with a log store that is a Slimmer, the in-memory log
// keeps the small form of each entry that is durable in the store and
// applied, and rebuilds the entry whenever zab reads it (slimLog). The
// rules the simulator checks (sim/disk.go slims every entry it can):
//
//   - only entries the store holds durably are slimmed: d.durable is the
//     last zxid a Sync covered in the current generation, lowered when a
//     Ready truncates the log or installs a snapshot;
//   - only applied entries are slimmed, so apply (Ready.Committed, read
//     from the in-memory log) never waits for the store to rebuild one;
//   - zab never sees a slim form: slimLog.Entries rebuilds every entry
//     into a slice of its own. The in-memory log's array is changed in
//     place (SetData), so a slice of it handed out could change under a
//     message in flight.

// slimLog is the in-memory log as zab reads it when the log store is a
// Slimmer.
type slimLog struct {
	ms *zab.MemoryStorage
	sl Slimmer
	// sendSlim hands the slim forms out as they are (Breaks.SendSlim).
	sendSlim bool
}

func (s *slimLog) HardState() (zab.HardState, error)  { return s.ms.HardState() }
func (s *slimLog) Snapshot() (zab.Snapshot, error)    { return s.ms.Snapshot() }
func (s *slimLog) LastZxid() (zab.Zxid, error)        { return s.ms.LastZxid() }
func (s *slimLog) Floor(z zab.Zxid) (zab.Zxid, error) { return s.ms.Floor(z) }

// Entries implements zab.Storage: the in-memory log's entries, each
// rebuilt (Slimmer.Expand), in a new slice, at most maxBytes of rebuilt
// data (at least one entry).
func (s *slimLog) Entries(after, upTo zab.Zxid, maxBytes uint64) ([]zab.Entry, error) {
	// The slim forms are no larger than the entries, so maxBytes of them
	// hold at least the entries that fit rebuilt.
	ents, err := s.ms.Entries(after, upTo, maxBytes)
	if err != nil || len(ents) == 0 || s.sendSlim {
		return ents, err
	}
	out := make([]zab.Entry, 0, len(ents))
	var size uint64
	for _, e := range ents {
		data, err := s.sl.Expand(e)
		if err != nil {
			return nil, fmt.Errorf("replica: rebuilding log entry %v: %w", e.Zxid, err)
		}
		size += uint64(len(data))
		if len(out) > 0 && size > maxBytes {
			break
		}
		out = append(out, zab.Entry{Zxid: e.Zxid, Data: data})
	}
	return out, nil
}

// slimDurableLocked lowers the durable mark to z: the Ready being processed
// truncates the log or installs a snapshot at z. Under mu.
func (d *Driver) slimDurableLocked(z zab.Zxid) {
	d.durable = min(d.durable, z)
	d.slimmed = min(d.slimmed, z)
}

// slim replaces the entries in (d.slimmed, min(durable, applied)] of the
// in-memory log by their slim forms. Called by Process (pmu held, mu not),
// the only writer of SetData; mu is taken to read and to write the log,
// and Slim runs without it.
func (d *Driver) slim() {
	if d.slimmer == nil {
		return
	}
	d.mu.Lock()
	to := min(d.durable, d.sm.Applied())
	from := d.slimmed
	var ents []zab.Entry
	if to > from {
		// A slice of the log's array: only this goroutine changes its
		// entries (SetData), and Compact and Truncate move the log to a
		// new array.
		ents, _ = d.ms.Entries(from, to, math.MaxUint64)
	}
	d.mu.Unlock()
	if len(ents) == 0 {
		return
	}
	type slimmed struct {
		z    zab.Zxid
		data []byte
	}
	out := make([]slimmed, 0, len(ents))
	for _, e := range ents {
		if data, ok := d.slimmer.Slim(e); ok {
			out = append(out, slimmed{e.Zxid, data})
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.slimmed != from || d.durable < to {
		// A truncation or a snapshot came in between: leave it to the
		// next round.
		return
	}
	for _, s := range out {
		d.ms.SetData(s.z, s.data)
	}
	d.slimmed = to
}
