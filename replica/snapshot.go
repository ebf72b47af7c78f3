package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/corral-db/corral/zab"
)

// maxExtraLog bounds the log a diskless member keeps before its newest
// snapshot (cutLogLocked).
const maxExtraLog = 64 << 20

// MaybeSnapshot takes a snapshot if one is due (scheduler) and cuts the
// log to it. Run's snapshot goroutine calls it every few milliseconds;
// the simulator calls it at steps of its own clock. It reports whether
// it took one.
func (d *Driver) MaybeSnapshot(ctx context.Context) (bool, error) {
	start := d.env.Clock.Now()
	kind, ok := d.sched.due(start)
	if !ok {
		return false, nil
	}
	d.sched.start(kind)
	z, err := d.sm.Snapshot(ctx)
	end := d.env.Clock.Now()
	d.sched.finish(end, end.Sub(start))
	if err != nil {
		return false, fmt.Errorf("replica: snapshot: %w", err)
	}
	d.log.Info("snapshot written", "zxid", z, "took", end.Sub(start), "idle", kind == snapIdle)
	if kind == snapBusy {
		d.mu.Lock()
		d.cutLogLocked(z)
		d.mu.Unlock()
	}
	if d.cfg.OnSnapshot != nil {
		d.cfg.OnSnapshot(z, kind == snapBusy)
	}
	return true, nil
}

// CutLog cuts the log at a busy snapshot at z that the owner took itself
// (an owner that schedules its own snapshots instead of MaybeSnapshot).
func (d *Driver) CutLog(z zab.Zxid) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cutLogLocked(z)
}

// PrevBusySnapshot returns the busy snapshot a diskless member's log is
// kept back to (the one the next busy snapshot cuts at).
func (d *Driver) PrevBusySnapshot() zab.Zxid {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.prevSnap
}

// cutLogLocked drops the in-memory log up to a busy snapshot just taken
// at z; a learner further behind gets a snapshot (SNAP).
//
// Diskless: up to the busy snapshot before it instead, while what lies
// between the two is at most maxExtraLog bytes. A diskless member
// restarts from its own newest snapshot (it has no log), which is behind
// the leader's newest by up to a snapshot interval; with the log cut at
// the leader's newest it would need the whole state (SNAP). One more
// interval of log lets it catch up by DIFF. Idle snapshots do not count
// here (scheduler): they come after as few as IdleMin writes, and counted
// they moved the cut past a crashed member's snapshot after one busy and
// one idle snapshot.
//
// The cut never passes what the state machine holds durably (below it,
// only the log keeps the entries), nor what zab has handed out to apply:
// after a SNAP whose image reflects a later zxid than it names, the
// entries in between are still to come through Ready.Committed (the
// driver skips them), and zab must still be able to read them.
func (d *Driver) cutLogLocked(z zab.Zxid) {
	at := min(z, d.sm.Durable(), d.node.Status().Applied)
	if d.diskless && !d.cfg.Breaks.CutAtNewest {
		prev := d.prevSnap
		d.prevSnap = at
		if prev < at && d.logBytesLocked(prev, at) <= maxExtraLog {
			at = prev
		}
	}
	if err := d.ms.Compact(zab.Snapshot{Zxid: at}); err != nil && !errors.Is(err, zab.ErrCompacted) {
		d.log.Debug("log not cut", "zxid", at, "err", err)
	}
}

// logBytesLocked is the size of the in-memory log's entries in (after,
// upTo], or more than maxExtraLog if the log no longer holds them all.
func (d *Driver) logBytesLocked(after, upTo zab.Zxid) int {
	ents, err := d.ms.Entries(after, upTo, math.MaxUint64)
	if err != nil {
		return maxExtraLog + 1
	}
	n := 0
	for _, e := range ents {
		n += len(e.Data)
	}
	return n
}

