package replica

import (
	"errors"
	"fmt"

	"github.com/corral-db/corral/zab"
)

// Process handles every Ready the node has, in the order zab.Ready
// documents, and returns the first error that stops this member (a
// failed disk); the caller stops the member then. Calls are serialised
// (pmu): the node loop's and Drive's.
func (d *Driver) Process() error {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return d.processLocked(byLoop)
}

// Kick processes on the caller's goroutine if no other Process runs, and
// otherwise wakes the node loop, which processes after that one. An
// owner that proposed (ProposeWithQuiet) calls it to hand its proposal
// to the log writer without waking the node loop in between.
func (d *Driver) Kick() error {
	if !d.pmu.TryLock() {
		d.signal()
		return nil
	}
	defer d.pmu.Unlock()
	return d.processLocked(byLoop)
}

// processor is who runs Process, which says how the log work it queues
// is handed on.
type processor uint8

const (
	// byLoop: the node loop, or an owner (Kick); it wakes the log writer
	// and waits for room in its queue.
	byLoop processor = iota
	// byDrive: Drive, which writes the entries itself next (quiet).
	byDrive
	// byLogWriter: the log goroutine of a group of one, after a sync
	// (RunLog): it wakes itself for its next round and never waits for
	// room in the queue it drains.
	byLogWriter
)

// processLocked is Process; the caller holds pmu.
func (d *Driver) processLocked(by processor) error {
	for {
		d.mu.Lock()
		d.flushProgressLocked()
		if !d.node.HasReady() {
			d.mu.Unlock()
			return nil
		}
		rd := d.node.Ready()
		if rd.Empty() {
			// zab could not read what it has to hand out (it logged why).
			d.mu.Unlock()
			return nil
		}
		if rd.Truncate != nil || rd.Snapshot != nil {
			d.gen++
		}
		if rd.Truncate != nil {
			d.slimDurableLocked(*rd.Truncate)
		}
		if rd.Snapshot != nil {
			d.slimDurableLocked(rd.Snapshot.Zxid)
		}
		gen := d.gen
		prev := d.soft
		if rd.SoftState != nil {
			d.soft = *rd.SoftState
		}
		d.mu.Unlock()

		if err := d.handle(rd, gen, prev, by); err != nil {
			return err
		}
		d.slim()

		d.mu.Lock()
		d.node.RecycleMessages(rd.Messages)
		d.node.Advance(rd)
		if len(rd.Entries) > 0 && (d.diskless || d.cfg.Breaks.AckBeforeDurable) {
			// Diskless: a proposal is durable once in memory.
			d.node.Persisted(rd.Entries[len(rd.Entries)-1].Zxid)
		}
		var released zab.Zxid
		if d.solo && !d.diskless && len(rd.Committed) > 0 {
			// No learner will ask for these entries and the log store
			// holds them: a group of one keeps in memory only what is
			// not applied yet. (Diskless keeps its log for checkpoints.)
			z := rd.Committed[len(rd.Committed)-1].Zxid
			if err := d.ms.Compact(zab.Snapshot{Zxid: z}); err != nil && !errors.Is(err, zab.ErrCompacted) {
				d.log.Debug("log not cut", "zxid", z, "err", err)
			} else {
				released = z
			}
		}
		d.mu.Unlock()
		if released != 0 && d.cfg.Released != nil && !d.cfg.Breaks.AckBeforeDurable {
			// Committed means Persisted, which came after the log store
			// appended them; applied and cut, nothing holds them now.
			d.cfg.Released(released)
		}
	}
}

