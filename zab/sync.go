package zab

import "fmt"

// Synchronization: the leader brings a learner's log in line with its own
// history by DIFF, TRUNC or SNAP, as ZooKeeper's syncFollower does, then
// sends NEWLEADER. Followers are synchronized to the leader's whole log
// (committed or not) and then receive every later proposal on the same
// session; observers are synchronized to the commit point and then receive
// committed entries only (INFORM).
//
// Where the learner's last zxid F stands against the leader's log:
//   - F is in the log: DIFF, the entries after F.
//   - F is not (the learner has entries of a failed leader that the new
//     history lacks): TRUNC to the largest zxid of the log below F, then
//     DIFF. That zxid is in the learner's log too: two logs holding the
//     same zxid agree up to it, and no history an election can pick holds
//     an entry the learner lacks below its own entries' epoch (see
//     docs/design/zab.md). Unlike ZooKeeper, TRUNC may cross an epoch.
//   - The leader's log no longer reaches back that far: SNAP, its newest
//     snapshot, then the entries after it.

func (n *Node) syncPeer(p *peer) {
	l := n.lead
	if p.observer && !l.established {
		return // observers get committed state only: wait for establishment
	}
	target := n.log.lastZxid()
	if p.observer {
		target = n.commit
	}
	if err := n.sendSync(p, target); err != nil {
		n.logger.Error("zab: cannot synchronize learner", "peer", p.id, "err", err)
		delete(l.peers, p.id)
		return
	}
	p.stage = stageSyncSent
	p.syncEpoch = l.epoch
	p.syncZxid = target
	p.informed = target
	p.ack = 0
	n.send(Message{Type: MsgNewLeader, To: p.id, Session: p.session, Epoch: l.epoch, Zxid: target})
	if l.roll != nil && !p.observer {
		n.send(Message{Type: MsgEpochRoll, To: p.id, Session: p.session, Epoch: l.roll.epoch})
	}
}

func (n *Node) sendSync(p *peer, target Zxid) error {
	mode, from, err := n.syncPoint(p.lastZxid, target)
	if err != nil {
		return err
	}
	m := Message{Type: MsgSync, To: p.id, Session: p.session, Sync: mode, Zxid: from}
	if mode == SyncSnap {
		snap, err := n.cfg.Storage.Snapshot()
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if snap.Zxid > target {
			return fmt.Errorf("snapshot %v beyond sync target %v", snap.Zxid, target)
		}
		m.Zxid = snap.Zxid
		snap.Learner = p.lastZxid
		m.Snapshot = &snap
		cp := n.configAt(snap.Zxid)
		cm := cp.m.Clone()
		m.Membership, m.MembershipZxid = &cm, cp.zxid
		from = snap.Zxid
	}
	n.send(m)
	for from < target {
		ents, err := n.log.entries(from, target, n.cfg.MaxBatchBytes)
		if err != nil {
			return fmt.Errorf("entries after %v: %w", from, err)
		}
		if len(ents) == 0 {
			return fmt.Errorf("no entries in (%v, %v]", from, target)
		}
		n.send(Message{Type: MsgProposal, To: p.id, Session: p.session, Prev: from, Entries: ents})
		from = ents[len(ents)-1].Zxid
	}
	return nil
}

// syncPoint chooses how to bring a learner whose last zxid is f to target.
func (n *Node) syncPoint(f, target Zxid) (SyncMode, Zxid, error) {
	fl, err := n.log.floor(f)
	if isCompacted(err) {
		return SyncSnap, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if fl == f {
		if f <= target {
			return SyncDiff, f, nil
		}
		// An observer ahead of the commit point: drop the uncommitted tail.
		return SyncTrunc, target, nil
	}
	t, err := n.log.floor(f - 1)
	if isCompacted(err) {
		return SyncSnap, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return SyncTrunc, min(t, target), nil
}

// learnerSync handles the leader's SYNC header.
func (n *Node) learnerSync(m Message) error {
	switch m.Sync {
	case SyncDiff:
		if m.Zxid != n.log.lastZxid() {
			n.reconnect("DIFF from another point")
			return nil
		}
	case SyncTrunc:
		if m.Zxid > n.log.lastZxid() {
			n.reconnect("TRUNC beyond the log")
			return nil
		}
		if m.Zxid < n.commit || m.Zxid < n.applying {
			n.logger.Error("zab: leader asks to truncate committed entries", "trunc", m.Zxid, "commit", n.commit)
			n.becomeLooking()
			return fmt.Errorf("%w: TRUNC to %v below commit %v", ErrDiverged, m.Zxid, max(n.commit, n.applying))
		}
		if err := n.log.truncate(m.Zxid); err != nil {
			n.becomeLooking()
			return fmt.Errorf("%w: TRUNC to %v: %v", ErrDiverged, m.Zxid, err)
		}
		n.truncateConfigs(m.Zxid)
		n.persisted = min(n.persisted, m.Zxid)
	case SyncSnap:
		if m.Snapshot == nil || m.Snapshot.Zxid != m.Zxid {
			n.reconnect("SNAP without a snapshot")
			return nil
		}
		if m.Zxid < n.commit || m.Zxid < n.applying {
			n.logger.Error("zab: leader snapshot older than our commit", "snap", m.Zxid, "commit", n.commit)
			n.becomeLooking()
			return fmt.Errorf("%w: SNAP at %v below commit %v", ErrDiverged, m.Zxid, max(n.commit, n.applying))
		}
		n.log.installSnapshot(*m.Snapshot)
		if m.Membership != nil {
			n.resetConfigs(*m.Membership, m.MembershipZxid)
		}
		// The snapshot holds committed state only; installing it is durable.
		n.persisted = m.Zxid
		n.commit = m.Zxid
		n.applying = m.Zxid
	default:
		n.reconnect("unknown sync mode")
		return nil
	}
	n.learn.stage = lsSyncing
	n.learn.stepStart = n.now
	return nil
}