// attachSnapshotsLocked fills in the bytes of SNAP messages: the state
// machine's image (the in-memory log keeps no snapshot data). The image
// may reflect a later zxid than the message names; the learner skips the
// entries it covers.
func (d *Driver) attachSnapshotsLocked(msgs []zab.Message) {
	for i := range msgs {
		sn := msgs[i].Snapshot
		if sn == nil || sn.Data != nil {
			continue
		}
		var data []byte
		err := d.whileSyncing(msgs[i].To, func() error {
			var err error
			if d.env.SnapshotImage != nil {
				data, err = d.env.SnapshotImage(sn.Zxid)
				return err
			}
			var b bytes.Buffer
			z, err := d.sm.WriteSnapshot(context.Background(), &b)
			if err == nil && z < sn.Zxid {
				err = fmt.Errorf("image at %v is older than the log's cut %v", z, sn.Zxid)
			}
			data = b.Bytes()
			return err
		})
		if err != nil {
			d.log.Error("cannot send a snapshot to a learner", "to", msgs[i].To, "zxid", sn.Zxid, "err", err)
			continue
		}
		msgs[i].Snapshot = &zab.Snapshot{Zxid: sn.Zxid, Data: data, Learner: sn.Learner}
	}
}

// installSnapshot replaces the state with the leader's image (SNAP),
// durably, and cuts the log to it, before anything after it is appended.
func (d *Driver) installSnapshot(sn zab.Snapshot) error {
	d.mu.Lock()
	leader := d.node.Status().Leader
	d.mu.Unlock()
	// The leader hears nothing else from this member until the install
	// is done: tell it the sync is moving (progress.go).
	var z zab.Zxid
	err := d.whileSyncing(leader, func() error {
		var err error
		z, err = d.sm.InstallSnapshot(context.Background(), bytes.NewReader(sn.Data))
		return err
	})
	if err != nil {
		return fmt.Errorf("replica: installing the leader's snapshot: %w", err)
	}
	if z < sn.Zxid {
		return fmt.Errorf("replica: the leader's snapshot reflects %v, below %v", z, sn.Zxid)
	}
	d.mu.Lock()
	d.ms.ApplySnapshot(zab.Snapshot{Zxid: sn.Zxid})
	d.prevSnap = sn.Zxid
	d.snapInstalls++
	d.mu.Unlock()
	if !d.diskless {
		if err := d.truncateLog(sn.Zxid); err != nil {
			return fmt.Errorf("replica: cutting the log to the snapshot: %w", err)
		}
	}
	d.log.Info("installed the leader's snapshot", "zxid", sn.Zxid, "reflects", z)
	return nil
}

// Checkpoint makes this member's disk complete (diskless): the state and
// every log entry after it. The driver writes one when the member enters
// election; the owner calls it at orderly shutdown.
//
// A recovering member writes none: restored from a fuzzy snapshot, it
// holds an unknown prefix of what it acknowledged before it crashed until
// a leader has synchronized it, and a checkpoint would make it restart
// complete, as a voter that lacks acknowledged writes (the simulator found
// a 7-server run that lost a committed write that way).
func (d *Driver) Checkpoint() error {
	if !d.diskless {
		return nil
	}
	d.mu.Lock()
	recovering := d.node.Status().Recovering
	d.mu.Unlock()
	if recovering {
		d.log.Info("no checkpoint: this member is recovering and not yet synchronized by a leader")
		return nil
	}
	return d.env.Checkpoints.Checkpoint(func(after zab.Zxid) ([]zab.Entry, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		last, _ := d.ms.LastZxid()
		if last <= after {
			return nil, nil
		}
		return d.zs.Entries(after, last, math.MaxUint64)
	})
}

// NextZxid returns the zxid the next proposal will get, or why there is
// none (zab.Node.NextZxid).
func (d *Driver) NextZxid() (zab.Zxid, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.node.NextZxid()
}

// Restored tells the driver of a group of one that its owner replaced the
// state machine's whole state with a snapshot at z, written durably: an
// operator's restore (zab.Node.RestoreSnapshot). The owner stops
// proposing and waits until everything proposed is applied, then writes
// the snapshot at z (at least NextZxid) and makes the state machine's
// Applied and Durable report z before it calls Restored. The in-memory
// log is cut to z and proposals go on after it; the log store keeps its
// older entries, which the snapshot covers.
func (d *Driver) Restored(z zab.Zxid) error {
	// No Ready is in flight between two Process calls.
	d.pmu.Lock()
	defer d.pmu.Unlock()
	d.mu.Lock()
	err := d.node.RestoreSnapshot(z)
	if err == nil {
		// A Persisted report for the entries before is stale.
		d.gen++
		d.slimDurableLocked(z)
		d.ms.ApplySnapshot(zab.Snapshot{Zxid: z})
		d.prevSnap = z
	}
	d.mu.Unlock()
	d.signal()
	return err
}