// handle does what one Ready asks, without holding mu.
func (d *Driver) handle(rd zab.Ready, gen uint64, prev zab.SoftState, by processor) error {
	if rd.SoftState != nil {
		if err := d.softChanged(prev, *rd.SoftState); err != nil {
			return err
		}
	}
	if rd.Snapshot != nil {
		if err := d.installSnapshot(*rd.Snapshot); err != nil {
			return err
		}
	}
	if rd.Truncate != nil {
		d.mu.Lock()
		err := d.ms.Truncate(*rd.Truncate)
		d.mu.Unlock()
		if err != nil {
			return fmt.Errorf("replica: truncating the in-memory log: %w", err)
		}
		if !d.diskless {
			if err := d.truncateLog(*rd.Truncate); err != nil {
				return fmt.Errorf("replica: truncating the log: %w", err)
			}
		}
	}
	if len(rd.Entries) > 0 {
		if d.cfg.OnAppend != nil {
			d.cfg.OnAppend(rd.Entries)
		}
		d.mu.Lock()
		err := d.ms.Append(rd.Entries)
		d.mu.Unlock()
		if err != nil {
			return fmt.Errorf("replica: appending to the in-memory log: %w", err)
		}
		if !d.diskless {
			d.lq.push(logOp{entries: rd.Entries, gen: gen}, by != byDrive, by != byLogWriter)
			d.sched.wrote(len(rd.Entries), d.recordBytes(rd.Entries), d.env.Clock.Now())
		}
	}
	if rd.HardState != nil {
		if err := d.env.HardState.SaveHardState(*rd.HardState); err != nil {
			return fmt.Errorf("replica: writing the epochs: %w", err)
		}
		d.mu.Lock()
		d.ms.SetHardState(*rd.HardState)
		d.mu.Unlock()
	}
	if len(rd.Messages) > 0 {
		d.mu.Lock()
		d.attachSnapshotsLocked(rd.Messages)
		d.mu.Unlock()
		d.env.Send(rd.Messages)
	}
	if len(rd.Committed) > 0 {
		// Entries a snapshot already covers (a SNAP installed beyond its
		// zxid) are not applied twice.
		ents := rd.Committed
		applied := d.sm.Applied()
		for len(ents) > 0 && ents[0].Zxid <= applied {
			ents = ents[1:]
		}
		if len(ents) > 0 {
			if err := d.sm.Apply(ents); err != nil {
				return fmt.Errorf("replica: apply: %w", err)
			}
			if d.diskless {
				d.sched.wrote(len(ents), entryBytes(ents), d.env.Clock.Now())
			}
		}
	}
	return nil
}

// softChanged runs when the role, phase, leader, epoch or recovering flag
// changed. Diskless: entering election is the thesis's checkpoint (losing
// the leader or the quorum): a complete snapshot before this member takes
// part, before the Ready's messages (its votes) leave.
func (d *Driver) softChanged(prev, cur zab.SoftState) error {
	d.log.Info("zab state", "state", cur.State, "phase", cur.Phase, "leader", cur.Leader, "epoch", cur.Epoch, "recovering", cur.Recovering)
	if d.diskless && cur.State == zab.StateLooking && prev.State != zab.StateLooking {
		if err := d.Checkpoint(); err != nil {
			d.log.Error("checkpoint failed", "err", err)
		}
	}
	if d.diskless && cur.State != zab.StateLooking && prev.State == zab.StateLooking {
		// Joining (or leading) means acknowledging what no checkpoint
		// holds: the checkpoint no longer covers this member.
		if err := d.env.Checkpoints.Invalidate(); err != nil {
			return fmt.Errorf("replica: invalidating the checkpoint: %w", err)
		}
	}
	if d.cfg.OnSoftState != nil {
		d.cfg.OnSoftState(prev, cur)
	}
	return nil
}

// entryBytes is the size of the entries' data together.
// recordBytes is what the log store's records of ents hold: their data,
// or what the store weighs them (Weigher).
func (d *Driver) recordBytes(ents []zab.Entry) int64 {
	if d.weigher == nil {
		return entryBytes(ents)
	}
	var n int64
	for _, e := range ents {
		n += d.weigher.Weight(e)
	}
	return n
}

func entryBytes(ents []zab.Entry) int64 {
	var n int64
	for _, e := range ents {
		n += int64(len(e.Data))
	}
	return n
}
