package zab

import "fmt"

// RestoreSnapshot tells the established leader of a group of one
// (Config.KeepEpoch) that its driver replaced the whole state with a
// snapshot at z, written durably, outside the log: an operator's restore.
// Every entry of the log must be committed and applied, and z at least
// NextZxid. The log becomes the snapshot alone, and proposals go on after
// z; when z is in a later epoch, the node moves to that epoch (the next
// Ready carries the HardState), so zxids never go back.
func (n *Node) RestoreSnapshot(z Zxid) error {
	next, err := n.NextZxid()
	if err != nil {
		return err
	}
	switch {
	case !n.cfg.KeepEpoch:
		return fmt.Errorf("zab: a snapshot is restored only into a group of one (KeepEpoch)")
	case n.inflight || n.log.hasUnstable() || n.log.overlay():
		return fmt.Errorf("zab: restoring a snapshot with a Ready in flight")
	case n.commit != n.log.lastZxid() || n.applied != n.commit:
		return fmt.Errorf("zab: restoring a snapshot with entries not applied (commit %v, applied %v, last %v)",
			n.commit, n.applied, n.log.lastZxid())
	case z < next:
		return fmt.Errorf("zab: restored snapshot at %v, before the next zxid %v", z, next)
	case z.Counter() >= n.cfg.MaxCounter:
		return fmt.Errorf("zab: restored snapshot at %v, at the end of its epoch", z)
	}
	n.log.mem = nil
	n.log.inflight = 0
	n.log.stableLast = z
	n.commit, n.applying, n.applied = z, z, z
	n.persisted = max(n.persisted, z)
	l := n.lead
	if e := z.Epoch(); e > l.epoch {
		l.epoch, n.epoch = e, e
		n.hs.AcceptedEpoch, n.hs.CurrentEpoch = e, e
	}
	l.initZxid = z
	l.next = z.Counter() + 1
	return nil
}
